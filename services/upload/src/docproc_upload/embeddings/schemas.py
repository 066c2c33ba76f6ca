"""The bodies of the embedding catalog and registered-endpoint routes."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from docproc_common.db.models import EmbeddingEndpoint
from pydantic import BaseModel, ConfigDict, Field

from docproc_upload.inputs import column_length


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
    base_url: str = Field(min_length=1, max_length=column_length(EmbeddingEndpoint.base_url))
    #: ``deployment``: for every organization and app-scoped collections (app admin only).
    scope: Literal["org", "deployment"] = "org"


class EmbeddingEndpointOut(BaseModel):
    id: uuid.UUID
    name: str
    base_url: str
    organization_id: str | None
    created_at: datetime
