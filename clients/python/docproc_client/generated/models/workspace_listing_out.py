from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.workspace_entry_out import WorkspaceEntryOut


T = TypeVar("T", bound="WorkspaceListingOut")


@_attrs_define
class WorkspaceListingOut:
    """``GET /workspace/listings/{link}``: an unpacked archive's members, one link each.

    Attributes:
        folder (str): The archive's folder in the workspace, e.g. `/uploads/3f2a1b9c-repo/`
        expires_at (datetime.datetime):
        entries (list[WorkspaceEntryOut]):
    """

    folder: str
    expires_at: datetime.datetime
    entries: list[WorkspaceEntryOut]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        folder = self.folder

        expires_at = self.expires_at.isoformat()

        entries = []
        for entries_item_data in self.entries:
            entries_item = entries_item_data.to_dict()
            entries.append(entries_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "folder": folder,
                "expires_at": expires_at,
                "entries": entries,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.workspace_entry_out import WorkspaceEntryOut

        d = dict(src_dict)
        folder = d.pop("folder")

        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))

        entries = []
        _entries = d.pop("entries")
        for entries_item_data in _entries:
            entries_item = WorkspaceEntryOut.from_dict(entries_item_data)

            entries.append(entries_item)

        workspace_listing_out = cls(
            folder=folder,
            expires_at=expires_at,
            entries=entries,
        )

        workspace_listing_out.additional_properties = d
        return workspace_listing_out

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
