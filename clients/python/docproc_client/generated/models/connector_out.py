from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.connector_out_config_schema import ConnectorOutConfigSchema


T = TypeVar("T", bound="ConnectorOut")


@_attrs_define
class ConnectorOut:
    """
    Attributes:
        name (str):
        title (str):
        description (str):
        config_schema (ConnectorOutConfigSchema):
        secret_kind (None | str):
        secret_required (bool):
        admin_only (bool):
        change_signal (str):
    """

    name: str
    title: str
    description: str
    config_schema: ConnectorOutConfigSchema
    secret_kind: None | str
    secret_required: bool
    admin_only: bool
    change_signal: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        title = self.title

        description = self.description

        config_schema = self.config_schema.to_dict()

        secret_kind: None | str
        secret_kind = self.secret_kind

        secret_required = self.secret_required

        admin_only = self.admin_only

        change_signal = self.change_signal

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "title": title,
                "description": description,
                "config_schema": config_schema,
                "secret_kind": secret_kind,
                "secret_required": secret_required,
                "admin_only": admin_only,
                "change_signal": change_signal,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.connector_out_config_schema import ConnectorOutConfigSchema

        d = dict(src_dict)
        name = d.pop("name")

        title = d.pop("title")

        description = d.pop("description")

        config_schema = ConnectorOutConfigSchema.from_dict(d.pop("config_schema"))

        def _parse_secret_kind(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        secret_kind = _parse_secret_kind(d.pop("secret_kind"))

        secret_required = d.pop("secret_required")

        admin_only = d.pop("admin_only")

        change_signal = d.pop("change_signal")

        connector_out = cls(
            name=name,
            title=title,
            description=description,
            config_schema=config_schema,
            secret_kind=secret_kind,
            secret_required=secret_required,
            admin_only=admin_only,
            change_signal=change_signal,
        )

        connector_out.additional_properties = d
        return connector_out

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
