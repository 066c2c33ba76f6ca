"""The bodies of the embedding catalog and registered-endpoint routes."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from docproc_common.db.models import EmbeddingEndpoint
from pydantic import BaseModel, ConfigDict, Field

from docproc_upload.inputs import column_length

_PORT = r"([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
#: What ``base_urls.normalize_url`` accepts, as a pattern: http(s), a host, maybe a port
#: and a path; no user info, query or fragment.
ENDPOINT_URL_PATTERN = rf"^[Hh][Tt][Tt][Pp][Ss]?://[A-Za-z0-9._~-]+(:{_PORT})?(/[^?#\s\x00]*)?$"


class EmbeddingModelOut(BaseModel):
    model: str
    dimensions: int
    max_input_tokens: int


class EmbeddingProviderOut(BaseModel):
    name: str
    label: str
    #: What a collection on this provider names: a vault key, a registered endpoint, nothing.
    credential: Literal["secret", "endpoint", "none"]
    supports_base_url: bool
    default_base_url: str | None
    models: list[EmbeddingModelOut]


class EmbeddingCatalogOut(BaseModel):
    providers: list[EmbeddingProviderOut]


class ServedModelsOut(BaseModel):
    provider: str
    base_url: str
    #: False when the endpoint could not be asked: ``models`` is then the whole catalog.
    confirmed: bool
    models: list[EmbeddingModelOut]


class EmbeddingEndpointCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=column_length(EmbeddingEndpoint.name))
    #: The OpenAI-compatible root of the service, e.g. ``http://ollama:11434/v1``.
    base_url: str = Field(
        min_length=1,
        max_length=column_length(EmbeddingEndpoint.base_url),
        # what ``base_urls.normalize_url`` accepts: http(s), no user info, query or fragment
        json_schema_extra={"pattern": ENDPOINT_URL_PATTERN},
    )
    #: ``deployment``: for every organization and app-scoped collections (app admin only).
    scope: Literal["org", "deployment"] = "org"


class EmbeddingEndpointOut(BaseModel):
    id: uuid.UUID
    name: str
    base_url: str
    organization_id: str | None
    created_at: datetime
