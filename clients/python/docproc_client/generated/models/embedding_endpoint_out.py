from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="EmbeddingEndpointOut")


@_attrs_define
class EmbeddingEndpointOut:
    """
    Attributes:
        id (UUID):
        name (str):
        base_url (str):
        organization_id (None | str):
        created_at (datetime.datetime):
    """

    id: UUID
    name: str
    base_url: str
    organization_id: None | str
    created_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        name = self.name

        base_url = self.base_url

        organization_id: None | str
        organization_id = self.organization_id

        created_at = self.created_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "name": name,
                "base_url": base_url,
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

        base_url = d.pop("base_url")

        def _parse_organization_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        organization_id = _parse_organization_id(d.pop("organization_id"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        embedding_endpoint_out = cls(
            id=id,
            name=name,
            base_url=base_url,
            organization_id=organization_id,
            created_at=created_at,
        )

        embedding_endpoint_out.additional_properties = d
        return embedding_endpoint_out

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
