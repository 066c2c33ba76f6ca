"""All SQL of the sync routes."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from docproc_common.auth import EDIT, Principal
from docproc_common.connectors.runs import lock_key
from docproc_common.db.models import (
    CollectionGrant,
    KnowledgeBase,
    SyncLog,
    SyncSource,
)
from sqlalchemy import ColumnElement, and_, func, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.access import Access, reach
from docproc_upload.knowledge_bases.repository import reachable


def unassigned_reach(principal: Principal) -> ColumnElement[bool]:
    """Who reaches a source filed under no knowledge base: its creator in its organization,
    the organization's editors (``collections:edit``). Being app admin adds nothing."""
    same_org = (
        SyncSource.organization_id.is_(None)
        if principal.organization_id is None
        else SyncSource.organization_id == principal.organization_id
    )
    own = and_(same_org, SyncSource.created_by == principal.user_id)
    if principal.organization_id and principal.has(EDIT):
        return or_(own, SyncSource.organization_id == principal.organization_id)
    return own


def reachable_sources(principal: Principal, access: Access) -> ColumnElement[bool]:
    """A predicate on ``SyncSource``: the sources ``principal`` reaches with ``access``."""
    kbs = select(KnowledgeBase.id).where(reachable(reach(principal, access)))
    return or_(
        SyncSource.knowledge_base_id.in_(kbs),
        and_(SyncSource.knowledge_base_id.is_(None), unassigned_reach(principal)),
    )


def logs_of_reachable_sources(
    principal: Principal,
    access: Access,
    *,
    source_id: uuid.UUID | None,
    collection_name: str | None,
) -> ColumnElement[bool]:
    """A predicate on ``SyncLog``: the runs of the sources ``principal`` reaches with
    ``access`` (only ``source_id``'s, only ``collection_name``'s, when given)."""
    sources = select(SyncSource.id).where(reachable_sources(principal, access))
    if source_id is not None:
        sources = sources.where(SyncSource.id == source_id)
    where: ColumnElement[bool] = SyncLog.source_id.in_(sources)
    if collection_name is not None:
        where = where & (SyncLog.collection_name == collection_name)
    return where


async def source_in_kb(
    session: AsyncSession, kb_id: uuid.UUID, source_id: uuid.UUID, *, lock: bool = False
) -> SyncSource | None:
    query = select(SyncSource).where(
        SyncSource.id == source_id, SyncSource.knowledge_base_id == kb_id
    )
    if lock:
        query = query.with_for_update()
    return (await session.execute(query)).scalar_one_or_none()


async def reachable_source(
    session: AsyncSession,
    principal: Principal,
    source_id: uuid.UUID,
    access: Access,
    *,
    lock: bool = False,
) -> SyncSource | None:
    query = select(SyncSource).where(
        SyncSource.id == source_id, reachable_sources(principal, access)
    )
    if lock:
        query = query.with_for_update(of=SyncSource)
    return (await session.execute(query)).scalar_one_or_none()


async def first_kb_on_name(
    session: AsyncSession, collection_name: str, organization_id: str | None
) -> KnowledgeBase | None:
    """The organization's oldest knowledge base on the name (bases outside any organization
    are one group): the one that takes the name's sync sources."""
    return (
        await session.execute(
            select(KnowledgeBase)
            .where(
                KnowledgeBase.collection_name == collection_name,
                KnowledgeBase.organization_id.is_not_distinct_from(organization_id),
            )
            .order_by(KnowledgeBase.created_at, KnowledgeBase.id)
            .limit(1)
        )
    ).scalar_one_or_none()


async def sources_of_kb(session: AsyncSession, kb_id: uuid.UUID) -> Sequence[SyncSource]:
    rows = await session.execute(
        select(SyncSource)
        .where(SyncSource.knowledge_base_id == kb_id)
        .order_by(SyncSource.created_at, SyncSource.id)
    )
    return rows.scalars().all()


async def list_sources(
    session: AsyncSession, principal: Principal, *, limit: int, offset: int
) -> tuple[int, Sequence[SyncSource]]:
    where = reachable_sources(principal, Access.VIEW)
    total = (
        await session.execute(select(func.count()).select_from(SyncSource).where(where))
    ).scalar_one()
    rows = await session.execute(
        select(SyncSource)
        .where(where)
        .order_by(SyncSource.created_at, SyncSource.id)
        .limit(limit)
        .offset(offset)
    )
    return int(total), rows.scalars().all()


async def logs_page(
    session: AsyncSession,
    *,
    source_ids: ColumnElement[bool],
    limit: int,
    offset: int,
) -> tuple[int, Sequence[SyncLog]]:
    """One page of runs, filtered by source id, so ``limit`` and ``total`` count the same rows."""
    total = (
        await session.execute(select(func.count()).select_from(SyncLog).where(source_ids))
    ).scalar_one()
    rows = await session.execute(
        select(SyncLog)
        .where(source_ids)
        .order_by(SyncLog.started_at.desc(), SyncLog.id.desc())
        .limit(limit)
        .offset(offset)
    )
    return int(total), rows.scalars().all()


async def grant_count(session: AsyncSession, kb_id: uuid.UUID) -> int:
    row = await session.execute(
        select(func.count())
        .select_from(CollectionGrant)
        .where(CollectionGrant.knowledge_base_id == kb_id)
    )
    return int(row.scalar_one())


async def open_logs(session: AsyncSession, source_id: uuid.UUID) -> Sequence[SyncLog]:
    rows = await session.execute(
        select(SyncLog)
        .where(
            SyncLog.source_id == source_id, SyncLog.status.in_(("queued", "running", "cancelling"))
        )
        .order_by(SyncLog.started_at.desc())
        .with_for_update()
    )
    return rows.scalars().all()


async def source_idle(session: AsyncSession, source_id: uuid.UUID) -> bool:
    """No run holds the source's lock (probed at transaction level, released at commit)."""
    row = await session.execute(
        text("SELECT pg_try_advisory_xact_lock(:k)"), {"k": lock_key(source_id)}
    )
    return bool(row.scalar())


async def local_source(session: AsyncSession, kb_id: uuid.UUID, path: str) -> SyncSource | None:
    rows = await session.execute(
        select(SyncSource)
        .where(
            SyncSource.knowledge_base_id == kb_id,
            SyncSource.connector == "local",
            SyncSource.config["path"].astext == path,
        )
        .order_by(SyncSource.created_at)
        .limit(1)
    )
    return rows.scalar_one_or_none()


async def deactivate_sources_for_kb(session: AsyncSession, kb_id: uuid.UUID) -> int:
    """A deleted knowledge base unlinks and deactivates the sources that targeted it.

    They keep their configuration and secret and need an explicit reassignment
    (``PATCH /rag/sync/sources/{id}``); another knowledge base later created under
    the same name does not inherit them. Runs still queued are cancelled.
    """
    ids = list(
        (
            await session.execute(
                update(SyncSource)
                .where(SyncSource.knowledge_base_id == kb_id)
                .values(knowledge_base_id=None, collection_name=None, active=False)
                .returning(SyncSource.id)
            )
        ).scalars()
    )
    if ids:
        await session.execute(
            update(SyncLog)
            .where(SyncLog.source_id.in_(ids), SyncLog.status == "queued")
            .values(
                status="cancelled",
                finished_at=func.now(),
                error_message="The knowledge base was deleted",
            )
        )
        await session.execute(
            update(SyncLog)
            .where(SyncLog.source_id.in_(ids), SyncLog.status == "running")
            .values(status="cancelling")
        )
    return len(ids)
