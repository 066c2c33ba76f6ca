"""Tracking-row transitions shared by the pipeline stages (``rag_documents``)."""

from __future__ import annotations

import logging
import uuid

from sqlalchemy import func, update
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_common.bus.outbox import enqueue
from docproc_common.db.models import DocumentStatus, RagDocument
from docproc_common.events import DocumentFailed
from docproc_common.failures import Stage, failure_message

log = logging.getLogger(__name__)


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
