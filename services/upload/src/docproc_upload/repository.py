"""All SQL of the upload service."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from docproc_common.db.models import (
    CollectionTeardown,
    DocumentStatus,
    KnowledgeBase,
    RagDocument,
)
from sqlalchemy import delete, func, select, text
from sqlalchemy.ext.asyncio import AsyncSession


async def kbs_named(session: AsyncSession, collection_name: str) -> list[KnowledgeBase]:
    rows = await session.execute(
        select(KnowledgeBase)
        .where(KnowledgeBase.collection_name == collection_name)
        .order_by(KnowledgeBase.created_at, KnowledgeBase.id)
    )
    return list(rows.scalars())


async def is_reserved(session: AsyncSession, collection_name: str) -> bool:
    row = await session.execute(
        select(func.count())
        .select_from(CollectionTeardown)
        .where(CollectionTeardown.collection_name == collection_name)
    )
    return bool(row.scalar())


async def lock_name(session: AsyncSession, collection_name: str) -> None:
    """Serialize claims of one name for the rest of the transaction."""
    await session.execute(
        text("SELECT pg_advisory_xact_lock(hashtextextended(:n, 7))"),
        {"n": f"claim:{collection_name}"},
    )


async def status_counts(session: AsyncSession, kb_ids: Sequence[uuid.UUID]) -> dict[str, int]:
    rows = await session.execute(
        select(RagDocument.status, func.count())
        .where(RagDocument.knowledge_base_id.in_(list(kb_ids)))
        .group_by(RagDocument.status)
    )
    return {status: int(n) for status, n in rows.all()}


async def documents_of(session: AsyncSession, kb_ids: Sequence[uuid.UUID]) -> list[RagDocument]:
    rows = await session.execute(
        select(RagDocument).where(RagDocument.knowledge_base_id.in_(list(kb_ids)))
    )
    return list(rows.scalars())


async def delete_documents(session: AsyncSession, ids: Sequence[uuid.UUID]) -> None:
    if ids:
        await session.execute(delete(RagDocument).where(RagDocument.id.in_(list(ids))))


async def delete_kbs(session: AsyncSession, ids: Sequence[uuid.UUID]) -> None:
    if ids:
        await session.execute(delete(KnowledgeBase).where(KnowledgeBase.id.in_(list(ids))))


async def tracking_rows(
    session: AsyncSession, ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, RagDocument]:
    if not ids:
        return {}
    rows = await session.execute(select(RagDocument).where(RagDocument.id.in_(list(ids))))
    return {d.id: d for d in rows.scalars()}


async def count_stuck(session: AsyncSession, minutes: int) -> int:
    row = await session.execute(
        select(func.count())
        .select_from(RagDocument)
        .where(
            RagDocument.status == DocumentStatus.PROCESSING,
            RagDocument.created_at < func.now() - text(f"interval '{int(minutes)} minutes'"),
        )
    )
    return int(row.scalar() or 0)
