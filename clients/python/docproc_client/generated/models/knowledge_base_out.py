from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.knowledge_base_out_ingestion_config import (
        KnowledgeBaseOutIngestionConfig,
    )
    from ..models.rerank_setting import RerankSetting


T = TypeVar("T", bound="KnowledgeBaseOut")


@_attrs_define
class KnowledgeBaseOut:
    """
    Attributes:
        id (UUID):
        name (str):
        collection_name (str):
        scope (str):
        is_default (bool):
        organization_id (None | str):
        embedding_provider (str):
        embedding_model (str):
        embedding_dim (int):
        ingestion_config (KnowledgeBaseOutIngestionConfig):
        text_search_config (str):
        vector_type (str):
        created_at (datetime.datetime):
        embedding_secret_id (None | Unset | UUID):
        embedding_base_url (None | str | Unset):
        embedding_endpoint_id (None | Unset | UUID):
        rerank (None | RerankSetting | Unset):
        hybrid_vector_weight (float | None | Unset):
    """

    id: UUID
    name: str
    collection_name: str
    scope: str
    is_default: bool
    organization_id: None | str
    embedding_provider: str
    embedding_model: str
    embedding_dim: int
    ingestion_config: KnowledgeBaseOutIngestionConfig
    text_search_config: str
    vector_type: str
    created_at: datetime.datetime
    embedding_secret_id: None | Unset | UUID = UNSET
    embedding_base_url: None | str | Unset = UNSET
    embedding_endpoint_id: None | Unset | UUID = UNSET
    rerank: None | RerankSetting | Unset = UNSET
    hybrid_vector_weight: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.rerank_setting import RerankSetting

        id = str(self.id)

        name = self.name

        collection_name = self.collection_name

        scope = self.scope

        is_default = self.is_default

        organization_id: None | str
        organization_id = self.organization_id

        embedding_provider = self.embedding_provider

        embedding_model = self.embedding_model

        embedding_dim = self.embedding_dim

        ingestion_config = self.ingestion_config.to_dict()

        text_search_config = self.text_search_config

        vector_type = self.vector_type

        created_at = self.created_at.isoformat()

        embedding_secret_id: None | str | Unset
        if isinstance(self.embedding_secret_id, Unset):
            embedding_secret_id = UNSET
        elif isinstance(self.embedding_secret_id, UUID):
            embedding_secret_id = str(self.embedding_secret_id)
        else:
            embedding_secret_id = self.embedding_secret_id

        embedding_base_url: None | str | Unset
        if isinstance(self.embedding_base_url, Unset):
            embedding_base_url = UNSET
        else:
            embedding_base_url = self.embedding_base_url

        embedding_endpoint_id: None | str | Unset
        if isinstance(self.embedding_endpoint_id, Unset):
            embedding_endpoint_id = UNSET
        elif isinstance(self.embedding_endpoint_id, UUID):
            embedding_endpoint_id = str(self.embedding_endpoint_id)
        else:
            embedding_endpoint_id = self.embedding_endpoint_id

        rerank: dict[str, Any] | None | Unset
        if isinstance(self.rerank, Unset):
            rerank = UNSET
        elif isinstance(self.rerank, RerankSetting):
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
                "id": id,
                "name": name,
                "collection_name": collection_name,
                "scope": scope,
                "is_default": is_default,
                "organization_id": organization_id,
                "embedding_provider": embedding_provider,
                "embedding_model": embedding_model,
                "embedding_dim": embedding_dim,
                "ingestion_config": ingestion_config,
                "text_search_config": text_search_config,
                "vector_type": vector_type,
                "created_at": created_at,
            }
        )
        if embedding_secret_id is not UNSET:
            field_dict["embedding_secret_id"] = embedding_secret_id
        if embedding_base_url is not UNSET:
            field_dict["embedding_base_url"] = embedding_base_url
        if embedding_endpoint_id is not UNSET:
            field_dict["embedding_endpoint_id"] = embedding_endpoint_id
        if rerank is not UNSET:
            field_dict["rerank"] = rerank
        if hybrid_vector_weight is not UNSET:
            field_dict["hybrid_vector_weight"] = hybrid_vector_weight

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.knowledge_base_out_ingestion_config import (
            KnowledgeBaseOutIngestionConfig,
        )
        from ..models.rerank_setting import RerankSetting

        d = dict(src_dict)
        id = UUID(d.pop("id"))

        name = d.pop("name")

        collection_name = d.pop("collection_name")

        scope = d.pop("scope")

        is_default = d.pop("is_default")

        def _parse_organization_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        organization_id = _parse_organization_id(d.pop("organization_id"))

        embedding_provider = d.pop("embedding_provider")

        embedding_model = d.pop("embedding_model")

        embedding_dim = d.pop("embedding_dim")

        ingestion_config = KnowledgeBaseOutIngestionConfig.from_dict(
            d.pop("ingestion_config")
        )

        text_search_config = d.pop("text_search_config")

        vector_type = d.pop("vector_type")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_embedding_secret_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                embedding_secret_id_type_0 = UUID(data)

                return embedding_secret_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        embedding_secret_id = _parse_embedding_secret_id(
            d.pop("embedding_secret_id", UNSET)
        )

        def _parse_embedding_base_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        embedding_base_url = _parse_embedding_base_url(
            d.pop("embedding_base_url", UNSET)
        )

        def _parse_embedding_endpoint_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                embedding_endpoint_id_type_0 = UUID(data)

                return embedding_endpoint_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        embedding_endpoint_id = _parse_embedding_endpoint_id(
            d.pop("embedding_endpoint_id", UNSET)
        )

        def _parse_rerank(data: object) -> None | RerankSetting | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                rerank_type_0 = RerankSetting.from_dict(data)

                return rerank_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RerankSetting | Unset, data)

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

        knowledge_base_out = cls(
            id=id,
            name=name,
            collection_name=collection_name,
            scope=scope,
            is_default=is_default,
            organization_id=organization_id,
            embedding_provider=embedding_provider,
            embedding_model=embedding_model,
            embedding_dim=embedding_dim,
            ingestion_config=ingestion_config,
            text_search_config=text_search_config,
            vector_type=vector_type,
            created_at=created_at,
            embedding_secret_id=embedding_secret_id,
            embedding_base_url=embedding_base_url,
            embedding_endpoint_id=embedding_endpoint_id,
            rerank=rerank,
            hybrid_vector_weight=hybrid_vector_weight,
        )

        knowledge_base_out.additional_properties = d
        return knowledge_base_out

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
