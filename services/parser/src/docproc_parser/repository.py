"""All SQL of the parser."""

from __future__ import annotations

import uuid
from datetime import date

from docproc_common.db.models import RagDocument
from sqlalchemy import func, update
from sqlalchemy.ext.asyncio import AsyncSession


async def record_parsed(
    session: AsyncSession,
    document_id: uuid.UUID,
    parsed_path: str,
    document_date: date | None,
    page_map: list[dict[str, object]] | None,
) -> None:
    """The parsed text's key and its page map, and the metadata's date unless the row already
    has one (the uploader's ``document_date`` wins)."""
    await session.execute(
        update(RagDocument)
        .where(RagDocument.id == document_id)
        .values(
            parsed_path=parsed_path,
            page_map=page_map,
            document_date=func.coalesce(RagDocument.document_date, document_date),
        )
    )
