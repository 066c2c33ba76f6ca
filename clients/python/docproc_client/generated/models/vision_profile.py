from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="VisionProfile")


@_attrs_define
class VisionProfile:
    """An OpenAI-compatible chat endpoint with vision, and the vault key that pays for it.

    Attributes:
        base_url (str):
        model (str):
        secret_id (None | Unset | UUID):
        timeout_seconds (float | Unset):  Default: 60.0.
        max_images (int | Unset):  Default: 50.
    """

    base_url: str
    model: str
    secret_id: None | Unset | UUID = UNSET
    timeout_seconds: float | Unset = 60.0
    max_images: int | Unset = 50

    def to_dict(self) -> dict[str, Any]:
        base_url = self.base_url

        model = self.model

        secret_id: None | str | Unset
        if isinstance(self.secret_id, Unset):
            secret_id = UNSET
        elif isinstance(self.secret_id, UUID):
            secret_id = str(self.secret_id)
        else:
            secret_id = self.secret_id

        timeout_seconds = self.timeout_seconds

        max_images = self.max_images

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "base_url": base_url,
                "model": model,
            }
        )
        if secret_id is not UNSET:
            field_dict["secret_id"] = secret_id
        if timeout_seconds is not UNSET:
            field_dict["timeout_seconds"] = timeout_seconds
        if max_images is not UNSET:
            field_dict["max_images"] = max_images

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        base_url = d.pop("base_url")

        model = d.pop("model")

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

        timeout_seconds = d.pop("timeout_seconds", UNSET)

        max_images = d.pop("max_images", UNSET)

        vision_profile = cls(
            base_url=base_url,
            model=model,
            secret_id=secret_id,
            timeout_seconds=timeout_seconds,
            max_images=max_images,
        )

        return vision_profile
