"""All SQL of the teardown service."""

from __future__ import annotations

import uuid
from datetime import timedelta

from docproc_common.db.models import CollectionTeardown
from sqlalchemy import delete, func, select, text, update
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
    row = (
        await session.execute(
            text(
                "SELECT count(*), COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0) "
                "FROM collection_teardowns"
            )
        )
    ).one()
    return int(row[0]), float(row[1])
