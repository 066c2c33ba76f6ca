"""All SQL of the teardown service."""

from __future__ import annotations

import uuid
from datetime import timedelta

from docproc_common.db.engine import backlog
from docproc_common.db.models import CollectionTeardown, DocumentStatus, RagDocument
from docproc_common.db.vector_tables import vector_table_name
from docproc_common.vectorstore import lock_for_writing, table_exists
from sqlalchemy import delete, func, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession


async def lock_reservation(
    session: AsyncSession, teardown_id: uuid.UUID
) -> CollectionTeardown | None:
    return (
        await session.execute(
            select(CollectionTeardown)
            .where(CollectionTeardown.id == teardown_id)
            .with_for_update(skip_locked=True)
        )
    ).scalar_one_or_none()


async def release(session: AsyncSession, teardown_id: uuid.UUID) -> None:
    await session.execute(delete(CollectionTeardown).where(CollectionTeardown.id == teardown_id))


async def record_failure(session: AsyncSession, teardown_id: uuid.UUID, error: str) -> None:
    await session.execute(
        update(CollectionTeardown)
        .where(CollectionTeardown.id == teardown_id)
        .values(attempts=CollectionTeardown.attempts + 1, last_error=error)
    )


async def overdue(session: AsyncSession, older_than: timedelta) -> list[uuid.UUID]:
    rows = await session.execute(
        select(CollectionTeardown.id).where(CollectionTeardown.created_at < func.now() - older_than)
    )
    return list(rows.scalars())


async def pending(session: AsyncSession) -> tuple[int, float]:
    return await backlog(session, "collection_teardowns")


async def keeps_files(session: AsyncSession, collection_name: str) -> bool:
    """Does a row left on the name still point at a stored file (another tenant's upload)?"""
    row = await session.execute(
        select(func.count())
        .select_from(RagDocument)
        .where(
            RagDocument.collection_name == collection_name,
            or_(RagDocument.storage_path.is_not(None), RagDocument.parsed_path.is_not(None)),
        )
    )
    return bool(row.scalar())


async def fail_left_behind(session: AsyncSession, collection_name: str, message: str) -> int:
    """The rows a dropped table leaves on its name describe nothing any more: ``error``,
    no chunks, no vector document (so none of them holds the name either)."""
    result = await session.execute(
        update(RagDocument)
        .where(
            RagDocument.collection_name == collection_name,
            RagDocument.status != DocumentStatus.ERROR,
        )
        .values(
            status=DocumentStatus.ERROR,
            error_message=message,
            chunk_count=0,
            vector_document_id=None,
            completed_at=func.now(),
        )
    )
    return int(getattr(result, "rowcount", 0) or 0)


async def delete_knowledge_base_chunks(
    session: AsyncSession, collection: str, knowledge_base_id: uuid.UUID
) -> int:
    if not await table_exists(session, collection):
        return 0
    table = vector_table_name(collection)
    await lock_for_writing(session, collection)
    result = await session.execute(
        text(f"DELETE FROM {table} WHERE knowledge_base_id = :kb"), {"kb": knowledge_base_id}
    )
    return int(getattr(result, "rowcount", 0) or 0)
