"""The bodies of ``/api/v1/secrets``."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from docproc_common.db.models import Secret
from docproc_common.vault import SecretKind, Visibility
from pydantic import BaseModel, ConfigDict, Field

from docproc_upload.inputs import column_length


class SecretCreate(BaseModel):
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    name: str = Field(min_length=1, max_length=column_length(Secret.name))
    kind: SecretKind
    #: The secret itself, in the shape of its kind (``{"api_key": ...}`` for an api_key).
    value: dict[str, Any]
    visibility: Visibility = Visibility.PRIVATE
    #: What an ``api_key`` is for, e.g. ``openai`` or ``openrouter`` (required for api_key).
    provider: str | None = Field(
        default=None,
        max_length=column_length(Secret.provider),
        pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$",
    )


class SecretOut(BaseModel):
    """A secret's metadata. There is deliberately no field for the value."""

    id: uuid.UUID
    name: str
    kind: str
    provider: str | None
    visibility: Literal["private", "org"]
    owner_id: str
    organization_id: str | None
    created_at: datetime
