"""The SQL of the secrets routes (the vault's own lives in ``docproc_common.vault``)."""

from __future__ import annotations

import uuid

from docproc_common.db.models import KnowledgeBase, SyncSource
from sqlalchemy import func, select
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
