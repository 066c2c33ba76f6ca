"""Request and response bodies of the sync routes."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from docproc_common.connectors import CONNECTORS
from docproc_common.db.models import SyncSource
from pydantic import BaseModel, ConfigDict, Field, JsonValue

from docproc_upload.inputs import column_length

SyncMode = Literal["new_only", "update_only", "full"]
#: The column each field fills bounds it (``docproc_upload.inputs``).
NAME_CHARS = column_length(SyncSource.name)
UNIT_CHARS = column_length(SyncSource.organizational_unit)
CONNECTOR_NAMES = list[JsonValue](sorted(CONNECTORS))


class ConnectorOut(BaseModel):
    name: str
    title: str
    description: str
    #: The connector's ``CONFIG_MODEL`` as JSON schema: the form a wizard draws.
    config_schema: dict[str, Any]
    #: The vault secret kind the source names in ``secret_id`` (null: none).
    secret_kind: str | None
    secret_required: bool
    admin_only: bool
    #: What the connector compares before downloading (``content_hash`` is the fallback).
    change_signal: str


class SourceCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    connector: str = Field(
        max_length=column_length(SyncSource.connector),
        json_schema_extra={"enum": CONNECTOR_NAMES},
    )
    #: How to *find* the documents. A credential never goes here: name a vault secret.
    config: dict[str, Any]
    secret_id: uuid.UUID | None = None
    name: str | None = Field(default=None, max_length=NAME_CHARS)
    sync_mode: SyncMode = "new_only"
    #: Run every this many seconds; null: only when asked (``POST .../run``).
    schedule_seconds: int | None = Field(default=None, ge=1, le=366 * 86400)
    #: The organizational unit every document of this source is filed under.
    organizational_unit: str | None = Field(default=None, max_length=UNIT_CHARS)


class SourcePatch(BaseModel):
    """Only what is sent changes. ``collection_name`` / ``knowledge_base_id`` move the source
    (``PATCH /rag/sync/sources/{id}`` only; a knowledge base's own route refuses a move)."""

    model_config = ConfigDict(extra="forbid")

    config: dict[str, Any] | None = None
    secret_id: uuid.UUID | None = None
    name: str | None = Field(default=None, max_length=NAME_CHARS)
    sync_mode: SyncMode | None = None
    schedule_seconds: int | None = Field(default=None, ge=1, le=366 * 86400)
    organizational_unit: str | None = Field(default=None, max_length=UNIT_CHARS)
    active: bool | None = None
    collection_name: str | None = None
    knowledge_base_id: uuid.UUID | None = None


class CloneRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: Where the clone files its documents (default: the same knowledge base).
    knowledge_base_id: uuid.UUID | None = None
    collection_name: str | None = None
    name: str | None = Field(default=None, max_length=NAME_CHARS)


class SourceOut(BaseModel):
    id: uuid.UUID
    name: str | None
    connector: str
    config: dict[str, Any]
    secret_id: uuid.UUID | None
    collection_name: str | None
    knowledge_base_id: uuid.UUID | None
    organization_id: str | None
    sync_mode: str
    schedule_seconds: int | None
    organizational_unit: str | None
    active: bool
    created_by: str
    created_at: datetime
    last_run_at: datetime | None
    #: Who last changed where the source's credential is sent (an address field of
    #: ``config``: a host, an endpoint, a site or a drive), and when; null until someone does.
    destination_changed_by: str | None = None
    destination_changed_at: datetime | None = None
    #: Who ends up able to read what this source ingests, said with the credential that reads
    #: it. Null for a connector without a credential, or a caller without ``secrets:view``.
    audience: str | None = None


class RunOut(BaseModel):
    sync_log_id: uuid.UUID
    source_id: uuid.UUID | None = None
    status: str


class SyncLogOut(BaseModel):
    id: uuid.UUID
    source_id: uuid.UUID | None
    collection_name: str
    mode: str
    status: str
    total_files: int
    ingested: int
    updated: int
    skipped: int
    failed: int
    deleted: int
    bytes_fetched: int
    listing_complete: bool | None
    error_message: str | None
    started_at: datetime
    finished_at: datetime | None


class SyncLogPage(BaseModel):
    total: int
    limit: int
    offset: int
    items: list[SyncLogOut]


class LocalSyncRequest(BaseModel):
    """``POST /rag/sync/local``: a server directory into a knowledge base (app admins only)."""

    model_config = ConfigDict(extra="forbid")

    path: str
    collection_name: str | None = None
    knowledge_base_id: uuid.UUID | None = None
    sync_mode: SyncMode = "new_only"
