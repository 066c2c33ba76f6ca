from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ParsedPage")


@_attrs_define
class ParsedPage:
    """
    Attributes:
        page_num (int):
        chunks (list[str]):
        has_text (bool):
    """

    page_num: int
    chunks: list[str]
    has_text: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        page_num = self.page_num

        chunks = self.chunks

        has_text = self.has_text

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "page_num": page_num,
                "chunks": chunks,
                "has_text": has_text,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        page_num = d.pop("page_num")

        chunks = cast(list[str], d.pop("chunks"))

        has_text = d.pop("has_text")

        parsed_page = cls(
            page_num=page_num,
            chunks=chunks,
            has_text=has_text,
        )

        parsed_page.additional_properties = d
        return parsed_page

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
