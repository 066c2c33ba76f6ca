from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.settings_snapshot_ingestion_config import (
        SettingsSnapshotIngestionConfig,
    )


T = TypeVar("T", bound="SettingsSnapshot")


@_attrs_define
class SettingsSnapshot:
    """The base's settings a run searched with.

    Attributes:
        embedding_provider (str):
        embedding_model (str):
        embedding_dim (int):
        text_search_config (str):
        vector_type (str):
        search_default_mode (str):
        splitter_version (int):
        ingestion_config (SettingsSnapshotIngestionConfig):
    """

    embedding_provider: str
    embedding_model: str
    embedding_dim: int
    text_search_config: str
    vector_type: str
    search_default_mode: str
    splitter_version: int
    ingestion_config: SettingsSnapshotIngestionConfig
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        embedding_provider = self.embedding_provider

        embedding_model = self.embedding_model

        embedding_dim = self.embedding_dim

        text_search_config = self.text_search_config

        vector_type = self.vector_type

        search_default_mode = self.search_default_mode

        splitter_version = self.splitter_version

        ingestion_config = self.ingestion_config.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "embedding_provider": embedding_provider,
                "embedding_model": embedding_model,
                "embedding_dim": embedding_dim,
                "text_search_config": text_search_config,
                "vector_type": vector_type,
                "search_default_mode": search_default_mode,
                "splitter_version": splitter_version,
                "ingestion_config": ingestion_config,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.settings_snapshot_ingestion_config import (
            SettingsSnapshotIngestionConfig,
        )

        d = dict(src_dict)
        embedding_provider = d.pop("embedding_provider")

        embedding_model = d.pop("embedding_model")

        embedding_dim = d.pop("embedding_dim")

        text_search_config = d.pop("text_search_config")

        vector_type = d.pop("vector_type")

        search_default_mode = d.pop("search_default_mode")

        splitter_version = d.pop("splitter_version")

        ingestion_config = SettingsSnapshotIngestionConfig.from_dict(
            d.pop("ingestion_config")
        )

        settings_snapshot = cls(
            embedding_provider=embedding_provider,
            embedding_model=embedding_model,
            embedding_dim=embedding_dim,
            text_search_config=text_search_config,
            vector_type=vector_type,
            search_default_mode=search_default_mode,
            splitter_version=splitter_version,
            ingestion_config=ingestion_config,
        )

        settings_snapshot.additional_properties = d
        return settings_snapshot

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
