from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.sync_log_out import SyncLogOut


T = TypeVar("T", bound="SyncLogPage")


@_attrs_define
class SyncLogPage:
    """
    Attributes:
        total (int):
        limit (int):
        offset (int):
        items (list[SyncLogOut]):
    """

    total: int
    limit: int
    offset: int
    items: list[SyncLogOut]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        total = self.total

        limit = self.limit

        offset = self.offset

        items = []
        for items_item_data in self.items:
            items_item = items_item_data.to_dict()
            items.append(items_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "total": total,
                "limit": limit,
                "offset": offset,
                "items": items,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.sync_log_out import SyncLogOut

        d = dict(src_dict)
        total = d.pop("total")

        limit = d.pop("limit")

        offset = d.pop("offset")

        items = []
        _items = d.pop("items")
        for items_item_data in _items:
            items_item = SyncLogOut.from_dict(items_item_data)

            items.append(items_item)

        sync_log_page = cls(
            total=total,
            limit=limit,
            offset=offset,
            items=items,
        )

        sync_log_page.additional_properties = d
        return sync_log_page

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
