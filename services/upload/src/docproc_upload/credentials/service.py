"""The vault's API: create, list (metadata only), delete.

A value goes in once and never comes back out: no answer, log line or audit entry
carries it, and a refused value is described by its field names only.

Who may do what:

* **create** - anyone signed in, for themselves (``private``, the default); sharing
  with the organization (``org``) needs ``secrets:view`` in an organization.
* **list** - what the caller may see (``repository.visible_secret``): their
  own secrets in their current organization, and the organization's shared ones with
  ``secrets:view``. Optional ``kind`` filter.
* **delete** - the owner; or, for a secret shared with the organization, a member
  holding both ``secrets:view`` and ``collections:edit`` (an organization admin).
  A secret the caller cannot see is "not found". Collections and sync sources that
  name a deleted secret stop embedding or syncing with a message saying so; nothing
  falls back to another key.

Changing **where** a bound secret is sent (``may_repoint``) lends it again: a sync
source's address, a collection's embedding endpoint.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence

from docproc_common.auth import EDIT, SECRETS_VIEW, Principal
from docproc_common.db.models import Secret
from docproc_common.errors import FieldError, Forbidden, NotFound
from docproc_common.settings import Settings
from docproc_common.vault import SecretKind, Visibility, create_secret
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.audit import record
from docproc_upload.credentials import repository
from docproc_upload.credentials.schemas import SecretCreate

log = logging.getLogger(__name__)


async def create(
    session: AsyncSession, principal: Principal, settings: Settings, body: SecretCreate
) -> Secret:
    if body.visibility == Visibility.ORG and not (
        principal.organization_id and principal.has(SECRETS_VIEW)
    ):
        raise Forbidden("Sharing a secret with the organization needs secrets:view in it")
    secret = await create_secret(
        session,
        owner_id=principal.user_id,
        organization_id=principal.organization_id,
        name=body.name,
        kind=body.kind.value,
        value=body.value,
        visibility=body.visibility.value,
        master_key=settings.vault.key(),
        provider=body.provider,
    )
    await record(
        session,
        principal,
        "secret.created",
        secret,
        {"kind": secret.kind, "provider": secret.provider, "name": secret.name},
    )
    return secret


async def visible(
    session: AsyncSession, principal: Principal, kind: SecretKind | None
) -> list[Secret]:
    return list(
        await repository.list_visible_secrets(session, principal, kind=kind.value if kind else None)
    )


async def delete(session: AsyncSession, principal: Principal, secret_id: uuid.UUID) -> None:
    secret = await repository.visible_secret(session, principal, secret_id)
    if secret is None:
        raise NotFound("Secret not found")
    if secret.owner_id != principal.user_id and not (
        secret.visibility == Visibility.ORG and principal.has(SECRETS_VIEW) and principal.has(EDIT)
    ):
        raise Forbidden(
            "Deleting a secret shared with the organization needs secrets:view and "
            "collections:edit; a private one is its owner's"
        )
    collections, sources = await repository.users_of(session, secret_id)
    await session.delete(secret)
    await record(
        session,
        principal,
        "secret.deleted",
        secret,
        {"kind": secret.kind, "collections": collections, "sync_sources": sources},
    )
    log.info(
        "secret %s deleted by %s; %d collection(s) and %d source(s) named it",
        secret_id,
        principal.user_id,
        collections,
        sources,
    )


async def may_repoint(
    session: AsyncSession,
    principal: Principal,
    secret_id: uuid.UUID,
    *,
    kind: str,
    organization_id: str | None,
    provider: str | None = None,
    holder: str,
    fields: Sequence[str],
) -> None:
    """Refuse (403 naming ``fields``) a change of where ``holder`` sends its bound secret
    unless the caller could bind that secret (``repository.lendable_secret``).

    Sending a bound key to another address is lending it again: a member who edits the
    holder but may not see the key (no ``secrets:view``, or a grantee of another
    organization) would otherwise receive it at their own host.
    """
    lendable = await repository.lendable_secret(
        session,
        principal,
        secret_id,
        kind=kind,
        organization_id=organization_id,
        provider=provider,
    )
    if lendable is None:
        raise Forbidden(
            f"Changing where {holder} sends its credential lends that credential again, "
            "which needs what binding it needs: sight of the secret (secrets:view for one "
            "shared with the organization)",
            fields=[FieldError(f, "re-points the bound secret") for f in fields],
        )
