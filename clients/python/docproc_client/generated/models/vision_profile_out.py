from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="VisionProfileOut")


@_attrs_define
class VisionProfileOut:
    """
    Attributes:
        id (UUID):
        name (str):
        provider (str):
        model (str):
        base_url (str):
        secret_id (None | UUID):
        organization_id (None | str):
        created_by (str):
        created_at (datetime.datetime):
    """

    id: UUID
    name: str
    provider: str
    model: str
    base_url: str
    secret_id: None | UUID
    organization_id: None | str
    created_by: str
    created_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        name = self.name

        provider = self.provider

        model = self.model

        base_url = self.base_url

        secret_id: None | str
        if isinstance(self.secret_id, UUID):
            secret_id = str(self.secret_id)
        else:
            secret_id = self.secret_id

        organization_id: None | str
        organization_id = self.organization_id

        created_by = self.created_by

        created_at = self.created_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "name": name,
                "provider": provider,
                "model": model,
                "base_url": base_url,
                "secret_id": secret_id,
                "organization_id": organization_id,
                "created_by": created_by,
                "created_at": created_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        name = d.pop("name")

        provider = d.pop("provider")

        model = d.pop("model")

        base_url = d.pop("base_url")

        def _parse_secret_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                secret_id_type_0 = UUID(data)

                return secret_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        secret_id = _parse_secret_id(d.pop("secret_id"))

        def _parse_organization_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        organization_id = _parse_organization_id(d.pop("organization_id"))

        created_by = d.pop("created_by")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        vision_profile_out = cls(
            id=id,
            name=name,
            provider=provider,
            model=model,
            base_url=base_url,
            secret_id=secret_id,
            organization_id=organization_id,
            created_by=created_by,
            created_at=created_at,
        )

        vision_profile_out.additional_properties = d
        return vision_profile_out

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
