from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="WorkspaceEntryOut")


@_attrs_define
class WorkspaceEntryOut:
    """One file to copy into the agent's workspace.

    Attributes:
        path (str): Where it goes in the workspace, e.g. `/uploads/3f2a1b9c-a.csv`
        size (int): Its size in bytes
        url (str): GET it (with the same bearer token) for the bytes; a path under the API's base URL, valid until
            `expires_at`
    """

    path: str
    size: int
    url: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        path = self.path

        size = self.size

        url = self.url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "path": path,
                "size": size,
                "url": url,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        path = d.pop("path")

        size = d.pop("size")

        url = d.pop("url")

        workspace_entry_out = cls(
            path=path,
            size=size,
            url=url,
        )

        workspace_entry_out.additional_properties = d
        return workspace_entry_out

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
