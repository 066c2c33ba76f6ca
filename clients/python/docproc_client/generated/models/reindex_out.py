from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ReindexOut")


@_attrs_define
class ReindexOut:
    """``POST /kb/{id}/reindex``: what was queued; the progress is ``GET /kb/{id}/ingestion``.

    Attributes:
        knowledge_base_id (UUID):
        queued (int):
        skipped_no_original (int):
        skipped_unsupported (int):
    """

    knowledge_base_id: UUID
    queued: int
    skipped_no_original: int
    skipped_unsupported: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        knowledge_base_id = str(self.knowledge_base_id)

        queued = self.queued

        skipped_no_original = self.skipped_no_original

        skipped_unsupported = self.skipped_unsupported

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "knowledge_base_id": knowledge_base_id,
                "queued": queued,
                "skipped_no_original": skipped_no_original,
                "skipped_unsupported": skipped_unsupported,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        knowledge_base_id = UUID(d.pop("knowledge_base_id"))

        queued = d.pop("queued")

        skipped_no_original = d.pop("skipped_no_original")

        skipped_unsupported = d.pop("skipped_unsupported")

        reindex_out = cls(
            knowledge_base_id=knowledge_base_id,
            queued=queued,
            skipped_no_original=skipped_no_original,
            skipped_unsupported=skipped_unsupported,
        )

        reindex_out.additional_properties = d
        return reindex_out

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
