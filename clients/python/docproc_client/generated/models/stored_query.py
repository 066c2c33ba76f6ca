from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.stored_query_relevant import StoredQueryRelevant


T = TypeVar("T", bound="StoredQuery")


@_attrs_define
class StoredQuery:
    """
    Attributes:
        id (str):
        text (str):
        relevant (StoredQueryRelevant):
    """

    id: str
    text: str
    relevant: StoredQueryRelevant
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        text = self.text

        relevant = self.relevant.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "text": text,
                "relevant": relevant,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.stored_query_relevant import StoredQueryRelevant

        d = dict(src_dict)
        id = d.pop("id")

        text = d.pop("text")

        relevant = StoredQueryRelevant.from_dict(d.pop("relevant"))

        stored_query = cls(
            id=id,
            text=text,
            relevant=relevant,
        )

        stored_query.additional_properties = d
        return stored_query

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
