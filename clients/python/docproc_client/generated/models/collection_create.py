from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.collection_create_scope_type_0 import CollectionCreateScopeType0
from ..models.collection_create_vector_type_type_0 import (
    CollectionCreateVectorTypeType0,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.ingestion_config import IngestionConfig
    from ..models.rerank_setting import RerankSetting


T = TypeVar("T", bound="CollectionCreate")


@_attrs_define
class CollectionCreate:
    """``POST /rag/collections/{name}``: a knowledge base whose collection name is the path.

    Attributes:
        scope (CollectionCreateScopeType0 | None | Unset):
        embedding_provider (None | str | Unset):
        embedding_model (None | str | Unset):
        embedding_secret_id (None | Unset | UUID):
        embedding_base_url (None | str | Unset):
        embedding_endpoint_id (None | Unset | UUID):
        ingestion_config (IngestionConfig | Unset):
        text_search_config (None | str | Unset):
        vector_type (CollectionCreateVectorTypeType0 | None | Unset):
        rerank (None | RerankSetting | Unset):
        hybrid_vector_weight (float | None | Unset):
        name (None | str | Unset):
    """

    scope: CollectionCreateScopeType0 | None | Unset = UNSET
    embedding_provider: None | str | Unset = UNSET
    embedding_model: None | str | Unset = UNSET
    embedding_secret_id: None | Unset | UUID = UNSET
    embedding_base_url: None | str | Unset = UNSET
    embedding_endpoint_id: None | Unset | UUID = UNSET
    ingestion_config: IngestionConfig | Unset = UNSET
    text_search_config: None | str | Unset = UNSET
    vector_type: CollectionCreateVectorTypeType0 | None | Unset = UNSET
    rerank: None | RerankSetting | Unset = UNSET
    hybrid_vector_weight: float | None | Unset = UNSET
    name: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.rerank_setting import RerankSetting

        scope: None | str | Unset
        if isinstance(self.scope, Unset):
            scope = UNSET
        elif isinstance(self.scope, CollectionCreateScopeType0):
            scope = self.scope.value
        else:
            scope = self.scope

        embedding_provider: None | str | Unset
        if isinstance(self.embedding_provider, Unset):
            embedding_provider = UNSET
        else:
            embedding_provider = self.embedding_provider

        embedding_model: None | str | Unset
        if isinstance(self.embedding_model, Unset):
            embedding_model = UNSET
        else:
            embedding_model = self.embedding_model

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

        ingestion_config: dict[str, Any] | Unset = UNSET
        if not isinstance(self.ingestion_config, Unset):
            ingestion_config = self.ingestion_config.to_dict()

        text_search_config: None | str | Unset
        if isinstance(self.text_search_config, Unset):
            text_search_config = UNSET
        else:
            text_search_config = self.text_search_config

        vector_type: None | str | Unset
        if isinstance(self.vector_type, Unset):
            vector_type = UNSET
        elif isinstance(self.vector_type, CollectionCreateVectorTypeType0):
            vector_type = self.vector_type.value
        else:
            vector_type = self.vector_type

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

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if scope is not UNSET:
            field_dict["scope"] = scope
        if embedding_provider is not UNSET:
            field_dict["embedding_provider"] = embedding_provider
        if embedding_model is not UNSET:
            field_dict["embedding_model"] = embedding_model
        if embedding_secret_id is not UNSET:
            field_dict["embedding_secret_id"] = embedding_secret_id
        if embedding_base_url is not UNSET:
            field_dict["embedding_base_url"] = embedding_base_url
        if embedding_endpoint_id is not UNSET:
            field_dict["embedding_endpoint_id"] = embedding_endpoint_id
        if ingestion_config is not UNSET:
            field_dict["ingestion_config"] = ingestion_config
        if text_search_config is not UNSET:
            field_dict["text_search_config"] = text_search_config
        if vector_type is not UNSET:
            field_dict["vector_type"] = vector_type
        if rerank is not UNSET:
            field_dict["rerank"] = rerank
        if hybrid_vector_weight is not UNSET:
            field_dict["hybrid_vector_weight"] = hybrid_vector_weight
        if name is not UNSET:
            field_dict["name"] = name

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.ingestion_config import IngestionConfig
        from ..models.rerank_setting import RerankSetting

        d = dict(src_dict)

        def _parse_scope(data: object) -> CollectionCreateScopeType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                scope_type_0 = CollectionCreateScopeType0(data)

                return scope_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CollectionCreateScopeType0 | None | Unset, data)

        scope = _parse_scope(d.pop("scope", UNSET))

        def _parse_embedding_provider(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        embedding_provider = _parse_embedding_provider(
            d.pop("embedding_provider", UNSET)
        )

        def _parse_embedding_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        embedding_model = _parse_embedding_model(d.pop("embedding_model", UNSET))

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

        _ingestion_config = d.pop("ingestion_config", UNSET)
        ingestion_config: IngestionConfig | Unset
        if isinstance(_ingestion_config, Unset):
            ingestion_config = UNSET
        else:
            ingestion_config = IngestionConfig.from_dict(_ingestion_config)

        def _parse_text_search_config(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        text_search_config = _parse_text_search_config(
            d.pop("text_search_config", UNSET)
        )

        def _parse_vector_type(
            data: object,
        ) -> CollectionCreateVectorTypeType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                vector_type_type_0 = CollectionCreateVectorTypeType0(data)

                return vector_type_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CollectionCreateVectorTypeType0 | None | Unset, data)

        vector_type = _parse_vector_type(d.pop("vector_type", UNSET))

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

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        collection_create = cls(
            scope=scope,
            embedding_provider=embedding_provider,
            embedding_model=embedding_model,
            embedding_secret_id=embedding_secret_id,
            embedding_base_url=embedding_base_url,
            embedding_endpoint_id=embedding_endpoint_id,
            ingestion_config=ingestion_config,
            text_search_config=text_search_config,
            vector_type=vector_type,
            rerank=rerank,
            hybrid_vector_weight=hybrid_vector_weight,
            name=name,
        )

        return collection_create
