from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.secret_kind import SecretKind
from ..models.visibility import Visibility
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.secret_create_value import SecretCreateValue


T = TypeVar("T", bound="SecretCreate")


@_attrs_define
class SecretCreate:
    """
    Attributes:
        name (str):
        kind (SecretKind):
        value (SecretCreateValue):
        visibility (Visibility | Unset):
        provider (None | str | Unset):
    """

    name: str
    kind: SecretKind
    value: SecretCreateValue
    visibility: Visibility | Unset = UNSET
    provider: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        kind = self.kind.value

        value = self.value.to_dict()

        visibility: str | Unset = UNSET
        if not isinstance(self.visibility, Unset):
            visibility = self.visibility.value

        provider: None | str | Unset
        if isinstance(self.provider, Unset):
            provider = UNSET
        else:
            provider = self.provider

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "kind": kind,
                "value": value,
            }
        )
        if visibility is not UNSET:
            field_dict["visibility"] = visibility
        if provider is not UNSET:
            field_dict["provider"] = provider

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.secret_create_value import SecretCreateValue

        d = dict(src_dict)
        name = d.pop("name")

        kind = SecretKind(d.pop("kind"))

        value = SecretCreateValue.from_dict(d.pop("value"))

        _visibility = d.pop("visibility", UNSET)
        visibility: Visibility | Unset
        if isinstance(_visibility, Unset):
            visibility = UNSET
        else:
            visibility = Visibility(_visibility)

        def _parse_provider(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        provider = _parse_provider(d.pop("provider", UNSET))

        secret_create = cls(
            name=name,
            kind=kind,
            value=value,
            visibility=visibility,
            provider=provider,
        )

        return secret_create
