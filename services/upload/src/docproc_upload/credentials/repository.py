"""The SQL of the secrets routes: which secrets a caller may see, and who names one (the
vault's sealing and opening live in ``docproc_common.vault``)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from docproc_common.auth import SECRETS_VIEW, Principal
from docproc_common.db.models import KnowledgeBase, Secret, SyncSource
from docproc_common.vault import Visibility
from sqlalchemy import ColumnElement, and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession


async def users_of(session: AsyncSession, secret_id: uuid.UUID) -> tuple[int, int]:
    """How many collections and sync sources name the secret."""
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
    return int(collections), int(sources)


def _visible(principal: Principal) -> ColumnElement[bool]:
    org_match = (
        Secret.organization_id.is_(None)
        if principal.organization_id is None
        else Secret.organization_id == principal.organization_id
    )
    shared = (
        and_(Secret.visibility == Visibility.ORG.value, Secret.organization_id.is_not(None))
        if principal.organization_id is not None and principal.has(SECRETS_VIEW)
        else None
    )
    own = Secret.owner_id == principal.user_id
    return and_(org_match, or_(own, shared) if shared is not None else own)


async def visible_secret(
    session: AsyncSession, principal: Principal, secret_id: uuid.UUID
) -> Secret | None:
    """What ``principal`` may see: their own secrets in their current organization, and the
    organization's shared ones when they hold ``secrets:view``. Anything else is None."""
    return (
        await session.execute(select(Secret).where(Secret.id == secret_id, _visible(principal)))
    ).scalar_one_or_none()


async def lendable_secret(
    session: AsyncSession,
    principal: Principal,
    secret_id: uuid.UUID,
    *,
    kind: str,
    organization_id: str | None,
    provider: str | None = None,
) -> Secret | None:
    """The secret ``principal`` may bind to something of ``organization_id``, or None.

    Binding a key lends it (whatever it is bound to spends it, reads with it, or sends it
    to an address), so it must be one the caller can see today (``visible_secret``), of
    the ``kind`` (and ``provider``) its use needs, in the organization of what binds it.
    One None for every failure, so a refusal enumerates nothing. Every binding asks this:
    an embedding key, a parser's or vision key, a sync source's credential re-pointed.
    """
    query = select(Secret).where(
        Secret.id == secret_id,
        _visible(principal),
        Secret.kind == kind,
        Secret.organization_id.is_(None)
        if organization_id is None
        else Secret.organization_id == organization_id,
    )
    if provider is not None:
        query = query.where(Secret.provider == provider)
    return (await session.execute(query)).scalar_one_or_none()


async def list_visible_secrets(
    session: AsyncSession, principal: Principal, *, kind: str | None = None
) -> Sequence[Secret]:
    query = select(Secret).where(_visible(principal))
    if kind is not None:
        query = query.where(Secret.kind == kind)
    return (await session.execute(query.order_by(Secret.created_at, Secret.id))).scalars().all()
