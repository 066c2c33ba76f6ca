from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.settings_snapshot_ingestion_config import (
        SettingsSnapshotIngestionConfig,
    )
    from ..models.settings_snapshot_rerank_type_0 import SettingsSnapshotRerankType0


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
        rerank (None | SettingsSnapshotRerankType0 | Unset):
        hybrid_vector_weight (float | None | Unset):
    """

    embedding_provider: str
    embedding_model: str
    embedding_dim: int
    text_search_config: str
    vector_type: str
    search_default_mode: str
    splitter_version: int
    ingestion_config: SettingsSnapshotIngestionConfig
    rerank: None | SettingsSnapshotRerankType0 | Unset = UNSET
    hybrid_vector_weight: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.settings_snapshot_rerank_type_0 import SettingsSnapshotRerankType0

        embedding_provider = self.embedding_provider

        embedding_model = self.embedding_model

        embedding_dim = self.embedding_dim

        text_search_config = self.text_search_config

        vector_type = self.vector_type

        search_default_mode = self.search_default_mode

        splitter_version = self.splitter_version

        ingestion_config = self.ingestion_config.to_dict()

        rerank: dict[str, Any] | None | Unset
        if isinstance(self.rerank, Unset):
            rerank = UNSET
        elif isinstance(self.rerank, SettingsSnapshotRerankType0):
            rerank = self.rerank.to_dict()
        else:
            rerank = self.rerank

        hybrid_vector_weight: float | None | Unset
        if isinstance(self.hybrid_vector_weight, Unset):
            hybrid_vector_weight = UNSET
        else:
            hybrid_vector_weight = self.hybrid_vector_weight

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
        if rerank is not UNSET:
            field_dict["rerank"] = rerank
        if hybrid_vector_weight is not UNSET:
            field_dict["hybrid_vector_weight"] = hybrid_vector_weight

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.settings_snapshot_ingestion_config import (
            SettingsSnapshotIngestionConfig,
        )
        from ..models.settings_snapshot_rerank_type_0 import SettingsSnapshotRerankType0

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

        def _parse_rerank(data: object) -> None | SettingsSnapshotRerankType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                rerank_type_0 = SettingsSnapshotRerankType0.from_dict(data)

                return rerank_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SettingsSnapshotRerankType0 | Unset, data)

        rerank = _parse_rerank(d.pop("rerank", UNSET))

        def _parse_hybrid_vector_weight(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        hybrid_vector_weight = _parse_hybrid_vector_weight(
            d.pop("hybrid_vector_weight", UNSET)
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
            rerank=rerank,
            hybrid_vector_weight=hybrid_vector_weight,
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
