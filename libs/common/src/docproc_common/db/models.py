"""The ORM models: every table Alembic owns.

Per-collection vector tables (``rag_<collection>``) are created at run time by
the vector store and are *not* declared here; ``docproc_common.db.vector_tables``
is the one predicate that tells the two apart.
"""

from __future__ import annotations

import uuid
from datetime import date, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    DateTime,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def _uuid() -> uuid.UUID:
    return uuid.uuid4()


class Scope(StrEnum):
    PERSONAL = "personal"
    ORG = "org"
    APP = "app"


class DocumentStatus(StrEnum):
    """The only three values ``rag_documents.status`` ever holds."""

    PROCESSING = "processing"
    DONE = "done"
    ERROR = "error"


class WriterKind(StrEnum):
    DOCUMENT = "document"
    OPERATOR = "operator"


class KnowledgeBase(Base):
    __tablename__ = "knowledge_bases"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=_uuid)
    name: Mapped[str] = mapped_column(String(200))
    collection_name: Mapped[str] = mapped_column(String(45), index=True)
    scope: Mapped[str] = mapped_column(String(16))
    owner_id: Mapped[str] = mapped_column(String(200))
    organization_id: Mapped[str | None] = mapped_column(String(200), index=True)
    is_default: Mapped[bool] = mapped_column(Boolean, default=False)
    embedding_provider: Mapped[str] = mapped_column(String(32))
    embedding_model: Mapped[str] = mapped_column(String(200))
    embedding_dim: Mapped[int] = mapped_column(Integer)
    embedding_secret_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    embedding_base_url: Mapped[str | None] = mapped_column(String(500))
    embedding_endpoint_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    ingestion_config: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    #: The collection's text-search configuration (``pg_ts_config``): how its keyword
    #: index reads the chunks. Fixed at creation, adopted from the name's first base.
    text_search_config: Mapped[str] = mapped_column(
        String(63), default="simple", server_default="simple"
    )
    #: How the collection's table stores its embeddings (``vectorstore.VectorType``:
    #: ``vector`` or ``halfvec``). Fixed at creation, adopted from the name's first base.
    #: The column's ``vector`` default is what rows older than the choice hold; a new
    #: collection's base gets ``vectorstore.DEFAULT_VECTOR_TYPE`` from the API.
    vector_type: Mapped[str] = mapped_column(String(16), default="vector", server_default="vector")
    #: The base's reranker (``docproc_common.rerank.client.RerankConfig`` as JSON: provider,
    #: model, secret_id, base_url); null, the default, is no rerank stage.
    rerank: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    #: The vector ranking's share of a hybrid search's blend, 0 to 1 (the keyword ranking
    #: has the rest); null, the default, is the product's (``HYBRID_VECTOR_WEIGHT``, 0.6).
    hybrid_vector_weight: Mapped[float | None] = mapped_column(Double)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class CollectionGrant(Base):
    """An explicit grant on one collection: widens what the caller's role allows."""

    __tablename__ = "collection_grants"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=_uuid)
    knowledge_base_id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("knowledge_bases.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[str] = mapped_column(String(200), index=True)
    permission: Mapped[str] = mapped_column(String(16))  # view | edit


class RagDocument(Base):
    __tablename__ = "rag_documents"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=_uuid)
    collection_name: Mapped[str] = mapped_column(String(45), index=True)
    knowledge_base_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True), index=True)
    organization_id: Mapped[str | None] = mapped_column(String(200))
    uploaded_by: Mapped[str | None] = mapped_column(String(200))
    filename: Mapped[str] = mapped_column(String(1024))
    filesize: Mapped[int] = mapped_column(BigInteger, default=0)
    filetype: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16), default=DocumentStatus.PROCESSING)
    error_message: Mapped[str | None] = mapped_column(Text)
    vector_document_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True), index=True)
    chunk_count: Mapped[int] = mapped_column(Integer, default=0)
    storage_path: Mapped[str | None] = mapped_column(String(1024))
    parsed_path: Mapped[str | None] = mapped_column(String(1024))
    #: Per page of the parsed text, ``{"chunks": n, "has_text": bool}`` (the parser's); null
    #: when the parser gave no pages or the row was parsed before the column existed.
    page_map: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONB)
    source: Mapped[str] = mapped_column(String(32), default="upload")
    source_path: Mapped[str | None] = mapped_column(Text)
    content_hash: Mapped[str | None] = mapped_column(String(64))
    organizational_unit: Mapped[str | None] = mapped_column(String(200))
    document_date: Mapped[date | None] = mapped_column(Date)
    writer_kind: Mapped[str] = mapped_column(String(16), default=WriterKind.DOCUMENT)
    ingestion_config: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    #: The ``docproc_common.splitters.SPLITTER_VERSION`` an operator ingest cut the chunks
    #: with (null for a pipeline document): with ``ingestion_config`` and ``content_hash``,
    #: what ``rag-ingest`` compares to skip a file or re-chunk it.
    splitter_version: Mapped[int | None] = mapped_column(Integer)
    attempt_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    #: An upload with ``replace=true``: once it is ``done``, the earlier documents of its
    #: name in its knowledge base are retired (``docproc_embedder.repository.retire_replaced``).
    replace_by_name: Mapped[bool] = mapped_column(Boolean, default=False, server_default="false")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        Index("ix_rag_documents_kb_status", "knowledge_base_id", "status"),
        CheckConstraint(
            "status IN ('processing', 'done', 'error')", name="status"
        ),  # DocumentStatus; no fourth value can slip in from any writer
    )


class ChatFile(Base):
    __tablename__ = "chat_files"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=_uuid)
    user_id: Mapped[str] = mapped_column(String(200), index=True)
    filename: Mapped[str] = mapped_column(String(1024))
    mime_type: Mapped[str] = mapped_column(String(200))
    size: Mapped[int] = mapped_column(BigInteger)
    storage_path: Mapped[str] = mapped_column(String(1024))
    organizational_unit: Mapped[str | None] = mapped_column(String(200))
    file_type: Mapped[str] = mapped_column(String(32))
    parsed_content: Mapped[str | None] = mapped_column(Text)
    message_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class SyncSource(Base):
    __tablename__ = "sync_sources"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=_uuid)
    organization_id: Mapped[str | None] = mapped_column(String(200))
    collection_name: Mapped[str | None] = mapped_column(String(45), index=True)
    knowledge_base_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    connector: Mapped[str] = mapped_column(String(32))
    config: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    secret_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    sync_mode: Mapped[str] = mapped_column(String(16), default="new_only")
    schedule_seconds: Mapped[int | None] = mapped_column(Integer)
    organizational_unit: Mapped[str | None] = mapped_column(String(200))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    last_run_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    name: Mapped[str | None] = mapped_column(String(200))
    #: Who last changed where the source's credential is sent (a ``DESTINATION_FIELDS``
    #: field of its configuration), and when; null until someone does. Every such change
    #: is also an audit entry naming the fields.
    destination_changed_by: Mapped[str | None] = mapped_column(String(200))
    destination_changed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class SyncLog(Base):
    __tablename__ = "sync_logs"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=_uuid)
    source_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True), index=True)
    collection_name: Mapped[str] = mapped_column(String(45))
    mode: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16), default="running")
    total_files: Mapped[int] = mapped_column(Integer, default=0)
    ingested: Mapped[int] = mapped_column(Integer, default=0)
    updated: Mapped[int] = mapped_column(Integer, default=0)
    skipped: Mapped[int] = mapped_column(Integer, default=0)
    failed: Mapped[int] = mapped_column(Integer, default=0)
    error_message: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    deleted: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: Whether the listing named everything (an incomplete one deletes nothing); null until listed.
    listing_complete: Mapped[bool | None] = mapped_column(Boolean)
    bytes_fetched: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")


class CollectionTeardown(Base):
    """A name reserved by a pending teardown; committed with the delete, removed after the drop."""

    __tablename__ = "collection_teardowns"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=_uuid)
    collection_name: Mapped[str] = mapped_column(String(45), index=True)
    knowledge_base_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    drop_table: Mapped[bool] = mapped_column(Boolean, default=True)
    storage_paths: Mapped[list[str]] = mapped_column(JSONB, default=list)
    vector_document_ids: Mapped[list[str]] = mapped_column(JSONB, default=list)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Secret(Base):
    __tablename__ = "secrets"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=_uuid)
    organization_id: Mapped[str | None] = mapped_column(String(200), index=True)
    owner_id: Mapped[str] = mapped_column(String(200))
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(32))
    visibility: Mapped[str] = mapped_column(String(16), default="private")
    #: What an ``api_key`` is for (an embedding provider such as ``openai``); bound into the AAD.
    provider: Mapped[str | None] = mapped_column(String(32))
    wrapped_key: Mapped[bytes] = mapped_column(LargeBinary)
    ciphertext: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class AuditLog(Base):
    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    actor: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(64))
    organization_id: Mapped[str | None] = mapped_column(String(200))
    target: Mapped[str] = mapped_column(String(200))
    details: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class OutboxEvent(Base):
    """An event written in the same transaction as the rows it describes."""

    __tablename__ = "outbox"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    event_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), unique=True)
    topic: Mapped[str] = mapped_column(String(200))
    key: Mapped[str] = mapped_column(String(200))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB)
    headers: Mapped[dict[str, str]] = mapped_column(JSONB, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    published_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        Index("ix_outbox_unpublished", "id", postgresql_where="published_at IS NULL"),
    )


class EmbeddedDelivery(Base):
    """The embedded bus: one row per (consumer, event), polled with SKIP LOCKED."""

    __tablename__ = "embedded_deliveries"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    consumer: Mapped[str] = mapped_column(String(64))
    topic: Mapped[str] = mapped_column(String(200))
    key: Mapped[str] = mapped_column(String(200))
    event_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB)
    headers: Mapped[dict[str, str]] = mapped_column(JSONB, default=dict)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    not_before: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    done_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    dead: Mapped[bool] = mapped_column(Boolean, default=False)
    last_error: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        Index(
            "ix_embedded_deliveries_pending",
            "consumer",
            "id",
            postgresql_where="done_at IS NULL",
        ),
    )


class ProcessedEvent(Base):
    """Idempotency gate: a consumer's side effects commit with this row, once."""

    __tablename__ = "processed_events"

    consumer: Mapped[str] = mapped_column(String(64), primary_key=True)
    event_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    processed_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now()
    )


class EmbeddingEndpoint(Base):
    """A registered keyless embedding service (an Ollama): the address a collection names.

    ``organization_id`` null is a deployment-wide endpoint, registered by the app admin.
    """

    __tablename__ = "embedding_endpoints"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=_uuid)
    organization_id: Mapped[str | None] = mapped_column(String(200), index=True)
    name: Mapped[str] = mapped_column(String(200))
    base_url: Mapped[str] = mapped_column(String(500))
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class ChatAttachmentRender(Base):
    """What one chat attachment added to an agent's prompt, kept so later turns replay it.

    One row per (file, agent, conversation); rendering the file again for the same agent
    and conversation replaces it. ``workspace_path`` is set once the file (or an
    archive's folder) is written under the workspace's ``uploads/``, and
    ``workspace_bytes`` counts what that write cost against the workspace quota.
    """

    __tablename__ = "chat_attachment_renders"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=_uuid)
    file_id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("chat_files.id", ondelete="CASCADE"), index=True
    )
    message_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True), index=True)
    user_id: Mapped[str] = mapped_column(String(200))
    agent_id: Mapped[str] = mapped_column(String(128), default="")
    conversation_id: Mapped[str] = mapped_column(String(128), default="")
    mode: Mapped[str] = mapped_column(String(32))
    workspace_path: Mapped[str | None] = mapped_column(String(1024))
    workspace_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    history_text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )

    __table_args__ = (
        Index(
            "ix_chat_attachment_renders_target",
            "file_id",
            "agent_id",
            "conversation_id",
            unique=True,
        ),
        Index("ix_chat_attachment_renders_workspace", "user_id", "agent_id", "conversation_id"),
    )


class RagDocumentClaim(Base):
    """A sync source lists the document at one remote address (``rag_document_claims``).

    Keyed by source and address (``address_hash`` is the sha256 of ``source_path``,
    so an unbounded address never meets a btree's row limit). ``document_id`` is
    the live document the address maps to, with the ``remote_version`` (ETag,
    blob id, mtime) it was read at; ``pending_document_id`` is a newer attempt still
    in the pipeline (or failed), which replaces the live one once it is ``done``.
    A document is deleted only when no claim names it any more.
    """

    __tablename__ = "rag_document_claims"

    source_id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("sync_sources.id", ondelete="CASCADE"), primary_key=True
    )
    address_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    source_path: Mapped[str] = mapped_column(Text)
    document_id: Mapped[uuid.UUID | None] = mapped_column(
        UUID(as_uuid=True), ForeignKey("rag_documents.id", ondelete="SET NULL"), index=True
    )
    remote_version: Mapped[str | None] = mapped_column(Text)
    pending_document_id: Mapped[uuid.UUID | None] = mapped_column(
        UUID(as_uuid=True), ForeignKey("rag_documents.id", ondelete="SET NULL"), index=True
    )
    pending_version: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )


class RetrievalEvaluation(Base):
    """A knowledge base's evaluation set: queries and the documents relevant to each, graded.

    ``queries`` is ``[{"id", "text", "relevant": {"<document id>": grade}}]``: every judged
    document named by its ``rag_documents`` id, resolved when the set was created.
    """

    __tablename__ = "retrieval_evaluations"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=_uuid)
    knowledge_base_id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("knowledge_bases.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    queries: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class EvaluationTrigger(StrEnum):
    MANUAL = "manual"
    SCHEDULED = "scheduled"


class EvaluationRun(Base):
    """One scoring of an evaluation set on its base as it stood: every mode's measures, the
    base's settings at the time, and when. A scheduled run that failed keeps its error."""

    __tablename__ = "retrieval_evaluation_runs"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=_uuid)
    evaluation_id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("retrieval_evaluations.id", ondelete="CASCADE"), index=True
    )
    trigger: Mapped[str] = mapped_column(String(16))
    #: Who asked for a manual run; null for a scheduled one.
    started_by: Mapped[str | None] = mapped_column(String(200))
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    #: ``{"<mode>": {"ndcg_at_10", "recall_at_10", "recall_at_100", "mrr_at_10"}}``.
    scores: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    #: ``{"<mode>": "<why it was not scored>"}`` (a collection without a keyword index).
    skipped: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    #: The base's settings the run searched with (``evaluations.service.settings_snapshot``).
    settings: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    query_count: Mapped[int] = mapped_column(Integer)
    #: Judged documents the base no longer lists (deleted since the set was made).
    missing_documents: Mapped[int] = mapped_column(Integer, default=0)
    #: Why a scheduled run scored nothing (its base's embedding key refused, ...); null if it did.
    error: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (CheckConstraint("trigger IN ('manual', 'scheduled')", name="trigger"),)


# Sync lookups: ``existing_document`` asks by address, then name, then hash; equality only,
# and an address has no bound, so hash indexes rather than btrees.
Index("ix_rag_documents_source_path_hash", RagDocument.source_path, postgresql_using="hash")
Index("ix_rag_documents_filename_hash", RagDocument.filename, postgresql_using="hash")
Index("ix_rag_documents_content_hash_hash", RagDocument.content_hash, postgresql_using="hash")
Index("ix_sync_sources_knowledge_base_id", SyncSource.knowledge_base_id)


class VisionModelProfile(Base):
    """An organization's vision model profile: a provider, a model and the vault key that pays
    for it (``/api/v1/vision-profiles``). A collection selects one by id
    (``ingestion_config.vision_profile_id``); the parser resolves it when it parses.

    Immutable once made: a collection that selected it lent its key as it was, so another
    key or address is another profile, selected (and checked) again.
    """

    __tablename__ = "vision_model_profiles"
    __table_args__ = (
        Index(
            "uq_vision_model_profiles_organization_id_name",
            "organization_id",
            "name",
            unique=True,
        ),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=_uuid)
    organization_id: Mapped[str | None] = mapped_column(String(200))
    name: Mapped[str] = mapped_column(String(200))
    provider: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(200))
    base_url: Mapped[str] = mapped_column(String(500))
    #: A vault secret of kind ``api_key`` of the organization; None for a keyless endpoint
    #: the deployment serves. No foreign key: a deleted secret stops description with a
    #: message, as it stops a collection's embedding.
    secret_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
