from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="CollectionDeletedOut")


@_attrs_define
class CollectionDeletedOut:
    """
    Attributes:
        collection_name (str):
        knowledge_bases_deleted (int):
        documents_deleted (int):
        table_dropped (bool):
        knowledge_bases_emptied (int | Unset):  Default: 0.
    """

    collection_name: str
    knowledge_bases_deleted: int
    documents_deleted: int
    table_dropped: bool
    knowledge_bases_emptied: int | Unset = 0
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        collection_name = self.collection_name

        knowledge_bases_deleted = self.knowledge_bases_deleted

        documents_deleted = self.documents_deleted

        table_dropped = self.table_dropped

        knowledge_bases_emptied = self.knowledge_bases_emptied

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "collection_name": collection_name,
                "knowledge_bases_deleted": knowledge_bases_deleted,
                "documents_deleted": documents_deleted,
                "table_dropped": table_dropped,
            }
        )
        if knowledge_bases_emptied is not UNSET:
            field_dict["knowledge_bases_emptied"] = knowledge_bases_emptied

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        collection_name = d.pop("collection_name")

        knowledge_bases_deleted = d.pop("knowledge_bases_deleted")

        documents_deleted = d.pop("documents_deleted")

        table_dropped = d.pop("table_dropped")

        knowledge_bases_emptied = d.pop("knowledge_bases_emptied", UNSET)

        collection_deleted_out = cls(
            collection_name=collection_name,
            knowledge_bases_deleted=knowledge_bases_deleted,
            documents_deleted=documents_deleted,
            table_dropped=table_dropped,
            knowledge_bases_emptied=knowledge_bases_emptied,
        )

        collection_deleted_out.additional_properties = d
        return collection_deleted_out

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
