from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.ingestion_status_indexing_status import IngestionStatusIndexingStatus
from ..models.ingestion_status_vector_index import IngestionStatusVectorIndex
from ..types import UNSET, Unset

T = TypeVar("T", bound="IngestionStatus")


@_attrs_define
class IngestionStatus:
    """
    Attributes:
        indexing_status (IngestionStatusIndexingStatus):
        processing_count (int):
        indexed_count (int):
        failed_count (int):
        document_count (int):
        vector_index (IngestionStatusVectorIndex | Unset):  Default: IngestionStatusVectorIndex.READY.
        vector_rows_pending (int | Unset):  Default: 0.
    """

    indexing_status: IngestionStatusIndexingStatus
    processing_count: int
    indexed_count: int
    failed_count: int
    document_count: int
    vector_index: IngestionStatusVectorIndex | Unset = IngestionStatusVectorIndex.READY
    vector_rows_pending: int | Unset = 0
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        indexing_status = self.indexing_status.value

        processing_count = self.processing_count

        indexed_count = self.indexed_count

        failed_count = self.failed_count

        document_count = self.document_count

        vector_index: str | Unset = UNSET
        if not isinstance(self.vector_index, Unset):
            vector_index = self.vector_index.value

        vector_rows_pending = self.vector_rows_pending

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "indexing_status": indexing_status,
                "processing_count": processing_count,
                "indexed_count": indexed_count,
                "failed_count": failed_count,
                "document_count": document_count,
            }
        )
        if vector_index is not UNSET:
            field_dict["vector_index"] = vector_index
        if vector_rows_pending is not UNSET:
            field_dict["vector_rows_pending"] = vector_rows_pending

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        indexing_status = IngestionStatusIndexingStatus(d.pop("indexing_status"))

        processing_count = d.pop("processing_count")

        indexed_count = d.pop("indexed_count")

        failed_count = d.pop("failed_count")

        document_count = d.pop("document_count")

        _vector_index = d.pop("vector_index", UNSET)
        vector_index: IngestionStatusVectorIndex | Unset
        if isinstance(_vector_index, Unset):
            vector_index = UNSET
        else:
            vector_index = IngestionStatusVectorIndex(_vector_index)

        vector_rows_pending = d.pop("vector_rows_pending", UNSET)

        ingestion_status = cls(
            indexing_status=indexing_status,
            processing_count=processing_count,
            indexed_count=indexed_count,
            failed_count=failed_count,
            document_count=document_count,
            vector_index=vector_index,
            vector_rows_pending=vector_rows_pending,
        )

        ingestion_status.additional_properties = d
        return ingestion_status

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
