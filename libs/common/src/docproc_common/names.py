"""A collection name as every writer on it shares it: the bases that hold it, the lock that
serializes work on it, and the reservation of a pending teardown.

Upload's creates and deletes, the embedder's write of content no base owns, operator
ingest and ``rag-drop`` all take the same lock and ask the same question, so they are
written once here.
"""

from __future__ import annotations

from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_common.db.models import CollectionTeardown, KnowledgeBase
from docproc_common.errors import Conflict


async def kbs_named(session: AsyncSession, collection_name: str) -> list[KnowledgeBase]:
    """The knowledge bases on a name, oldest first."""
    rows = await session.execute(
        select(KnowledgeBase)
        .where(KnowledgeBase.collection_name == collection_name)
        .order_by(KnowledgeBase.created_at, KnowledgeBase.id)
    )
    return list(rows.scalars())


async def is_reserved(session: AsyncSession, collection_name: str) -> bool:
    """Whether a pending teardown holds the name (``documents.reserve_teardown``)."""
    row = await session.execute(
        select(func.count())
        .select_from(CollectionTeardown)
        .where(CollectionTeardown.collection_name == collection_name)
    )
    return bool(row.scalar())


async def lock_name(
    session: AsyncSession, collection_name: str, *, wait_s: float | None = None
) -> None:
    """Serialize work on one name for the rest of the transaction.

    A chunk write no base owns (operator content, in the embedder) holds this lock until
    it commits, taken before the document's row, as every holder takes it before the rows
    it changes. A create waits ``wait_s`` and then answers 409 asking to retry, because
    every waiting request holds a database connection; a delete waits.
    """
    if wait_s is not None:
        await session.execute(text(f"SET LOCAL lock_timeout = '{int(wait_s * 1000)}ms'"))
    try:
        await session.execute(
            text("SELECT pg_advisory_xact_lock(hashtextextended(:n, 7))"),
            {"n": f"claim:{collection_name}"},
        )
    except DBAPIError as exc:
        if "lock timeout" in str(exc.orig) or "LockNotAvailable" in type(exc.orig).__name__:
            raise Conflict(
                f"The collection name '{collection_name}' is busy with a write; retry in a moment"
            ) from exc
        raise
    if wait_s is not None:
        await session.execute(text("SET LOCAL lock_timeout = 0"))
