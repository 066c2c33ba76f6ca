from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.embedding_model_out import EmbeddingModelOut


T = TypeVar("T", bound="ServedModelsOut")


@_attrs_define
class ServedModelsOut:
    """
    Attributes:
        provider (str):
        base_url (str):
        confirmed (bool):
        models (list[EmbeddingModelOut]):
    """

    provider: str
    base_url: str
    confirmed: bool
    models: list[EmbeddingModelOut]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        provider = self.provider

        base_url = self.base_url

        confirmed = self.confirmed

        models = []
        for models_item_data in self.models:
            models_item = models_item_data.to_dict()
            models.append(models_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "provider": provider,
                "base_url": base_url,
                "confirmed": confirmed,
                "models": models,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.embedding_model_out import EmbeddingModelOut

        d = dict(src_dict)
        provider = d.pop("provider")

        base_url = d.pop("base_url")

        confirmed = d.pop("confirmed")

        models = []
        _models = d.pop("models")
        for models_item_data in _models:
            models_item = EmbeddingModelOut.from_dict(models_item_data)

            models.append(models_item)

        served_models_out = cls(
            provider=provider,
            base_url=base_url,
            confirmed=confirmed,
            models=models,
        )

        served_models_out.additional_properties = d
        return served_models_out

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
