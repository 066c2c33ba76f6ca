from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.secret_out_visibility import SecretOutVisibility

T = TypeVar("T", bound="SecretOut")


@_attrs_define
class SecretOut:
    """A secret's metadata. There is deliberately no field for the value.

    Attributes:
        id (UUID):
        name (str):
        kind (str):
        provider (None | str):
        visibility (SecretOutVisibility):
        owner_id (str):
        organization_id (None | str):
        created_at (datetime.datetime):
    """

    id: UUID
    name: str
    kind: str
    provider: None | str
    visibility: SecretOutVisibility
    owner_id: str
    organization_id: None | str
    created_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        name = self.name

        kind = self.kind

        provider: None | str
        provider = self.provider

        visibility = self.visibility.value

        owner_id = self.owner_id

        organization_id: None | str
        organization_id = self.organization_id

        created_at = self.created_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "name": name,
                "kind": kind,
                "provider": provider,
                "visibility": visibility,
                "owner_id": owner_id,
                "organization_id": organization_id,
                "created_at": created_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        name = d.pop("name")

        kind = d.pop("kind")

        def _parse_provider(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        provider = _parse_provider(d.pop("provider"))

        visibility = SecretOutVisibility(d.pop("visibility"))

        owner_id = d.pop("owner_id")

        def _parse_organization_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        organization_id = _parse_organization_id(d.pop("organization_id"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        secret_out = cls(
            id=id,
            name=name,
            kind=kind,
            provider=provider,
            visibility=visibility,
            owner_id=owner_id,
            organization_id=organization_id,
            created_at=created_at,
        )

        secret_out.additional_properties = d
        return secret_out

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
