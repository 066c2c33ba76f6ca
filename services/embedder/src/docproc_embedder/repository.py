"""All SQL of the embedder."""

from __future__ import annotations

import logging
import uuid

from docproc_common.bus.outbox import enqueue
from docproc_common.db.models import DocumentStatus, KnowledgeBase, RagDocument, WriterKind
from docproc_common.documents import delete_unclaimed, document_files, not_addressed_elsewhere
from docproc_common.events import DocumentDeleted
from docproc_common.vectorstore import delete_documents
from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

log = logging.getLogger(__name__)


async def share_lock_kb(session: AsyncSession, kb_id: uuid.UUID) -> KnowledgeBase | None:
    """The knowledge base, locked against a concurrent delete until this transaction ends."""
    return (
        await session.execute(
            select(KnowledgeBase).where(KnowledgeBase.id == kb_id).with_for_update(read=True)
        )
    ).scalar_one_or_none()


async def kb_of(session: AsyncSession, kb_id: uuid.UUID) -> KnowledgeBase | None:
    return await session.get(KnowledgeBase, kb_id)


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


async def local_models_in_use(session: AsyncSession) -> set[str]:
    """The models of provider ``local`` (built-in or mounted) some knowledge base embeds with."""
    rows = await session.execute(
        select(KnowledgeBase.embedding_model)
        .where(KnowledgeBase.embedding_provider == "local")
        .distinct()
    )
    return set(rows.scalars())


async def retire_replaced(session: AsyncSession, doc: RagDocument) -> int:
    """An upload with ``replace=true`` has just been completed (its chunks written in this
    transaction): the earlier documents of its name in its knowledge base go, rows now,
    chunks and files after commit (``delete_unclaimed``: one a sync source still claims
    stays). Insert before delete, so a search finds one of them throughout.

    Earlier means created before it, whatever their status: a failed attempt, or one
    still indexing (it then finds its row gone and writes nothing); a later upload of the
    name is never touched. A failed retirement is logged, not a failed ingest: the new
    document is in, and a duplicate someone can see and delete is no failure.
    """
    if not doc.replace_by_name or doc.knowledge_base_id is None:
        return 0
    try:
        async with session.begin_nested():
            earlier = await session.execute(
                select(RagDocument.id).where(
                    RagDocument.knowledge_base_id == doc.knowledge_base_id,
                    RagDocument.filename == doc.filename,
                    not_addressed_elsewhere(),
                    RagDocument.id != doc.id,
                    RagDocument.created_at <= doc.created_at,
                )
            )
            return await delete_unclaimed(session, earlier.scalars())
    except Exception:  # noqa: BLE001 - see the docstring
        log.exception("the documents %s replaces in its base were not retired", doc.id)
        return 0


async def retire_earlier_ingests(session: AsyncSession, doc: RagDocument) -> int:
    """Operator content has just been completed (its chunks written in this transaction): the
    earlier ingests of its address on its name go, their rows and chunks in this
    transaction, their files after commit (``DocumentDeleted``), so a search finds one set
    or the other. Earlier means created before it, whatever their status (one still
    indexing then finds its row gone and writes nothing). A failed retirement is logged,
    not a failed ingest: the new document is in, and a duplicate someone can see and
    delete is no failure."""
    try:
        async with session.begin_nested():
            rows = await session.execute(
                select(RagDocument).where(
                    RagDocument.collection_name == doc.collection_name,
                    RagDocument.source_path == doc.source_path,
                    RagDocument.knowledge_base_id.is_(None),
                    RagDocument.organization_id.is_(None),
                    RagDocument.writer_kind == WriterKind.OPERATOR,
                    RagDocument.id != doc.id,
                    RagDocument.created_at <= doc.created_at,
                )
            )
            old = list(rows.scalars())
            if not old:
                return 0
            await delete_documents(
                session,
                doc.collection_name,
                [r.vector_document_id for r in old if r.vector_document_id],
            )
            await session.execute(
                delete(RagDocument).where(RagDocument.id.in_([r.id for r in old]))
            )
            if files := document_files(old):
                await enqueue(
                    session,
                    DocumentDeleted(
                        collection_name=doc.collection_name,
                        vector_document_ids=[],
                        storage_paths=files,
                    ),
                )
    except Exception:  # noqa: BLE001 - see the docstring
        log.exception(
            "the earlier ingest of %s in %s was not removed", doc.source_path, doc.collection_name
        )
        return 0
    return len(old)
