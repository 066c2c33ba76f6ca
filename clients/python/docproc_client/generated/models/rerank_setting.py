from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="RerankSetting")


@_attrs_define
class RerankSetting:
    """A base's reranker (docs/search.md, "Reranking"): ``local`` (the cross-encoder the
    deployment mounts; keyless), or ``cohere``, ``jina``, ``tei`` (a provider's ``/rerank``,
    paid with a vault ``api_key`` of that provider, checked as an embedding key is).

        Attributes:
            provider (str):
            model (None | str | Unset):
            secret_id (None | Unset | UUID):
            base_url (None | str | Unset):
    """

    provider: str
    model: None | str | Unset = UNSET
    secret_id: None | Unset | UUID = UNSET
    base_url: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        provider = self.provider

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model

        secret_id: None | str | Unset
        if isinstance(self.secret_id, Unset):
            secret_id = UNSET
        elif isinstance(self.secret_id, UUID):
            secret_id = str(self.secret_id)
        else:
            secret_id = self.secret_id

        base_url: None | str | Unset
        if isinstance(self.base_url, Unset):
            base_url = UNSET
        else:
            base_url = self.base_url

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "provider": provider,
            }
        )
        if model is not UNSET:
            field_dict["model"] = model
        if secret_id is not UNSET:
            field_dict["secret_id"] = secret_id
        if base_url is not UNSET:
            field_dict["base_url"] = base_url

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        provider = d.pop("provider")

        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))

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

        def _parse_base_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        base_url = _parse_base_url(d.pop("base_url", UNSET))

        rerank_setting = cls(
            provider=provider,
            model=model,
            secret_id=secret_id,
            base_url=base_url,
        )

        return rerank_setting
