"""Tracking-row transitions shared by the pipeline stages (``rag_documents``)."""

from __future__ import annotations

import logging
import uuid

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_common.bus.outbox import enqueue
from docproc_common.db.models import DocumentStatus, RagDocument
from docproc_common.events import DocumentFailed
from docproc_common.failures import Stage, failure_message

log = logging.getLogger(__name__)


async def lock_current_attempt(
    session: AsyncSession, document_id: uuid.UUID, attempt_id: uuid.UUID
) -> RagDocument | None:
    """The tracking row, locked, if it still waits for exactly this attempt.

    None when it was deleted, superseded by a retry, or already finished: a stage
    that gets None writes nothing.
    """
    doc = (
        await session.execute(
            select(RagDocument).where(RagDocument.id == document_id).with_for_update()
        )
    ).scalar_one_or_none()
    if doc is None or doc.status != DocumentStatus.PROCESSING or doc.attempt_id != attempt_id:
        return None
    return doc


async def fail_document(
    session: AsyncSession,
    document_id: uuid.UUID,
    attempt_id: uuid.UUID,
    stage: Stage,
    exc: BaseException,
    collection_name: str,
) -> bool:
    """Mark this attempt ``error`` with the three-part message; the first handler to record keeps it.

    Only a row still ``processing`` for this very attempt changes, so a stale
    attempt never overwrites a newer one and a recorded failure is never replaced.
    """
    message = failure_message(stage, exc)
    result = await session.execute(
        update(RagDocument)
        .where(
            RagDocument.id == document_id,
            RagDocument.attempt_id == attempt_id,
            RagDocument.status == DocumentStatus.PROCESSING,
        )
        .values(status=DocumentStatus.ERROR, error_message=message, completed_at=func.now())
    )
    changed = bool(getattr(result, "rowcount", 0))
    if changed:
        await retire_failed_attempts(session, document_id)
        await enqueue(
            session,
            DocumentFailed(
                document_id=document_id,
                collection_name=collection_name,
                stage=stage.value,
                error_message=message,
            ),
        )
    return changed


async def retire_failed_attempts(session: AsyncSession, document_id: uuid.UUID) -> int:
    """Remove earlier *failed* rows for the same address in the same scope as ``document_id``.

    By address (``source_path``), never by filename: ``a/readme.md`` and
    ``b/readme.md`` share a name. ``error`` rows only: a ``processing`` row is a
    live attempt of an overlapping ingest. In the row's own knowledge base (or,
    for a row filed under none, among the unfiled rows of its organization).
    An upload has no address and retires nothing. Failed rows wrote no vectors,
    so removing the row is all there is to do.
    """
    doc = await session.get(RagDocument, document_id)
    if doc is None or doc.source_path is None:
        return 0
    scope = (
        RagDocument.knowledge_base_id == doc.knowledge_base_id
        if doc.knowledge_base_id is not None
        else (RagDocument.knowledge_base_id.is_(None))
        & (RagDocument.organization_id.is_not_distinct_from(doc.organization_id))
    )
    result = await session.execute(
        delete(RagDocument).where(
            RagDocument.collection_name == doc.collection_name,
            RagDocument.source_path == doc.source_path,
            RagDocument.status == DocumentStatus.ERROR,
            RagDocument.id != doc.id,
            scope,
        )
    )
    return int(getattr(result, "rowcount", 0) or 0)
