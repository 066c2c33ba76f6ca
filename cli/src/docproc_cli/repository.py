"""All SQL of the operator commands (``docproc_cli.operator``): counts by name, a name's
unowned rows, and the provenance audit of its unfiled content."""

from __future__ import annotations

from docproc_common.db.models import KnowledgeBase, RagDocument, WriterKind
from docproc_common.db.vector_tables import vector_table_name
from sqlalchemy import delete, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

KNOWN_KINDS = (WriterKind.DOCUMENT.value, WriterKind.OPERATOR.value)
# A chunk's origin: its own writer_kind when known, else its tracking row's when that is a
# document (a known document origin is never re-labelled), else unknown.
_CHUNK_KIND = (
    "CASE WHEN c.writer_kind IN ('document', 'operator') THEN c.writer_kind "
    "WHEN d.writer_kind = 'document' THEN 'document' ELSE 'unknown' END"
)


async def bases_by_name(session: AsyncSession) -> dict[str, int]:
    rows = await session.execute(
        select(KnowledgeBase.collection_name, func.count()).group_by(KnowledgeBase.collection_name)
    )
    return {name: int(n) for name, n in rows.all()}


async def documents_by_name(session: AsyncSession) -> dict[str, int]:
    rows = await session.execute(
        select(RagDocument.collection_name, func.count()).group_by(RagDocument.collection_name)
    )
    return {name: int(n) for name, n in rows.all()}


async def remove_rows_named(session: AsyncSession, collection: str) -> list[RagDocument]:
    """Every tracking row on a name (one no base holds), deleted; the rows it held."""
    rows = list(
        (
            await session.execute(
                select(RagDocument).where(RagDocument.collection_name == collection)
            )
        ).scalars()
    )
    await session.execute(delete(RagDocument).where(RagDocument.collection_name == collection))
    return rows


async def unfiled_rows_by_kind(
    session: AsyncSession, collection: str
) -> list[tuple[bool, str | None, int]]:
    """(global, writer_kind, count) of the rows on a name no base owns."""
    rows = await session.execute(
        select(RagDocument.organization_id.is_(None), RagDocument.writer_kind, func.count())
        .where(
            RagDocument.collection_name == collection,
            RagDocument.knowledge_base_id.is_(None),
        )
        .group_by(RagDocument.organization_id.is_(None), RagDocument.writer_kind)
    )
    return [(bool(g), kind, int(n)) for g, kind, n in rows.all()]


async def unfiled_chunks_by_kind(
    session: AsyncSession, collection: str
) -> list[tuple[bool, str, int]]:
    """(global, origin, count) of the chunks in a name's table no base owns (``_CHUNK_KIND``)."""
    rows = await session.execute(
        text(
            f"SELECT c.organization_id IS NULL, {_CHUNK_KIND}, count(*) "
            f"FROM {vector_table_name(collection)} c "
            "LEFT JOIN rag_documents d ON d.id = c.tracking_id "
            "WHERE c.knowledge_base_id IS NULL GROUP BY 1, 2"
        )
    )
    return [(bool(g), str(kind), int(n)) for g, kind, n in rows.all()]


async def confirm_operator_chunks(session: AsyncSession, collection: str) -> int:
    """Mark the global unfiled chunks of unknown origin as the operator's; how many."""
    table = vector_table_name(collection)
    result = await session.execute(
        text(
            f"UPDATE {table} SET writer_kind = 'operator' WHERE id IN ("
            f"SELECT c.id FROM {table} c LEFT JOIN rag_documents d ON d.id = c.tracking_id "
            "WHERE c.knowledge_base_id IS NULL AND c.organization_id IS NULL "
            f"AND {_CHUNK_KIND} = 'unknown')"
        )
    )
    return int(getattr(result, "rowcount", 0) or 0)


async def confirm_operator_rows(session: AsyncSession, collection: str) -> int:
    """Mark the global unfiled rows of unknown origin as the operator's; how many."""
    result = await session.execute(
        update(RagDocument)
        .where(
            RagDocument.collection_name == collection,
            RagDocument.knowledge_base_id.is_(None),
            RagDocument.organization_id.is_(None),
            RagDocument.writer_kind.not_in(KNOWN_KINDS),
        )
        .values(writer_kind=WriterKind.OPERATOR)
    )
    return int(getattr(result, "rowcount", 0) or 0)
