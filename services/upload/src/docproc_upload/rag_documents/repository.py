"""The SQL of documents: the rows a base lists, pages, counts, the stuck gauge, a document's
chunks."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from docproc_common import unfiled
from docproc_common.db.models import (
    DocumentStatus,
    KnowledgeBase,
    OutboxEvent,
    RagDocument,
    Scope,
    WriterKind,
)
from docproc_common.db.vector_tables import vector_table_name
from docproc_common.unfiled import is_operator_row
from docproc_common.vectorstore import table_exists
from sqlalchemy import ColumnElement, and_, func, literal, or_, select, text
from sqlalchemy.ext.asyncio import AsyncSession


async def document(
    session: AsyncSession, document_id: uuid.UUID, *, lock: bool = False
) -> RagDocument | None:
    return await session.get(RagDocument, document_id, with_for_update=lock)


def operator_rows(collection_name: str) -> ColumnElement[bool]:
    """The operator's unfiled rows on a name, as ``vectorstore.OPERATOR_CHUNKS`` for chunks."""
    return and_(
        RagDocument.collection_name == collection_name,
        RagDocument.knowledge_base_id.is_(None),
        RagDocument.organization_id.is_(None),
        RagDocument.writer_kind == WriterKind.OPERATOR,
    )


def tenant_rows(collection_name: str, organization_id: str) -> ColumnElement[bool]:
    """An organization's unfiled rows on a name (legacy uploads filed under no base), as
    ``vectorstore.TENANT_UNFILED_CHUNKS`` for chunks."""
    return and_(
        RagDocument.collection_name == collection_name,
        RagDocument.knowledge_base_id.is_(None),
        RagDocument.organization_id == organization_id,
    )


def listed_by(kbs: Sequence[KnowledgeBase]) -> ColumnElement[bool]:
    """The rows these bases list and count: their own, and those of the unfiled chunks they
    read (the operator's for an app-scoped base, their organization's for any other)."""
    own = RagDocument.knowledge_base_id.in_([kb.id for kb in kbs])
    names = sorted({kb.collection_name for kb in kbs if kb.scope == Scope.APP})
    tenants = sorted({(kb.collection_name, org) for kb in kbs for org in unfiled.tenants([kb])})
    return or_(
        own,
        *(operator_rows(name) for name in names),
        *(tenant_rows(name, org) for name, org in tenants),
    )


def is_listed_by(kbs: Sequence[KnowledgeBase], doc: RagDocument) -> bool:
    """``listed_by`` for one loaded row."""
    if doc.knowledge_base_id is not None:
        return doc.knowledge_base_id in {kb.id for kb in kbs}
    on_name = [kb for kb in kbs if kb.collection_name == doc.collection_name]
    if doc.organization_id is None:
        return is_operator_row(doc) and unfiled.adopts_operator(on_name)
    return doc.organization_id in unfiled.tenants(on_name)


async def listed_document(
    session: AsyncSession, kb: KnowledgeBase, document_id: uuid.UUID
) -> RagDocument | None:
    """One document if ``kb`` lists it (``listed_by``), else None."""
    row = await session.execute(
        select(RagDocument).where(RagDocument.id == document_id, listed_by([kb]))
    )
    return row.scalar_one_or_none()


async def status_counts(session: AsyncSession, kbs: Sequence[KnowledgeBase]) -> dict[str, int]:
    rows = await session.execute(
        select(RagDocument.status, func.count()).where(listed_by(kbs)).group_by(RagDocument.status)
    )
    return {status: int(n) for status, n in rows.all()}


async def documents_of(
    session: AsyncSession, kb_ids: Sequence[uuid.UUID], *, lock: bool = False
) -> list[RagDocument]:
    query = select(RagDocument).where(RagDocument.knowledge_base_id.in_(list(kb_ids)))
    if lock:
        query = query.order_by(RagDocument.id).with_for_update()
    rows = await session.execute(query)
    return list(rows.scalars())


async def count_stuck(session: AsyncSession, minutes: int) -> int:
    row = await session.execute(
        select(func.count())
        .select_from(RagDocument)
        .where(
            RagDocument.status == DocumentStatus.PROCESSING,
            RagDocument.created_at < func.now() - text(f"interval '{int(minutes)} minutes'"),
        )
    )
    return int(row.scalar() or 0)


async def document_exists(session: AsyncSession, document_id: uuid.UUID) -> bool:
    row = await session.execute(select(RagDocument.id).where(RagDocument.id == document_id))
    return row.first() is not None


async def document_page(
    session: AsyncSession,
    kb: KnowledgeBase,
    *,
    limit: int,
    before: tuple[datetime, uuid.UUID] | None,
) -> list[RagDocument]:
    query = select(RagDocument).where(listed_by([kb]))
    if before is not None:
        stamp, ident = before
        query = query.where(
            or_(
                RagDocument.created_at < stamp,
                and_(RagDocument.created_at == stamp, RagDocument.id < ident),
            )
        )
    rows = await session.execute(
        query.order_by(RagDocument.created_at.desc(), RagDocument.id.desc()).limit(limit)
    )
    return list(rows.scalars())


async def document_count(session: AsyncSession, kb: KnowledgeBase) -> int:
    row = await session.execute(
        select(func.count()).select_from(RagDocument).where(listed_by([kb]))
    )
    return int(row.scalar() or 0)


async def count_waiting(session: AsyncSession, queue: str, up_to: int) -> int:
    """How many documents wait to be parsed (``parse``) or embedded (``embed``), or outbox
    events to be published (``outbox``), counting no further than ``up_to``."""
    where: list[ColumnElement[bool]]
    if queue == "outbox":
        source: type[OutboxEvent] | type[RagDocument] = OutboxEvent
        where = [OutboxEvent.published_at.is_(None)]
    else:
        source = RagDocument
        parsed = RagDocument.parsed_path.is_not(None)
        where = [
            RagDocument.status == DocumentStatus.PROCESSING,
            parsed if queue == "embed" else ~parsed,
        ]
    bounded = select(literal(1)).select_from(source).where(*where).limit(up_to).subquery()
    row = await session.execute(select(func.count()).select_from(bounded))
    return int(row.scalar() or 0)


async def document_chunks(
    session: AsyncSession, collection: str, document_id: uuid.UUID
) -> list[str]:
    """The text of one vector document's chunks, in order (read along the ``(document_id, chunk_no)`` key)."""
    if not await table_exists(session, collection):
        return []
    table = vector_table_name(collection)
    rows = await session.execute(
        text(f"SELECT content FROM {table} WHERE document_id = :d ORDER BY chunk_no"),
        {"d": document_id},
    )
    return [r[0] for r in rows]


async def chunk_window(
    session: AsyncSession, collection: str, document_id: uuid.UUID, first: int, last: int
) -> list[tuple[int, str]]:
    """Chunks ``first`` .. ``last`` (numbers, both included) of one vector document, in order,
    as ``(chunk_no, content)``: a range of the ``(document_id, chunk_no)`` key."""
    if not await table_exists(session, collection):
        return []
    table = vector_table_name(collection)
    rows = await session.execute(
        text(
            f"SELECT chunk_no, content FROM {table} WHERE document_id = :d "
            "AND chunk_no BETWEEN :first AND :last ORDER BY chunk_no"
        ),
        {"d": document_id, "first": first, "last": last},
    )
    return [(r[0], r[1]) for r in rows]
