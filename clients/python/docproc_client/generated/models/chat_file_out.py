from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.chat_file_out_file_type import ChatFileOutFileType
from ..models.file_type import FileType

T = TypeVar("T", bound="ChatFileOut")


@_attrs_define
class ChatFileOut:
    """The upload's answer: what the card shows.

    Attributes:
        file_kind (FileType):
        id (UUID):
        filename (str):
        mime_type (str):
        size (int):
        preview (None | str): First three lines of the extracted text (at most 240 characters); null for an image or a
            file no parser could read
        file_type (ChatFileOutFileType): The specification's classified type, one of eight
    """

    file_kind: FileType
    id: UUID
    filename: str
    mime_type: str
    size: int
    preview: None | str
    file_type: ChatFileOutFileType
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        file_kind = self.file_kind.value

        id = str(self.id)

        filename = self.filename

        mime_type = self.mime_type

        size = self.size

        preview: None | str
        preview = self.preview

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

        file_type = ChatFileOutFileType(d.pop("file_type"))

        chat_file_out = cls(
            file_kind=file_kind,
            id=id,
            filename=filename,
            mime_type=mime_type,
            size=size,
            preview=preview,
            file_type=file_type,
        )

        chat_file_out.additional_properties = d
        return chat_file_out

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
