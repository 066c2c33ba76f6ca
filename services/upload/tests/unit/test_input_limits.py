"""What PostgreSQL can keep of a client's input is checked before anything is stored.

Every ``String(n)`` column is accounted for: a column a request field fills has that
field's limit at most ``n`` (taken from the column itself), and every other column says
where its value comes from, so a new column cannot arrive unchecked.
"""

from __future__ import annotations

from typing import Any

import annotated_types
import pytest
from docproc_common.db.models import (
    Base,
    ChatAttachmentRender,
    ChatFile,
    CollectionGrant,
    EmbeddingEndpoint,
    KnowledgeBase,
    RagDocument,
    RetrievalEvaluation,
    Secret,
    SyncSource,
    VisionModelProfile,
)
from docproc_common.db.vector_tables import MAX_COLLECTION_NAME_BYTES, validate_collection_name
from docproc_common.errors import InvalidInput
from docproc_upload.chat import service as chat_service
from docproc_upload.chat.schemas import AgentIn
from docproc_upload.credentials.schemas import SecretCreate
from docproc_upload.embeddings.schemas import EmbeddingEndpointCreate
from docproc_upload.evaluations.schemas import EVALUATION_NAME_CHARS, EvaluationCreate
from docproc_upload.inputs import column_length, nul_path
from docproc_upload.knowledge_bases.schemas import GrantIn, KnowledgeBaseCreate, KnowledgeBasePatch
from docproc_upload.rag_collections.schemas import CollectionCreate
from docproc_upload.rag_documents import service
from docproc_upload.sync_sources.schemas import CloneRequest, SourceCreate, SourcePatch
from docproc_upload.vision_profiles.schemas import VisionProfileCreate
from pydantic import BaseModel
from sqlalchemy import String
from sqlalchemy.orm import InstrumentedAttribute

EMBEDDING = (KnowledgeBaseCreate, CollectionCreate, KnowledgeBasePatch)

#: column -> the request fields that fill it
FROM_REQUESTS: list[tuple[InstrumentedAttribute[Any], list[tuple[type[BaseModel], str]]]] = [
    (KnowledgeBase.name, [(KnowledgeBaseCreate, "name"), (CollectionCreate, "name")]),
    (KnowledgeBase.embedding_provider, [(m, "embedding_provider") for m in EMBEDDING]),
    (KnowledgeBase.embedding_model, [(m, "embedding_model") for m in EMBEDDING]),
    (KnowledgeBase.embedding_base_url, [(m, "embedding_base_url") for m in EMBEDDING]),
    (
        KnowledgeBase.text_search_config,
        [(KnowledgeBaseCreate, "text_search_config"), (CollectionCreate, "text_search_config")],
    ),
    (CollectionGrant.user_id, [(GrantIn, "user_id")]),
    (EmbeddingEndpoint.name, [(EmbeddingEndpointCreate, "name")]),
    (EmbeddingEndpoint.base_url, [(EmbeddingEndpointCreate, "base_url")]),
    (Secret.name, [(SecretCreate, "name")]),
    (Secret.provider, [(SecretCreate, "provider")]),
    (SyncSource.connector, [(SourceCreate, "connector")]),
    (SyncSource.name, [(SourceCreate, "name"), (SourcePatch, "name"), (CloneRequest, "name")]),
    (
        SyncSource.organizational_unit,
        [(SourceCreate, "organizational_unit"), (SourcePatch, "organizational_unit")],
    ),
    (ChatAttachmentRender.agent_id, [(AgentIn, "agent_id")]),
    (ChatAttachmentRender.conversation_id, [(AgentIn, "conversation_id")]),
    (RetrievalEvaluation.name, [(EvaluationCreate, "name")]),
    (VisionModelProfile.name, [(VisionProfileCreate, "name")]),
    (VisionModelProfile.model, [(VisionProfileCreate, "model")]),
    (VisionModelProfile.base_url, [(VisionProfileCreate, "base_url")]),
]

#: columns a multipart upload field fills -> the limit its route checks
FROM_UPLOADS = {
    "rag_documents.organizational_unit": service.MAX_UNIT_CHARS,
    "chat_files.organizational_unit": chat_service.MAX_UNIT_CHARS,
    "retrieval_evaluations.name": EVALUATION_NAME_CHARS,  # a BEIR upload's name
}

#: a collection name: ``validate_collection_name`` refuses what does not fit
COLLECTION_NAMES = {
    "knowledge_bases.collection_name",
    "rag_documents.collection_name",
    "sync_sources.collection_name",
    "sync_logs.collection_name",
    "collection_teardowns.collection_name",
}

#: columns no request field fills, and where their values come from
NOT_FROM_REQUESTS = {
    # a closed set of values docproc names (a Literal or enum in the schema)
    "knowledge_bases.scope": "enum",
    "knowledge_bases.vector_type": "enum",
    "secrets.kind": "enum",
    "secrets.visibility": "enum",
    "sync_sources.sync_mode": "enum",
    "sync_logs.mode": "enum",
    "sync_logs.status": "enum",
    "collection_grants.permission": "enum",
    "rag_documents.status": "enum",
    "rag_documents.writer_kind": "enum",
    "rag_documents.source": "enum",
    "chat_attachment_renders.mode": "enum",
    "retrieval_evaluation_runs.trigger": "enum",
    "vision_model_profiles.provider": "enum",
    # the signed bearer token's sub / org
    "audit_log.actor": "token",
    "audit_log.organization_id": "token",
    "chat_files.user_id": "token",
    "chat_attachment_renders.user_id": "token",
    "embedding_endpoints.organization_id": "token",
    "embedding_endpoints.created_by": "token",
    "vision_model_profiles.organization_id": "token",
    "vision_model_profiles.created_by": "token",
    "knowledge_bases.owner_id": "token",
    "knowledge_bases.organization_id": "token",
    "rag_documents.organization_id": "token",
    "rag_documents.uploaded_by": "token",
    "secrets.organization_id": "token",
    "secrets.owner_id": "token",
    "sync_sources.organization_id": "token",
    "sync_sources.created_by": "token",
    "sync_sources.destination_changed_by": "token",
    "retrieval_evaluations.created_by": "token",
    "retrieval_evaluation_runs.started_by": "token",
    # made or cut to fit by docproc
    "chat_files.filename": "clean_filename cuts it",
    "rag_documents.filename": "cut to the column",
    "chat_files.mime_type": "the detected type",
    "chat_files.file_type": "the detected type",
    "rag_documents.filetype": "the supported extension",
    "chat_files.storage_path": "new_storage_path",
    "rag_documents.storage_path": "new_storage_path",
    "rag_documents.parsed_path": "the parser",
    "rag_documents.content_hash": "sha256",
    "rag_document_claims.address_hash": "sha256",
    "chat_attachment_renders.workspace_path": "upload_path",
    "audit_log.action": "docproc's action names",
    "audit_log.target": "an id",
    "outbox.topic": "the bus",
    "outbox.key": "the bus",
    "embedded_deliveries.consumer": "the bus",
    "embedded_deliveries.topic": "the bus",
    "embedded_deliveries.key": "the bus",
    "processed_events.consumer": "the bus",
}


def _key(column: InstrumentedAttribute[Any]) -> str:
    return f"{column.class_.__tablename__}.{column.key}"


def _max_length(model: type[BaseModel], name: str) -> int | None:
    for meta in model.model_fields[name].metadata:
        if isinstance(meta, annotated_types.MaxLen):
            return int(meta.max_length)
    return None


def test_every_string_column_is_accounted_for() -> None:
    columns = {
        f"{table.name}.{column.name}"
        for table in Base.metadata.sorted_tables
        for column in table.columns
        if isinstance(column.type, String) and column.type.length is not None
    }
    accounted = (
        {_key(column) for column, _ in FROM_REQUESTS}
        | set(FROM_UPLOADS)
        | COLLECTION_NAMES
        | set(NOT_FROM_REQUESTS)
    )
    assert columns - accounted == set(), "a new String(n) column: say what bounds its input"
    assert accounted - columns == set()


@pytest.mark.parametrize(
    ("column", "fields"), FROM_REQUESTS, ids=[_key(c) for c, _ in FROM_REQUESTS]
)
def test_a_request_field_is_bounded_by_its_column(
    column: InstrumentedAttribute[Any], fields: list[tuple[type[BaseModel], str]]
) -> None:
    for model, name in fields:
        assert _max_length(model, name) == column_length(column), f"{model.__name__}.{name}"


def test_an_upload_field_is_bounded_by_its_column() -> None:
    assert service.MAX_UNIT_CHARS == column_length(RagDocument.organizational_unit)
    assert chat_service.MAX_UNIT_CHARS == column_length(ChatFile.organizational_unit)
    assert EVALUATION_NAME_CHARS == column_length(RetrievalEvaluation.name)


def test_a_collection_name_that_fits_no_column_is_refused() -> None:
    tables = Base.metadata.tables
    lengths = {tables[t].c[c].type.length for t, c in (k.split(".") for k in COLLECTION_NAMES)}
    assert lengths == {MAX_COLLECTION_NAME_BYTES}
    validate_collection_name("a" * MAX_COLLECTION_NAME_BYTES)
    with pytest.raises(InvalidInput):
        validate_collection_name("a" * (MAX_COLLECTION_NAME_BYTES + 1))


def test_column_length_refuses_a_column_without_one() -> None:
    with pytest.raises(TypeError):
        column_length(RagDocument.error_message)


class TestOrganizationalUnit:
    def test_the_column_is_the_limit(self) -> None:
        unit = "u" * service.MAX_UNIT_CHARS
        assert service.parse_organizational_unit(f"  {unit} ") == unit
        with pytest.raises(InvalidInput) as refused:
            service.parse_organizational_unit(unit + "u")
        assert refused.value.fields[0].field == "organizational_unit"

    def test_blank_is_none(self) -> None:
        assert service.parse_organizational_unit("   ") is None
        assert service.parse_organizational_unit(None) is None


class TestNul:
    def test_the_path_of_the_first_nul(self) -> None:
        assert nul_path({"a": ["ok", {"b": "x\x00"}]}) == "a.1.b"
        assert nul_path({"k\x00": 1}, "config") == "config.k\x00"
        assert nul_path({"a": ["ok", 3, None, {"b": "fine"}]}) is None
