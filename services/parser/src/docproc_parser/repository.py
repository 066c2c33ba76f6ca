"""All SQL of the parser."""

from __future__ import annotations

import uuid

from docproc_common.db.models import DocumentStatus, RagDocument
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession


async def current_attempt(
    session: AsyncSession, document_id: uuid.UUID, attempt_id: uuid.UUID
) -> RagDocument | None:
    """The tracking row if it still waits for exactly this attempt (locked); None if deleted or superseded."""
    doc = (
        await session.execute(
            select(RagDocument).where(RagDocument.id == document_id).with_for_update()
        )
    ).scalar_one_or_none()
    if doc is None or doc.status != DocumentStatus.PROCESSING or doc.attempt_id != attempt_id:
        return None
    return doc


async def record_parsed(session: AsyncSession, document_id: uuid.UUID, parsed_path: str) -> None:
    await session.execute(
        update(RagDocument).where(RagDocument.id == document_id).values(parsed_path=parsed_path)
    )
