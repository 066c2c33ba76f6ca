"""The vault's API under ``/api/v1/secrets``: create, list (metadata only), delete.

A value goes in once and never comes back out: no answer, log line or audit entry
carries it, and a refused value is described by its field names only.

Who may do what:

* **create** - anyone signed in, for themselves (``private``, the default); sharing
  with the organization (``org``) needs ``secrets:view`` in an organization.
* **list** - what the caller may see (``docproc_common.vault.visible_secret``): their
  own secrets in their current organization, and the organization's shared ones with
  ``secrets:view``. Optional ``kind`` filter.
* **delete** - the owner; or, for a secret shared with the organization, a member
  holding both ``secrets:view`` and ``collections:edit`` (an organization admin).
  A secret the caller cannot see is "not found". Collections and sync sources that
  name a deleted secret stop embedding or syncing with a message saying so; nothing
  falls back to another key.

No ``from __future__ import annotations`` here: FastAPI must see the closure-local
dependency aliases as objects, not strings.
"""

import logging
import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from docproc_common.auth import EDIT, SECRETS_VIEW, Principal, principal_from_header
from docproc_common.db.models import KnowledgeBase, Secret, SyncSource
from docproc_common.errors import Forbidden, NotFound
from docproc_common.runtime import Runtime
from docproc_common.vault import (
    SecretKind,
    Visibility,
    create_secret,
    list_visible_secrets,
    visible_secret,
)
from fastapi import APIRouter, Depends, Header, Query, Response, status
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.audit import record
from docproc_upload.inputs import column_length

log = logging.getLogger(__name__)


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


async def delete_secret(session: AsyncSession, principal: Principal, secret_id: uuid.UUID) -> None:
    secret = await visible_secret(session, principal, secret_id)
    if secret is None:
        raise NotFound("Secret not found")
    if secret.owner_id != principal.user_id and not (
        secret.visibility == Visibility.ORG and principal.has(SECRETS_VIEW) and principal.has(EDIT)
    ):
        raise Forbidden(
            "Deleting a secret shared with the organization needs secrets:view and "
            "collections:edit; a private one is its owner's"
        )
    collections = (
        await session.execute(
            select(func.count())
            .select_from(KnowledgeBase)
            .where(KnowledgeBase.embedding_secret_id == secret_id)
        )
    ).scalar_one()
    sources = (
        await session.execute(
            select(func.count()).select_from(SyncSource).where(SyncSource.secret_id == secret_id)
        )
    ).scalar_one()
    await session.delete(secret)
    await record(
        session,
        principal,
        "secret.deleted",
        target=str(secret_id),
        organization_id=secret.organization_id,
        details={"kind": secret.kind, "collections": collections, "sync_sources": sources},
    )
    log.info(
        "secret %s deleted by %s; %d collection(s) and %d source(s) named it",
        secret_id,
        principal.user_id,
        collections,
        sources,
    )


def build_secrets_router(runtime: Runtime) -> APIRouter:
    router = APIRouter(prefix="/api/v1", tags=["secrets"])
    settings = runtime.settings

    async def principal(authorization: Annotated[str | None, Header()] = None) -> Principal:
        return principal_from_header(settings.auth, authorization)

    async def session() -> AsyncSession:  # type: ignore[misc]
        async with runtime.sessionmaker() as s:
            yield s

    Caller = Annotated[Principal, Depends(principal)]
    Session = Annotated[AsyncSession, Depends(session)]

    def out(secret: Secret) -> SecretOut:
        return SecretOut.model_validate(secret, from_attributes=True)

    @router.post("/secrets", status_code=status.HTTP_201_CREATED, response_model=SecretOut)
    async def create(body: SecretCreate, caller: Caller, db: Session) -> SecretOut:
        if body.visibility == Visibility.ORG and not (
            caller.organization_id and caller.has(SECRETS_VIEW)
        ):
            raise Forbidden("Sharing a secret with the organization needs secrets:view in it")
        async with db.begin():
            secret = await create_secret(
                db,
                owner_id=caller.user_id,
                organization_id=caller.organization_id,
                name=body.name,
                kind=body.kind.value,
                value=body.value,
                visibility=body.visibility.value,
                master_key=settings.vault.master_key.get_secret_value(),
                provider=body.provider,
            )
            await record(
                db,
                caller,
                "secret.created",
                target=str(secret.id),
                organization_id=secret.organization_id,
                details={"kind": secret.kind, "provider": secret.provider, "name": secret.name},
            )
            result = out(secret)
        return result

    @router.get("/secrets", response_model=list[SecretOut])
    async def list_secrets(
        caller: Caller, db: Session, kind: Annotated[SecretKind | None, Query()] = None
    ) -> list[SecretOut]:
        secrets = await list_visible_secrets(db, caller, kind=kind.value if kind else None)
        return [out(s) for s in secrets]

    @router.delete("/secrets/{secret_id}", status_code=status.HTTP_204_NO_CONTENT)
    async def delete(secret_id: uuid.UUID, caller: Caller, db: Session) -> Response:
        async with db.begin():
            await delete_secret(db, caller, secret_id)
        return Response(status_code=status.HTTP_204_NO_CONTENT)

    return router
