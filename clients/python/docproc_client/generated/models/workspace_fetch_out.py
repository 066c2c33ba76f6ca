from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.workspace_entry_out import WorkspaceEntryOut


T = TypeVar("T", bound="WorkspaceFetchOut")


@_attrs_define
class WorkspaceFetchOut:
    """How to fetch what a render wrote for one file: short-lived links bound to the caller.

    Attributes:
        expires_at (datetime.datetime):
        entries (list[WorkspaceEntryOut]): The files written for it: the original, and its extracted text when written
            beside it; empty for an unpacked archive
        listing_url (None | str): An unpacked archive: GET it (same bearer token) for the listing of its members, each
            with its own link; null otherwise
    """

    expires_at: datetime.datetime
    entries: list[WorkspaceEntryOut]
    listing_url: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        expires_at = self.expires_at.isoformat()

        entries = []
        for entries_item_data in self.entries:
            entries_item = entries_item_data.to_dict()
            entries.append(entries_item)

        listing_url: None | str
        listing_url = self.listing_url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "expires_at": expires_at,
                "entries": entries,
                "listing_url": listing_url,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.workspace_entry_out import WorkspaceEntryOut

        d = dict(src_dict)
        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))

        entries = []
        _entries = d.pop("entries")
        for entries_item_data in _entries:
            entries_item = WorkspaceEntryOut.from_dict(entries_item_data)

            entries.append(entries_item)

        def _parse_listing_url(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        listing_url = _parse_listing_url(d.pop("listing_url"))

        workspace_fetch_out = cls(
            expires_at=expires_at,
            entries=entries,
            listing_url=listing_url,
        )

        workspace_fetch_out.additional_properties = d
        return workspace_fetch_out

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
