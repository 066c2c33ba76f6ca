"""All SQL of the sync service."""

from __future__ import annotations

import uuid

from docproc_common.db.models import DocumentStatus, KnowledgeBase, RagDocument, SyncLog
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession


async def kb(session: AsyncSession, kb_id: uuid.UUID) -> KnowledgeBase | None:
    return await session.get(KnowledgeBase, kb_id)


async def existing_document(
    session: AsyncSession, kb_id: uuid.UUID, source_path: str
) -> tuple[uuid.UUID, str | None, str] | None:
    """The newest tracked document at this address in this knowledge base: id, content_hash, status."""
    row = (
        await session.execute(
            select(RagDocument.id, RagDocument.content_hash, RagDocument.status)
            .where(RagDocument.knowledge_base_id == kb_id, RagDocument.source_path == source_path)
            .order_by(RagDocument.created_at.desc())
            .limit(1)
        )
    ).first()
    return None if row is None else (row[0], row[1], row[2])


async def start_log(session: AsyncSession, log_id: uuid.UUID, total: int) -> None:
    await session.execute(
        update(SyncLog).where(SyncLog.id == log_id).values(status="running", total_files=total)
    )


async def finish_log(
    session: AsyncSession, log_id: uuid.UUID, counts: dict[str, int], status: str
) -> None:
    await session.execute(
        update(SyncLog)
        .where(SyncLog.id == log_id)
        .values(status=status, finished_at=func.now(), **counts)
    )


def is_current(status: str, stored_hash: str | None, content_hash: str) -> bool:
    return status == DocumentStatus.DONE and stored_hash is not None and stored_hash == content_hash
