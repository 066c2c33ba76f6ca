from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.parsed_page import ParsedPage


T = TypeVar("T", bound="ParsedPages")


@_attrs_define
class ParsedPages:
    """
    Attributes:
        document_id (UUID):
        knowledge_base_id (UUID):
        filename (str):
        pages (list[ParsedPage]):
    """

    document_id: UUID
    knowledge_base_id: UUID
    filename: str
    pages: list[ParsedPage]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        document_id = str(self.document_id)

        knowledge_base_id = str(self.knowledge_base_id)

        filename = self.filename

        pages = []
        for pages_item_data in self.pages:
            pages_item = pages_item_data.to_dict()
            pages.append(pages_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "document_id": document_id,
                "knowledge_base_id": knowledge_base_id,
                "filename": filename,
                "pages": pages,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.parsed_page import ParsedPage

        d = dict(src_dict)
        document_id = UUID(d.pop("document_id"))

        knowledge_base_id = UUID(d.pop("knowledge_base_id"))

        filename = d.pop("filename")

        pages = []
        _pages = d.pop("pages")
        for pages_item_data in _pages:
            pages_item = ParsedPage.from_dict(pages_item_data)

            pages.append(pages_item)

        parsed_pages = cls(
            document_id=document_id,
            knowledge_base_id=knowledge_base_id,
            filename=filename,
            pages=pages,
        )

        parsed_pages.additional_properties = d
        return parsed_pages

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
