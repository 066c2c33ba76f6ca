"""All SQL of the parser."""

from __future__ import annotations

import uuid

from docproc_common.db.models import RagDocument
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession


async def record_parsed(session: AsyncSession, document_id: uuid.UUID, parsed_path: str) -> None:
    await session.execute(
        update(RagDocument).where(RagDocument.id == document_id).values(parsed_path=parsed_path)
    )
