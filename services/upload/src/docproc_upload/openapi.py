"""What the public API documents beside its bodies: the error answers and the operation ids.

Every error is the one envelope ``docproc_common.errors.AppError.envelope`` writes
(``{"error": {"code", "message", "details": {"fields": [...]}}}``), the 422 of a body or
parameter that fails its schema included (``docproc_common.http``). Every route lists
``ERRORS``: what any route of the API can answer (a missing token, a body over the
request cap, an invalid input, a resource the caller does not reach, a busy or
unavailable upstream), so a generated client knows each status and its body.

An operation's id is its route function's name, unique across the API
(``operation_id``), so a generated client's method names do not change when a path's
prefix or a method does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

from fastapi import APIRouter, Path
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field

from docproc_upload.knowledge_bases.schemas import COLLECTION_NAME_SCHEMA


class FieldProblem(BaseModel):
    #: The dotted path of the refused input, e.g. ``ingestion_config.chunk_size``.
    field: str
    message: str


class ErrorDetails(BaseModel):
    """What the error adds; ``fields`` names each refused input. Other keys are the error's own."""

    model_config = ConfigDict(extra="allow")

    fields: list[FieldProblem] = Field(default_factory=list)


class ErrorBody(BaseModel):
    #: Stable and machine-readable, e.g. ``INVALID_INPUT``, ``NOT_FOUND``, ``BUSY``.
    code: str
    message: str
    details: ErrorDetails


class ErrorEnvelope(BaseModel):
    error: ErrorBody


_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before trying again",
        "schema": {"type": "integer", "minimum": 0},
    }
}

_DESCRIPTIONS = {
    400: "Invalid input (details.fields names the inputs)",
    401: "Missing or invalid bearer token",
    403: "The caller's role does not allow this",
    404: "Not found (also when access is denied)",
    409: "Conflict with the resource's state (a name taken or being deleted, a run in progress)",
    413: "The request body or the file is too large",
    422: "A body, path or query parameter that does not fit its schema (details.fields)",
    503: "Busy or an upstream service unavailable; retry after Retry-After",
    507: "The file store is full; nothing was kept",
}

ERRORS: dict[int | str, dict[str, Any]] = {
    status: {
        "model": ErrorEnvelope,
        "description": description,
        **({"headers": _RETRY_AFTER} if status == 503 else {}),
    }
    for status, description in _DESCRIPTIONS.items()
}


def operation_id(route: APIRoute) -> str:
    return route.name


def operation_ids(routers: Iterable[APIRouter]) -> set[str]:
    """The operation ids of every route of ``routers``."""
    return {operation_id(r) for router in routers for r in router.routes if isinstance(r, APIRoute)}


#: A collection name in a path: documented with ``validate_collection_name``'s rule, which
#: the service still applies (a 400 with the rule's reason, as for a body's name).
CollectionNamePath = Annotated[str, Path(json_schema_extra=COLLECTION_NAME_SCHEMA)]
