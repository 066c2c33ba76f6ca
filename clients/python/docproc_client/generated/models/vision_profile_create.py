from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.vision_profile_create_provider import VisionProfileCreateProvider
from ..types import UNSET, Unset

T = TypeVar("T", bound="VisionProfileCreate")


@_attrs_define
class VisionProfileCreate:
    """
    Attributes:
        name (str):
        provider (VisionProfileCreateProvider):
        model (str):
        base_url (None | str | Unset):
        secret_id (None | Unset | UUID):
    """

    name: str
    provider: VisionProfileCreateProvider
    model: str
    base_url: None | str | Unset = UNSET
    secret_id: None | Unset | UUID = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        provider = self.provider.value

        model = self.model

        base_url: None | str | Unset
        if isinstance(self.base_url, Unset):
            base_url = UNSET
        else:
            base_url = self.base_url

        secret_id: None | str | Unset
        if isinstance(self.secret_id, Unset):
            secret_id = UNSET
        elif isinstance(self.secret_id, UUID):
            secret_id = str(self.secret_id)
        else:
            secret_id = self.secret_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "provider": provider,
                "model": model,
            }
        )
        if base_url is not UNSET:
            field_dict["base_url"] = base_url
        if secret_id is not UNSET:
            field_dict["secret_id"] = secret_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        provider = VisionProfileCreateProvider(d.pop("provider"))

        model = d.pop("model")

        def _parse_base_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        base_url = _parse_base_url(d.pop("base_url", UNSET))

        def _parse_secret_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                secret_id_type_0 = UUID(data)

                return secret_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        secret_id = _parse_secret_id(d.pop("secret_id", UNSET))

        vision_profile_create = cls(
            name=name,
            provider=provider,
            model=model,
            base_url=base_url,
            secret_id=secret_id,
        )

        return vision_profile_create
