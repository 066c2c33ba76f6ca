from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="DocumentOut")


@_attrs_define
class DocumentOut:
    """
    Attributes:
        id (UUID):
        collection_name (str):
        knowledge_base_id (None | UUID):
        filename (str):
        filesize (int):
        filetype (str):
        status (str):
        error_message (None | str):
        chunk_count (int):
        source (str):
        source_path (None | str):
        content_hash (None | str):
        organizational_unit (None | str):
        has_file (bool):
        created_at (datetime.datetime):
        completed_at (datetime.datetime | None):
    """

    id: UUID
    collection_name: str
    knowledge_base_id: None | UUID
    filename: str
    filesize: int
    filetype: str
    status: str
    error_message: None | str
    chunk_count: int
    source: str
    source_path: None | str
    content_hash: None | str
    organizational_unit: None | str
    has_file: bool
    created_at: datetime.datetime
    completed_at: datetime.datetime | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        collection_name = self.collection_name

        knowledge_base_id: None | str
        if isinstance(self.knowledge_base_id, UUID):
            knowledge_base_id = str(self.knowledge_base_id)
        else:
            knowledge_base_id = self.knowledge_base_id

        filename = self.filename

        filesize = self.filesize

        filetype = self.filetype

        status = self.status

        error_message: None | str
        error_message = self.error_message

        chunk_count = self.chunk_count

        source = self.source

        source_path: None | str
        source_path = self.source_path

        content_hash: None | str
        content_hash = self.content_hash

        organizational_unit: None | str
        organizational_unit = self.organizational_unit

        has_file = self.has_file

        created_at = self.created_at.isoformat()

        completed_at: None | str
        if isinstance(self.completed_at, datetime.datetime):
            completed_at = self.completed_at.isoformat()
        else:
            completed_at = self.completed_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "collection_name": collection_name,
                "knowledge_base_id": knowledge_base_id,
                "filename": filename,
                "filesize": filesize,
                "filetype": filetype,
                "status": status,
                "error_message": error_message,
                "chunk_count": chunk_count,
                "source": source,
                "source_path": source_path,
                "content_hash": content_hash,
                "organizational_unit": organizational_unit,
                "has_file": has_file,
                "created_at": created_at,
                "completed_at": completed_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        collection_name = d.pop("collection_name")

        def _parse_knowledge_base_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                knowledge_base_id_type_0 = UUID(data)

                return knowledge_base_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        knowledge_base_id = _parse_knowledge_base_id(d.pop("knowledge_base_id"))

        filename = d.pop("filename")

        filesize = d.pop("filesize")

        filetype = d.pop("filetype")

        status = d.pop("status")

        def _parse_error_message(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error_message = _parse_error_message(d.pop("error_message"))

        chunk_count = d.pop("chunk_count")

        source = d.pop("source")

        def _parse_source_path(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        source_path = _parse_source_path(d.pop("source_path"))

        def _parse_content_hash(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        content_hash = _parse_content_hash(d.pop("content_hash"))

        def _parse_organizational_unit(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        organizational_unit = _parse_organizational_unit(d.pop("organizational_unit"))

        has_file = d.pop("has_file")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_completed_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                completed_at_type_0 = datetime.datetime.fromisoformat(data)

                return completed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        completed_at = _parse_completed_at(d.pop("completed_at"))

        document_out = cls(
            id=id,
            collection_name=collection_name,
            knowledge_base_id=knowledge_base_id,
            filename=filename,
            filesize=filesize,
            filetype=filetype,
            status=status,
            error_message=error_message,
            chunk_count=chunk_count,
            source=source,
            source_path=source_path,
            content_hash=content_hash,
            organizational_unit=organizational_unit,
            has_file=has_file,
            created_at=created_at,
            completed_at=completed_at,
        )

        document_out.additional_properties = d
        return document_out

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
