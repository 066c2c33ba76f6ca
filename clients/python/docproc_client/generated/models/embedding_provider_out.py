from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.embedding_provider_out_credential import EmbeddingProviderOutCredential

if TYPE_CHECKING:
    from ..models.embedding_model_out import EmbeddingModelOut


T = TypeVar("T", bound="EmbeddingProviderOut")


@_attrs_define
class EmbeddingProviderOut:
    """
    Attributes:
        name (str):
        label (str):
        credential (EmbeddingProviderOutCredential):
        supports_base_url (bool):
        default_base_url (None | str):
        models (list[EmbeddingModelOut]):
    """

    name: str
    label: str
    credential: EmbeddingProviderOutCredential
    supports_base_url: bool
    default_base_url: None | str
    models: list[EmbeddingModelOut]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        label = self.label

        credential = self.credential.value

        supports_base_url = self.supports_base_url

        default_base_url: None | str
        default_base_url = self.default_base_url

        models = []
        for models_item_data in self.models:
            models_item = models_item_data.to_dict()
            models.append(models_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "label": label,
                "credential": credential,
                "supports_base_url": supports_base_url,
                "default_base_url": default_base_url,
                "models": models,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.embedding_model_out import EmbeddingModelOut

        d = dict(src_dict)
        name = d.pop("name")

        label = d.pop("label")

        credential = EmbeddingProviderOutCredential(d.pop("credential"))

        supports_base_url = d.pop("supports_base_url")

        def _parse_default_base_url(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        default_base_url = _parse_default_base_url(d.pop("default_base_url"))

        models = []
        _models = d.pop("models")
        for models_item_data in _models:
            models_item = EmbeddingModelOut.from_dict(models_item_data)

            models.append(models_item)

        embedding_provider_out = cls(
            name=name,
            label=label,
            credential=credential,
            supports_base_url=supports_base_url,
            default_base_url=default_base_url,
            models=models,
        )

        embedding_provider_out.additional_properties = d
        return embedding_provider_out

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
