"""Versioned event payloads. Events carry ids and storage keys, never file bytes or chunk text.

Topics are past-tense events with a version, ``docproc.<things>.<happened>.v<N>``,
keyed by the id whose order matters.
"""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, field_validator


class Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    TOPIC: ClassVar[str]
    schema_version: int = 1

    @field_validator("schema_version")
    @classmethod
    def _readable_version(cls, version: int) -> int:
        """A version this code does not read is refused (a dead letter), not read as its own."""
        known = cls.model_fields["schema_version"].default
        if version != known:
            raise ValueError(f"schema_version {version} is not {known}, the version read here")
        return version

    def key(self) -> str:
        raise NotImplementedError


class DocumentAccepted(Event):
    """A tracking row is durable and its original is stored: parse it."""

    TOPIC: ClassVar[str] = "docproc.documents.accepted.v1"

    document_id: uuid.UUID
    attempt_id: uuid.UUID
    collection_name: str
    knowledge_base_id: uuid.UUID | None
    storage_path: str
    filename: str
    filetype: str
    ingestion_config: dict[str, Any]
    staged: bool = False  # a synced file's temporary copy: the parser deletes it when done

    def key(self) -> str:
        return str(self.document_id)


class DocumentParsed(Event):
    """Parsed text and the chunk set are in storage under these keys: embed them."""

    TOPIC: ClassVar[str] = "docproc.documents.parsed.v1"

    document_id: uuid.UUID
    attempt_id: uuid.UUID
    collection_name: str
    knowledge_base_id: uuid.UUID | None
    chunks_path: str
    parsed_path: str
    chunk_count: int

    def key(self) -> str:
        return str(self.document_id)


class DocumentIndexed(Event):
    TOPIC: ClassVar[str] = "docproc.documents.indexed.v1"

    document_id: uuid.UUID
    collection_name: str
    vector_document_id: uuid.UUID
    chunk_count: int

    def key(self) -> str:
        return str(self.document_id)


class DocumentFailed(Event):
    TOPIC: ClassVar[str] = "docproc.documents.failed.v1"

    document_id: uuid.UUID
    collection_name: str
    stage: str
    error_message: str

    def key(self) -> str:
        return str(self.document_id)


class DocumentDeleted(Event):
    """A document's row is gone: remove its chunks and files durably."""

    TOPIC: ClassVar[str] = "docproc.documents.deleted.v1"

    collection_name: str
    vector_document_ids: list[uuid.UUID]
    storage_paths: list[str]

    def key(self) -> str:
        return self.collection_name


class CollectionDeleted(Event):
    """A teardown reservation is committed: finish it (drop the table, delete files)."""

    TOPIC: ClassVar[str] = "docproc.collections.deleted.v1"

    teardown_id: uuid.UUID
    collection_name: str

    def key(self) -> str:
        return self.collection_name


class SyncRequested(Event):
    TOPIC: ClassVar[str] = "docproc.sync.requested.v1"

    sync_log_id: uuid.UUID
    collection_name: str
    knowledge_base_id: uuid.UUID | None
    connector: str
    config: dict[str, Any]
    sync_mode: str
    source_id: uuid.UUID | None = None
    organizational_unit: str | None = None
    #: A run continued in slices: the files up to this address (in address order) are done.
    resume_after: str | None = None

    def key(self) -> str:
        return str(self.source_id or self.sync_log_id)


EVENT_TYPES: dict[str, type[Event]] = {
    cls.TOPIC: cls
    for cls in (
        DocumentAccepted,
        DocumentParsed,
        DocumentIndexed,
        DocumentFailed,
        DocumentDeleted,
        CollectionDeleted,
        SyncRequested,
    )
}
