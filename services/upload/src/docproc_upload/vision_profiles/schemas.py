"""The bodies of ``/api/v1/vision-profiles``."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from docproc_common.db.models import VisionModelProfile
from pydantic import BaseModel, ConfigDict, Field

from docproc_upload.inputs import column_length

#: ``docproc_common.ingestion.VISION_PROVIDERS``: two providers with their own address, and
#: any OpenAI-compatible server the deployment allows (``base_url`` required).
VisionProvider = Literal["openai", "openrouter", "openai-compatible"]


class VisionProfileCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=column_length(VisionModelProfile.name))
    provider: VisionProvider
    #: A model that reads images, e.g. ``gpt-4o-mini``.
    model: str = Field(min_length=1, max_length=column_length(VisionModelProfile.model))
    #: The OpenAI-compatible root; the provider's own when left out (required for
    #: ``openai-compatible``).
    base_url: str | None = Field(
        default=None, min_length=1, max_length=column_length(VisionModelProfile.base_url)
    )
    #: A vault secret of kind ``api_key`` the caller may bind (required unless the provider
    #: is ``openai-compatible``: a keyless server inside the deployment).
    secret_id: uuid.UUID | None = None


class VisionProfileOut(BaseModel):
    id: uuid.UUID
    name: str
    provider: str
    model: str
    base_url: str
    secret_id: uuid.UUID | None
    organization_id: str | None
    created_by: str
    created_at: datetime
