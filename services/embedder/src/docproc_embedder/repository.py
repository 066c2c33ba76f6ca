"""All SQL of the embedder."""

from __future__ import annotations

import uuid

from docproc_common.db.models import CollectionTeardown, DocumentStatus, KnowledgeBase, RagDocument
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession


async def share_lock_kb(session: AsyncSession, kb_id: uuid.UUID) -> KnowledgeBase | None:
    """The knowledge base, locked against a concurrent delete until this transaction ends."""
    return (
        await session.execute(
            select(KnowledgeBase).where(KnowledgeBase.id == kb_id).with_for_update(read=True)
        )
    ).scalar_one_or_none()


async def kb_of(session: AsyncSession, kb_id: uuid.UUID) -> KnowledgeBase | None:
    return await session.get(KnowledgeBase, kb_id)


async def reserved(session: AsyncSession, collection_name: str) -> bool:
    row = await session.execute(
        select(func.count())
        .select_from(CollectionTeardown)
        .where(CollectionTeardown.collection_name == collection_name)
    )
    return bool(row.scalar())


async def complete(
    session: AsyncSession, document_id: uuid.UUID, vector_document_id: uuid.UUID, chunk_count: int
) -> None:
    await session.execute(
        update(RagDocument)
        .where(RagDocument.id == document_id)
        .values(
            status=DocumentStatus.DONE,
            vector_document_id=vector_document_id,
            chunk_count=chunk_count,
            error_message=None,
            completed_at=func.now(),
        )
    )


async def local_model_in_use(session: AsyncSession) -> bool:
    """Whether any knowledge base embeds with the built-in local model."""
    row = await session.execute(
        select(select(KnowledgeBase.id).where(KnowledgeBase.embedding_provider == "local").exists())
    )
    return bool(row.scalar())
