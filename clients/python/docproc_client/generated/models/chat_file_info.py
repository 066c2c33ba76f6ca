from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.chat_file_info_file_type import ChatFileInfoFileType
from ..models.file_type import FileType

T = TypeVar("T", bound="ChatFileInfo")


@_attrs_define
class ChatFileInfo:
    """``GET /files/{id}/info``: the file's record (the ``ChatFile`` fields a client may read).

    Attributes:
        file_kind (FileType):
        id (UUID):
        filename (str):
        mime_type (str):
        size (int):
        preview (None | str): First three lines of the extracted text (at most 240 characters); null for an image or a
            file no parser could read
        organizational_unit (None | str):
        message_id (None | UUID):
        has_parsed_content (bool):
        created_at (datetime.datetime):
        file_type (ChatFileInfoFileType): The specification's classified type, one of eight
    """

    file_kind: FileType
    id: UUID
    filename: str
    mime_type: str
    size: int
    preview: None | str
    organizational_unit: None | str
    message_id: None | UUID
    has_parsed_content: bool
    created_at: datetime.datetime
    file_type: ChatFileInfoFileType
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        file_kind = self.file_kind.value

        id = str(self.id)

        filename = self.filename

        mime_type = self.mime_type

        size = self.size

        preview: None | str
        preview = self.preview

        organizational_unit: None | str
        organizational_unit = self.organizational_unit

        message_id: None | str
        if isinstance(self.message_id, UUID):
            message_id = str(self.message_id)
        else:
            message_id = self.message_id

        has_parsed_content = self.has_parsed_content

        created_at = self.created_at.isoformat()

        file_type = self.file_type.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "file_kind": file_kind,
                "id": id,
                "filename": filename,
                "mime_type": mime_type,
                "size": size,
                "preview": preview,
                "organizational_unit": organizational_unit,
                "message_id": message_id,
                "has_parsed_content": has_parsed_content,
                "created_at": created_at,
                "file_type": file_type,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        file_kind = FileType(d.pop("file_kind"))

        id = UUID(d.pop("id"))

        filename = d.pop("filename")

        mime_type = d.pop("mime_type")

        size = d.pop("size")

        def _parse_preview(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        preview = _parse_preview(d.pop("preview"))

        def _parse_organizational_unit(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        organizational_unit = _parse_organizational_unit(d.pop("organizational_unit"))

        def _parse_message_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                message_id_type_0 = UUID(data)

                return message_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        message_id = _parse_message_id(d.pop("message_id"))

        has_parsed_content = d.pop("has_parsed_content")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        file_type = ChatFileInfoFileType(d.pop("file_type"))

        chat_file_info = cls(
            file_kind=file_kind,
            id=id,
            filename=filename,
            mime_type=mime_type,
            size=size,
            preview=preview,
            organizational_unit=organizational_unit,
            message_id=message_id,
            has_parsed_content=has_parsed_content,
            created_at=created_at,
            file_type=file_type,
        )

        chat_file_info.additional_properties = d
        return chat_file_info

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
