from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.file_type import FileType
from ..models.history_file_out_file_type import HistoryFileOutFileType

T = TypeVar("T", bound="HistoryFileOut")


@_attrs_define
class HistoryFileOut:
    """
    Attributes:
        file_kind (FileType):
        file_id (UUID):
        filename (str):
        mime_type (str):
        size (int):
        mode (None | str):
        workspace_path (None | str):
        history (None | str): What the attachment added to the prompt when it was rendered; null when it was never
            rendered
        file_type (HistoryFileOutFileType): The specification's classified type, one of eight
    """

    file_kind: FileType
    file_id: UUID
    filename: str
    mime_type: str
    size: int
    mode: None | str
    workspace_path: None | str
    history: None | str
    file_type: HistoryFileOutFileType
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        file_kind = self.file_kind.value

        file_id = str(self.file_id)

        filename = self.filename

        mime_type = self.mime_type

        size = self.size

        mode: None | str
        mode = self.mode

        workspace_path: None | str
        workspace_path = self.workspace_path

        history: None | str
        history = self.history

        file_type = self.file_type.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "file_kind": file_kind,
                "file_id": file_id,
                "filename": filename,
                "mime_type": mime_type,
                "size": size,
                "mode": mode,
                "workspace_path": workspace_path,
                "history": history,
                "file_type": file_type,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        file_kind = FileType(d.pop("file_kind"))

        file_id = UUID(d.pop("file_id"))

        filename = d.pop("filename")

        mime_type = d.pop("mime_type")

        size = d.pop("size")

        def _parse_mode(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        mode = _parse_mode(d.pop("mode"))

        def _parse_workspace_path(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        workspace_path = _parse_workspace_path(d.pop("workspace_path"))

        def _parse_history(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        history = _parse_history(d.pop("history"))

        file_type = HistoryFileOutFileType(d.pop("file_type"))

        history_file_out = cls(
            file_kind=file_kind,
            file_id=file_id,
            filename=filename,
            mime_type=mime_type,
            size=size,
            mode=mode,
            workspace_path=workspace_path,
            history=history,
            file_type=file_type,
        )

        history_file_out.additional_properties = d
        return history_file_out

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
