from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.history_file_out import HistoryFileOut


T = TypeVar("T", bound="MessageAttachmentsOut")


@_attrs_define
class MessageAttachmentsOut:
    """
    Attributes:
        message_id (UUID):
        files (list[HistoryFileOut]):
    """

    message_id: UUID
    files: list[HistoryFileOut]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        message_id = str(self.message_id)

        files = []
        for files_item_data in self.files:
            files_item = files_item_data.to_dict()
            files.append(files_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "message_id": message_id,
                "files": files,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.history_file_out import HistoryFileOut

        d = dict(src_dict)
        message_id = UUID(d.pop("message_id"))

        files = []
        _files = d.pop("files")
        for files_item_data in _files:
            files_item = HistoryFileOut.from_dict(files_item_data)

            files.append(files_item)

        message_attachments_out = cls(
            message_id=message_id,
            files=files,
        )

        message_attachments_out.additional_properties = d
        return message_attachments_out

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
