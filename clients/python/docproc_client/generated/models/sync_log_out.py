from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="SyncLogOut")


@_attrs_define
class SyncLogOut:
    """
    Attributes:
        id (UUID):
        source_id (None | UUID):
        collection_name (str):
        mode (str):
        status (str):
        total_files (int):
        ingested (int):
        updated (int):
        skipped (int):
        failed (int):
        deleted (int):
        bytes_fetched (int):
        listing_complete (bool | None):
        error_message (None | str):
        started_at (datetime.datetime):
        finished_at (datetime.datetime | None):
    """

    id: UUID
    source_id: None | UUID
    collection_name: str
    mode: str
    status: str
    total_files: int
    ingested: int
    updated: int
    skipped: int
    failed: int
    deleted: int
    bytes_fetched: int
    listing_complete: bool | None
    error_message: None | str
    started_at: datetime.datetime
    finished_at: datetime.datetime | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        source_id: None | str
        if isinstance(self.source_id, UUID):
            source_id = str(self.source_id)
        else:
            source_id = self.source_id

        collection_name = self.collection_name

        mode = self.mode

        status = self.status

        total_files = self.total_files

        ingested = self.ingested

        updated = self.updated

        skipped = self.skipped

        failed = self.failed

        deleted = self.deleted

        bytes_fetched = self.bytes_fetched

        listing_complete: bool | None
        listing_complete = self.listing_complete

        error_message: None | str
        error_message = self.error_message

        started_at = self.started_at.isoformat()

        finished_at: None | str
        if isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "source_id": source_id,
                "collection_name": collection_name,
                "mode": mode,
                "status": status,
                "total_files": total_files,
                "ingested": ingested,
                "updated": updated,
                "skipped": skipped,
                "failed": failed,
                "deleted": deleted,
                "bytes_fetched": bytes_fetched,
                "listing_complete": listing_complete,
                "error_message": error_message,
                "started_at": started_at,
                "finished_at": finished_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        def _parse_source_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                source_id_type_0 = UUID(data)

                return source_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        source_id = _parse_source_id(d.pop("source_id"))

        collection_name = d.pop("collection_name")

        mode = d.pop("mode")

        status = d.pop("status")

        total_files = d.pop("total_files")

        ingested = d.pop("ingested")

        updated = d.pop("updated")

        skipped = d.pop("skipped")

        failed = d.pop("failed")

        deleted = d.pop("deleted")

        bytes_fetched = d.pop("bytes_fetched")

        def _parse_listing_complete(data: object) -> bool | None:
            if data is None:
                return data
            return cast(bool | None, data)

        listing_complete = _parse_listing_complete(d.pop("listing_complete"))

        def _parse_error_message(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error_message = _parse_error_message(d.pop("error_message"))

        started_at = datetime.datetime.fromisoformat(d.pop("started_at"))

        def _parse_finished_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)

                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        finished_at = _parse_finished_at(d.pop("finished_at"))

        sync_log_out = cls(
            id=id,
            source_id=source_id,
            collection_name=collection_name,
            mode=mode,
            status=status,
            total_files=total_files,
            ingested=ingested,
            updated=updated,
            skipped=skipped,
            failed=failed,
            deleted=deleted,
            bytes_fetched=bytes_fetched,
            listing_complete=listing_complete,
            error_message=error_message,
            started_at=started_at,
            finished_at=finished_at,
        )

        sync_log_out.additional_properties = d
        return sync_log_out

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
