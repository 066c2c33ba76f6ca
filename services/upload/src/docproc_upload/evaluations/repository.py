"""The SQL of evaluation sets: the sets of a base, their runs, the documents they judge, the
lock that makes one run of a set at a time, and what the schedule reads."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from datetime import datetime

from docproc_common.db.models import (
    EvaluationRun,
    EvaluationTrigger,
    KnowledgeBase,
    RagDocument,
    RetrievalEvaluation,
)
from sqlalchemy import ColumnElement, delete, func, or_, select, text
from sqlalchemy.dialects.postgresql import distinct_on
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from docproc_upload.rag_documents.repository import listed_by

#: A file name without its last extension (``4983.txt`` -> ``4983``), as ``service.stem``.
STEM_PATTERN = r"\.[^.]*$"


def filename_stem() -> ColumnElement[str]:
    return func.regexp_replace(RagDocument.filename, STEM_PATTERN, "")


async def evaluations_of(session: AsyncSession, kb_id: uuid.UUID) -> list[RetrievalEvaluation]:
    rows = await session.execute(
        select(RetrievalEvaluation)
        .where(RetrievalEvaluation.knowledge_base_id == kb_id)
        .order_by(RetrievalEvaluation.created_at, RetrievalEvaluation.id)
    )
    return list(rows.scalars())


async def count_evaluations(session: AsyncSession, kb_id: uuid.UUID) -> int:
    row = await session.execute(
        select(func.count())
        .select_from(RetrievalEvaluation)
        .where(RetrievalEvaluation.knowledge_base_id == kb_id)
    )
    return int(row.scalar_one())


async def evaluation(
    session: AsyncSession, kb_id: uuid.UUID, evaluation_id: uuid.UUID
) -> RetrievalEvaluation | None:
    row = await session.execute(
        select(RetrievalEvaluation).where(
            RetrievalEvaluation.id == evaluation_id,
            RetrievalEvaluation.knowledge_base_id == kb_id,
        )
    )
    return row.scalar_one_or_none()


async def delete_evaluation(session: AsyncSession, evaluation_id: uuid.UUID) -> None:
    await session.execute(
        delete(RetrievalEvaluation).where(RetrievalEvaluation.id == evaluation_id)
    )


async def latest_runs(
    session: AsyncSession, evaluation_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, EvaluationRun]:
    """Each set's newest run, by set."""
    if not evaluation_ids:
        return {}
    rows = await session.execute(
        select(EvaluationRun)
        .where(EvaluationRun.evaluation_id.in_(list(evaluation_ids)))
        .ext(distinct_on(EvaluationRun.evaluation_id))
        .order_by(EvaluationRun.evaluation_id, EvaluationRun.started_at.desc())
    )
    return {run.evaluation_id: run for run in rows.scalars()}


async def runs(session: AsyncSession, evaluation_id: uuid.UUID, limit: int) -> list[EvaluationRun]:
    """A set's runs, newest first."""
    rows = await session.execute(
        select(EvaluationRun)
        .where(EvaluationRun.evaluation_id == evaluation_id)
        .order_by(EvaluationRun.started_at.desc(), EvaluationRun.id)
        .limit(limit)
    )
    return list(rows.scalars())


async def documents_named(
    session: AsyncSession,
    kb: KnowledgeBase,
    *,
    ids: Collection[uuid.UUID] = (),
    filenames: Collection[str] = (),
    stems: Collection[str] = (),
) -> list[tuple[uuid.UUID, str]]:
    """The documents ``kb`` lists (``listed_by``) with one of these ids, file names or file
    names without their extension: (id, file name) each."""
    named = [
        *([RagDocument.id.in_(list(ids))] if ids else []),
        *([RagDocument.filename.in_(list(filenames))] if filenames else []),
        *([filename_stem().in_(list(stems))] if stems else []),
    ]
    if not named:
        return []
    rows = await session.execute(
        select(RagDocument.id, RagDocument.filename).where(listed_by([kb]), or_(*named))
    )
    return [(ident, filename) for ident, filename in rows.all()]


async def listed_ids(
    session: AsyncSession, kb: KnowledgeBase, ids: Collection[uuid.UUID]
) -> set[uuid.UUID]:
    """Which of ``ids`` the base still lists."""
    if not ids:
        return set()
    rows = await session.execute(
        select(RagDocument.id).where(listed_by([kb]), RagDocument.id.in_(list(ids)))
    )
    return set(rows.scalars())


# -- one run of a set at a time ------------------------------------------------------------


def _run_lock_key(evaluation_id: uuid.UUID) -> int:
    return int.from_bytes(uuid.uuid5(evaluation_id, "evaluation-run").bytes[:8], "big", signed=True)


async def try_lock_run(conn: AsyncConnection, evaluation_id: uuid.UUID) -> bool:
    """The set's run lock, held by this connection until ``unlock_run`` (or its end)."""
    row = await conn.execute(
        text("SELECT pg_try_advisory_lock(:k)"), {"k": _run_lock_key(evaluation_id)}
    )
    return bool(row.scalar())


async def unlock_run(conn: AsyncConnection, evaluation_id: uuid.UUID) -> None:
    await conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _run_lock_key(evaluation_id)})


# -- the schedule ----------------------------------------------------------------------------


def _last_scheduled() -> ColumnElement[datetime]:
    """The start of a set's newest scheduled run, per row of ``retrieval_evaluations``."""
    return (
        select(func.max(EvaluationRun.started_at))
        .where(
            EvaluationRun.evaluation_id == RetrievalEvaluation.id,
            EvaluationRun.trigger == EvaluationTrigger.SCHEDULED,
        )
        .scalar_subquery()
    )


async def due_evaluations(session: AsyncSession, before: datetime) -> list[uuid.UUID]:
    """The sets with no scheduled run since ``before``, longest waiting first."""
    last = _last_scheduled()
    rows = await session.execute(
        select(RetrievalEvaluation.id)
        .where(or_(last.is_(None), last < before))
        .order_by(last.asc().nulls_first(), RetrievalEvaluation.id)
    )
    return list(rows.scalars())


async def due_evaluation(
    session: AsyncSession, evaluation_id: uuid.UUID, before: datetime
) -> tuple[RetrievalEvaluation, KnowledgeBase] | None:
    """The set and its base when it is still due (no scheduled run since ``before``)."""
    last = _last_scheduled()
    row = await session.execute(
        select(RetrievalEvaluation, KnowledgeBase)
        .join(KnowledgeBase, KnowledgeBase.id == RetrievalEvaluation.knowledge_base_id)
        .where(RetrievalEvaluation.id == evaluation_id, or_(last.is_(None), last < before))
    )
    found = row.first()
    return (found[0], found[1]) if found is not None else None


async def latest_scheduled_scores(
    session: AsyncSession,
) -> list[tuple[uuid.UUID, EvaluationRun]]:
    """Every set's newest scheduled run that scored, with the set's base id."""
    rows = await session.execute(
        select(RetrievalEvaluation.knowledge_base_id, EvaluationRun)
        .join(RetrievalEvaluation, RetrievalEvaluation.id == EvaluationRun.evaluation_id)
        .where(
            EvaluationRun.trigger == EvaluationTrigger.SCHEDULED,
            EvaluationRun.error.is_(None),
        )
        .ext(distinct_on(EvaluationRun.evaluation_id))
        .order_by(EvaluationRun.evaluation_id, EvaluationRun.started_at.desc())
    )
    return [(kb_id, run) for kb_id, run in rows.all()]
