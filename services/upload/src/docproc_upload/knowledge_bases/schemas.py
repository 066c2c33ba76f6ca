"""The bodies of the knowledge-base routes."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from docproc_common.db.models import CollectionGrant, KnowledgeBase
from docproc_common.db.vector_tables import (
    MAX_COLLECTION_NAME_BYTES,
    RESERVED_NAMES,
    VECTOR_TABLE_PREFIX,
    model_table_names,
)
from docproc_common.ingestion import IngestionConfig
from docproc_common.vectorstore import VectorType
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from docproc_upload.inputs import column_length

#: The column each field fills bounds it (``docproc_upload.inputs``).
KB_NAME_CHARS = column_length(KnowledgeBase.name)
PROVIDER_CHARS = column_length(KnowledgeBase.embedding_provider)
MODEL_CHARS = column_length(KnowledgeBase.embedding_model)
BASE_URL_CHARS = column_length(KnowledgeBase.embedding_base_url)
TEXT_SEARCH_CONFIG_CHARS = column_length(KnowledgeBase.text_search_config)

#: What ``validate_collection_name`` accepts, as JSON Schema: documented on every
#: collection name the API takes (it stays the check, answering 400 with its reason).
COLLECTION_NAME_SCHEMA: dict[str, Any] = {
    "pattern": "^[a-z][a-z0-9_]*$",
    "maxLength": MAX_COLLECTION_NAME_BYTES,
    "not": {
        "enum": sorted(
            RESERVED_NAMES
            | {
                t.removeprefix(VECTOR_TABLE_PREFIX)
                for t in model_table_names()
                if t.startswith(VECTOR_TABLE_PREFIX)
            }
        )
    },
}


class RerankSetting(BaseModel):
    """A base's reranker (docs/search.md, "Reranking"): ``local`` (the cross-encoder the
    deployment mounts; keyless), or ``cohere``, ``jina``, ``tei`` (a provider's ``/rerank``,
    paid with a vault ``api_key`` of that provider, checked as an embedding key is)."""

    model_config = ConfigDict(extra="forbid")

    provider: str = Field(max_length=32)
    #: The provider's model (``cohere``, ``jina``: required; ``local``, ``tei``: none).
    model: str | None = Field(default=None, min_length=1, max_length=200)
    #: The vault api_key that pays (every provider but ``local``).
    secret_id: uuid.UUID | None = None
    #: The provider's endpoint, without ``/rerank``: its own host or one the deployment
    #: allows (``EMBEDDER__ALLOWED_BASE_URLS``); required for ``tei``.
    base_url: str | None = Field(default=None, max_length=500)


class CollectionChoices(BaseModel):
    """What a new knowledge base chooses besides its names, by either route that creates one
    (``POST /kb``, ``POST /rag/collections/{name}``)."""

    model_config = ConfigDict(extra="forbid")

    scope: Literal["personal", "org", "app"] | None = None
    #: Required for a new collection name; adopted from the collection when the name exists.
    embedding_provider: str | None = Field(default=None, max_length=PROVIDER_CHARS)
    embedding_model: str | None = Field(default=None, max_length=MODEL_CHARS)
    #: The vault api_key that pays (keyed providers); see docs/embeddings.md.
    embedding_secret_id: uuid.UUID | None = None
    #: A keyed provider's own endpoint, e.g. https://eu.openrouter.ai/api/v1.
    embedding_base_url: str | None = Field(default=None, max_length=BASE_URL_CHARS)
    #: The registered keyless service an ollama collection embeds through.
    embedding_endpoint_id: uuid.UUID | None = None
    ingestion_config: IngestionConfig = IngestionConfig()
    #: A text-search configuration of the database (``pg_ts_config``: ``simple``, ``english``,
    #: ``spanish``, ...) the keyword index reads with; ``simple`` for a new collection,
    #: adopted from the collection when the name exists. Fixed at creation.
    text_search_config: str | None = Field(default=None, max_length=TEXT_SEARCH_CONFIG_CHARS)
    #: How the collection's table stores its embeddings: ``vector`` (4-byte floats) or
    #: ``halfvec`` (2-byte floats, half the index); ``halfvec`` for a new collection, adopted
    #: from the collection when the name exists. Fixed at creation.
    vector_type: VectorType | None = None
    #: The base's reranker; none (the default) is no rerank stage.
    rerank: RerankSetting | None = None
    #: The vector ranking's share of a hybrid search's blend, 0 to 1 (the keyword ranking
    #: has the rest); none (the default) is the product's 0.6. docs/search.md.
    hybrid_vector_weight: float | None = Field(default=None, ge=0, le=1)


class KnowledgeBaseCreate(CollectionChoices):
    name: str = Field(min_length=1, max_length=KB_NAME_CHARS)
    collection_name: str | None = Field(default=None, json_schema_extra=COLLECTION_NAME_SCHEMA)
    #: The organization's default base (emptied, not deleted); set by the app admin only.
    is_default: bool = False


class KnowledgeBasePatch(BaseModel):
    """``PATCH /kb/{id}``: only what is sent changes.

    The embedding fields move the collection to another provider, key or endpoint
    (``docproc_upload.embeddings.move_embedding``); ``ingestion_config`` carries only the
    settings that change and is validated merged with the stored configuration; documents
    already indexed keep their chunks until ``POST /kb/{id}/reindex``.
    """

    model_config = ConfigDict(extra="forbid")

    embedding_provider: str | None = Field(default=None, max_length=PROVIDER_CHARS)
    #: Fixed at creation; accepted only when it names the collection's model.
    embedding_model: str | None = Field(default=None, max_length=MODEL_CHARS)
    embedding_secret_id: uuid.UUID | None = None
    #: null returns to the provider's default endpoint.
    embedding_base_url: str | None = Field(default=None, max_length=BASE_URL_CHARS)
    embedding_endpoint_id: uuid.UUID | None = None
    #: Absent is "unchanged"; null is refused (400), so the schema offers an object only.
    ingestion_config: Annotated[dict[str, Any] | None, WithJsonSchema({"type": "object"})] = None
    #: Set and unset by the app admin only.
    is_default: Annotated[bool | None, WithJsonSchema({"type": "boolean"})] = None
    #: The base's reranker, replaced whole; null turns the rerank stage off.
    rerank: RerankSetting | None = None
    #: The vector ranking's share of hybrid's blend, 0 to 1; null returns to the product's.
    hybrid_vector_weight: float | None = Field(default=None, ge=0, le=1)


class KnowledgeBaseOut(BaseModel):
    id: uuid.UUID
    name: str
    collection_name: str
    scope: str
    is_default: bool
    organization_id: str | None
    embedding_provider: str
    embedding_model: str
    embedding_dim: int
    embedding_secret_id: uuid.UUID | None = None
    embedding_base_url: str | None = None
    embedding_endpoint_id: uuid.UUID | None = None
    ingestion_config: dict[str, Any]
    text_search_config: str
    vector_type: str
    rerank: RerankSetting | None = None
    hybrid_vector_weight: float | None = None
    created_at: datetime


class IngestionStatus(BaseModel):
    indexing_status: Literal["indexing", "complete"]
    processing_count: int
    indexed_count: int
    failed_count: int
    document_count: int
    #: The collection's vector index: ``ready``; ``loading`` (bulk mode: new chunks go to a
    #: side table, found by an exact scan); ``building`` (its index being built and the
    #: side table folded in). docs/search.md, "Bulk loads".
    vector_index: Literal["ready", "loading", "building"] = "ready"
    #: This base's chunks not yet in the HNSW index (searched exactly meanwhile).
    vector_rows_pending: int = 0


class ReindexOut(BaseModel):
    """``POST /kb/{id}/reindex``: what was queued; the progress is ``GET /kb/{id}/ingestion``."""

    knowledge_base_id: uuid.UUID
    #: Documents re-parsed from their stored original with the current configuration.
    queued: int
    #: Synced documents keep no original: a run of their source with ``sync_mode: full``
    #: re-fetches them.
    skipped_no_original: int
    #: Documents whose type the configured parser does not read: they keep their chunks.
    skipped_unsupported: int


class CollectionDeletedOut(BaseModel):
    collection_name: str
    knowledge_bases_deleted: int
    knowledge_bases_emptied: int = 0
    documents_deleted: int
    table_dropped: bool


class GrantIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: str = Field(min_length=1, max_length=column_length(CollectionGrant.user_id))
    permission: Literal["view", "edit"]
