from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.grant_in_permission import GrantInPermission

T = TypeVar("T", bound="GrantIn")


@_attrs_define
class GrantIn:
    """
    Attributes:
        user_id (str):
        permission (GrantInPermission):
    """

    user_id: str
    permission: GrantInPermission

    def to_dict(self) -> dict[str, Any]:
        user_id = self.user_id

        permission = self.permission.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "user_id": user_id,
                "permission": permission,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        user_id = d.pop("user_id")

        permission = GrantInPermission(d.pop("permission"))

        grant_in = cls(
            user_id=user_id,
            permission=permission,
        )

        return grant_in
