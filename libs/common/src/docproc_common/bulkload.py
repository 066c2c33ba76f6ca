"""Bulk mode: a large write into a collection without per-row HNSW maintenance.

A collection in bulk mode has a side table, ``docproc_bulk.rag_<collection>``
(``vectorstore.side_table_name``): a child of ``public.rag_<collection>`` by table
inheritance, with the parent's b-tree and hash indexes but not its HNSW and GIN ones
(``DEFERRED_METHODS``). New chunk sets go there (``vectorstore.write_chunks``), each
document's still in its own transaction, at COPY speed. Every read and delete of the parent reaches the child as well, so a search
plans an ``Append``/``Merge Append`` of the parent's HNSW scan and an exact scan of the
side table: rows not yet indexed are found, with no change to the search statements.

``fold`` leaves bulk mode: the parent's own rows are moved into the side table in small
batches (a delete from an HNSW index costs nothing until vacuum; the side table has none
yet), the parent's indexes are built on it ``CONCURRENTLY`` (sized by ``IndexBuild``), and
one short transaction swaps it into the parent's place (the same index and constraint
names, in another schema until then). When the parent
holds more rows than the side table, its rows are moved the other way instead and no index
is built. Every step is restartable: an interrupted build leaves an invalid index that the
next fold drops and builds again, a batch moves whole or not at all, the swap is one
transaction. docs/decisions/0005-bulk-load.md says when a collection enters and leaves.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession

from docproc_common.db.models import CollectionTeardown, DocumentStatus, RagDocument
from docproc_common.db.vector_tables import vector_table_name
from docproc_common.settings import EmbedderSettings
from docproc_common.vectorstore import (
    BULK_SCHEMA,
    COLUMNS,
    DEFAULT_TEXT_SEARCH_CONFIG,
    DEFAULT_VECTOR_TYPE,
    _lock_key,
    _relation_exists,
    ensure_citation_columns,
    ensure_table,
    scope_sql,
    side_table_name,
)

log = logging.getLogger(__name__)

IndexState = Literal["ready", "loading", "building"]
FoldOutcome = Literal["folded", "merged", "busy", "not_bulk", "gone"]

MOVE_BATCH_ROWS = 500
"""Rows one fold transaction moves between the parent and the side table; the
collection's writers wait for each batch (the exclusive lock)."""

_MOVED_COLUMNS = ", ".join((*COLUMNS, "created_at"))
_SCHEMA_LOCK = _lock_key(f"{BULK_SCHEMA} schema")


@dataclass(frozen=True, slots=True)
class IndexBuild:
    """What one fold's index builds may use (``EmbedderSettings.index_build_*``)."""

    maintenance_work_mem: str = "1GB"
    parallel_workers: int = 2

    @classmethod
    def of(cls, settings: EmbedderSettings) -> IndexBuild:
        return cls(settings.index_build_maintenance_work_mem, settings.index_build_parallel_workers)


@dataclass(frozen=True, slots=True)
class Backlog:
    pending: int  # the collection's documents waiting to be indexed (``processing``)
    indexed: int  # its documents ``done``

    def counts(self) -> tuple[int, int]:
        return self.pending, self.indexed


def fold_lock_key(collection: str) -> int:
    """The session advisory lock a fold of the collection holds (``pg_try_advisory_lock``)."""
    return _lock_key(f"fold {vector_table_name(collection)}")


async def in_bulk(session: AsyncSession, collection: str) -> bool:
    return await _relation_exists(session, BULK_SCHEMA, vector_table_name(collection))


async def backlog(session: AsyncSession, collection: str) -> Backlog:
    row = (
        await session.execute(
            select(
                func.count().filter(RagDocument.status == DocumentStatus.PROCESSING),
                func.count().filter(RagDocument.status == DocumentStatus.DONE),
            ).where(RagDocument.collection_name == collection)
        )
    ).one()
    return Backlog(pending=int(row[0]), indexed=int(row[1]))


def should_enter(b: Backlog, *, min_pending: int, ratio: float) -> bool:
    """A backlog worth a bulk load: at least ``min_pending`` documents and at least
    ``ratio`` x the documents already indexed (the fold moves the indexed ones)."""
    return b.pending >= min_pending and b.pending >= ratio * b.indexed


async def enter(
    session: AsyncSession,
    collection: str,
    dim: int,
    text_search_config: str = DEFAULT_TEXT_SEARCH_CONFIG,
    vector_type: str = DEFAULT_VECTOR_TYPE,
) -> bool:
    """Put the collection in bulk mode (create its table if missing, then its side table),
    in the caller's transaction. False when it already was."""
    table = vector_table_name(collection)
    await ensure_table(session, collection, dim, text_search_config, vector_type)  # the lock
    if await _relation_exists(session, BULK_SCHEMA, table):
        return False
    await session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _SCHEMA_LOCK})
    await session.execute(text(f"CREATE SCHEMA IF NOT EXISTS {BULK_SCHEMA}"))
    await session.execute(
        text(
            f"CREATE TABLE {side_table_name(collection)} ("
            f"CONSTRAINT {table}_pkey PRIMARY KEY (id), "
            f"CONSTRAINT {table}_chunk_key UNIQUE (document_id, chunk_no)"
            f") INHERITS (public.{table})"
        )
    )
    for _, indexdef, valid in await _parent_indexes(session, collection):
        if valid is None and not any(m in indexdef for m in DEFERRED_METHODS):
            await session.execute(text(_on_side(indexdef, collection, concurrently=False)))
    log.info("collection %s entered bulk mode", collection)
    return True


def _advisory_parts(key: int) -> tuple[int, int]:
    """``pg_locks``' (classid, objid) of a bigint advisory key."""
    unsigned = key & 0xFFFF_FFFF_FFFF_FFFF
    return unsigned >> 32, unsigned & 0xFFFF_FFFF


async def index_state(
    session: AsyncSession,
    collection: str,
    knowledge_base_ids: list[uuid.UUID],
    *,
    include_operator: bool = False,
) -> tuple[IndexState, int]:
    """``ready``, ``loading`` (bulk mode, new rows in the side table) or ``building`` (a fold
    is running), and the side table's rows of these bases (not yet in the HNSW index)."""
    table = vector_table_name(collection)
    if not await _relation_exists(session, BULK_SCHEMA, table):
        return "ready", 0
    hi, lo = _advisory_parts(fold_lock_key(collection))
    row = (
        await session.execute(
            text(
                "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' "
                "AND classid = :hi AND objid = :lo AND objsubid = 1 AND granted), "
                f"(SELECT count(*) FROM ONLY {side_table_name(collection)} "
                f"WHERE {scope_sql(include_operator)})"
            ),
            {"hi": hi, "lo": lo, "kbs": knowledge_base_ids},
        )
    ).one()
    return ("building" if row[0] else "loading"), int(row[1])


async def side_rows(session: AsyncSession, collection: str) -> int:
    """Every row of the collection's side table (0 outside bulk mode)."""
    if not await in_bulk(session, collection):
        return 0
    row = await session.execute(text(f"SELECT count(*) FROM ONLY {side_table_name(collection)}"))
    return int(row.scalar() or 0)


async def side_tables(session: AsyncSession) -> list[str]:
    """The collections in bulk mode."""
    rows = await session.execute(
        text("SELECT tablename FROM pg_tables WHERE schemaname = :s ORDER BY tablename"),
        {"s": BULK_SCHEMA},
    )
    return [t[len("rag_") :] for (t,) in rows]


async def _reserved(conn: AsyncConnection, collection: str) -> bool:
    row = await conn.execute(
        select(func.count())
        .select_from(CollectionTeardown)
        .where(CollectionTeardown.collection_name == collection)
    )
    return bool(row.scalar())


DEFERRED_METHODS = (" USING hnsw ", " USING gin ")
"""What a side table goes without until the fold: the indexes a row costs most to enter
(HNSW, ~2 ms a row; GIN). It has the parent's b-tree and hash indexes from the start."""


async def _parent_indexes(
    conn: AsyncSession | AsyncConnection, collection: str
) -> list[tuple[str, str, bool | None]]:
    """Each index of the parent: its name, its definition, and whether the side table has
    it under that name (valid, invalid: an interrupted build, or None: missing)."""
    rows = await conn.execute(
        text(
            "SELECT i.indexname, i.indexdef, s.indisvalid FROM pg_indexes i "
            "LEFT JOIN pg_index s ON s.indexrelid = to_regclass(:schema || '.' || i.indexname) "
            "WHERE i.schemaname = 'public' AND i.tablename = :t ORDER BY i.indexname"
        ),
        {"t": vector_table_name(collection), "schema": BULK_SCHEMA},
    )
    return [(r[0], r[1], r[2]) for r in rows]


def _on_side(indexdef: str, collection: str, *, concurrently: bool) -> str:
    """A parent's index definition, the same index on the side table."""
    head, sep, rest = indexdef.partition(f" ON public.{vector_table_name(collection)} ")
    if not sep:
        raise ValueError(f"unexpected index definition: {indexdef}")
    if concurrently:
        head = head.replace(" INDEX ", " INDEX CONCURRENTLY ", 1)
    return f"{head} ON {side_table_name(collection)} {rest}"


async def _build_indexes(conn: AsyncConnection, collection: str, build: IndexBuild) -> int:
    """Every index of the parent the side table lacks, under the same name
    (``CONCURRENTLY``: writes and searches go on); an invalid one an interrupted build left
    is dropped first. Returns how many were built."""
    rows = await _parent_indexes(conn, collection)
    await conn.execute(
        text(
            "SELECT set_config('maintenance_work_mem', :m, false), "
            "set_config('max_parallel_maintenance_workers', :w, false)"
        ),
        {"m": build.maintenance_work_mem, "w": str(build.parallel_workers)},
    )
    built = 0
    try:
        for name, indexdef, valid in rows:
            if valid:
                continue
            if valid is False:
                await conn.execute(text(f"DROP INDEX CONCURRENTLY IF EXISTS {BULK_SCHEMA}.{name}"))
            await conn.execute(text(_on_side(indexdef, collection, concurrently=True)))
            built += 1
    finally:
        await conn.execute(text("RESET maintenance_work_mem"))
        await conn.execute(text("RESET max_parallel_maintenance_workers"))
    return built


async def _move(engine: AsyncEngine, source: str, target: str, collection: str) -> int:
    """Move every row of ``source`` (its own, ``ONLY``) into ``target``, a batch a
    transaction under the collection's exclusive lock: a row is in one table or the other
    at every moment, and no write or delete runs between a batch's read and its insert."""
    moved = 0
    key = _lock_key(vector_table_name(collection))
    while True:
        async with engine.begin() as conn:
            await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})
            result = await conn.execute(
                text(
                    f"WITH moved AS (DELETE FROM ONLY {source} WHERE id IN "
                    f"(SELECT id FROM ONLY {source} LIMIT :n) RETURNING {_MOVED_COLUMNS}) "
                    f"INSERT INTO {target} ({_MOVED_COLUMNS}) SELECT {_MOVED_COLUMNS} FROM moved"
                ),
                {"n": MOVE_BATCH_ROWS},
            )
        count = int(getattr(result, "rowcount", 0) or 0)
        moved += count
        if count < MOVE_BATCH_ROWS:
            return moved


async def _swap(engine: AsyncEngine, collection: str) -> None:
    """The side table, indexed and holding every row, becomes ``public.rag_<collection>``."""
    table = vector_table_name(collection)
    side = side_table_name(collection)
    async with engine.begin() as conn:
        await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _lock_key(table)})
        await conn.execute(text(f"LOCK TABLE public.{table}, {side} IN ACCESS EXCLUSIVE MODE"))
        await conn.execute(
            text(
                f"WITH moved AS (DELETE FROM ONLY public.{table} RETURNING {_MOVED_COLUMNS}) "
                f"INSERT INTO {side} ({_MOVED_COLUMNS}) SELECT {_MOVED_COLUMNS} FROM moved"
            )
        )
        missing = (
            await conn.execute(
                text(
                    "SELECT count(*) FROM pg_indexes i WHERE i.schemaname = 'public' "
                    "AND i.tablename = :t AND NOT EXISTS (SELECT 1 FROM pg_index s WHERE "
                    "s.indexrelid = to_regclass(:schema || '.' || i.indexname) AND s.indisvalid)"
                ),
                {"t": table, "schema": BULK_SCHEMA},
            )
        ).scalar()
        if missing:
            raise RuntimeError(f"{side} lacks {missing} of {table}'s indexes; not swapped")
        await conn.execute(text(f"ALTER TABLE {side} NO INHERIT public.{table}"))
        await conn.execute(text(f"DROP TABLE public.{table}"))
        await conn.execute(text(f"ALTER TABLE {side} SET SCHEMA public"))


async def _drop_side(engine: AsyncEngine, collection: str) -> None:
    table = vector_table_name(collection)
    async with engine.begin() as conn:
        await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _lock_key(table)})
        await conn.execute(
            text(
                f"WITH moved AS (DELETE FROM ONLY {side_table_name(collection)} "
                f"RETURNING {_MOVED_COLUMNS}) INSERT INTO public.{table} ({_MOVED_COLUMNS}) "
                f"SELECT {_MOVED_COLUMNS} FROM moved"
            )
        )
        await conn.execute(text(f"DROP TABLE {side_table_name(collection)}"))


async def fold(engine: AsyncEngine, collection: str, build: IndexBuild) -> FoldOutcome:
    """Take the collection out of bulk mode (see the module docstring); ``busy`` when
    another fold of it runs, ``gone`` when its tables were dropped (a teardown) meanwhile
    or one is reserved for it."""
    table = vector_table_name(collection)
    side = side_table_name(collection)
    async with engine.connect() as connection:
        conn = await connection.execution_options(isolation_level="AUTOCOMMIT")
        key = fold_lock_key(collection)
        if not (await conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": key})).scalar():
            return "busy"
        try:
            if await _reserved(conn, collection):
                return "gone"
            sizes = (
                await conn.execute(
                    text("SELECT to_regclass(:side) IS NOT NULL, to_regclass(:t) IS NOT NULL"),
                    {"side": side, "t": f"public.{table}"},
                )
            ).one()
            if not sizes[0]:
                return "not_bulk"
            if not sizes[1]:
                return "gone"
            async with engine.begin() as tx:  # the moves carry every column
                await ensure_citation_columns(tx, collection)
            parent_rows, side_rows = (
                await conn.execute(
                    text(
                        f"SELECT (SELECT count(*) FROM ONLY public.{table}), "
                        f"(SELECT count(*) FROM ONLY {side})"
                    )
                )
            ).one()
            if parent_rows > side_rows:
                await _move(engine, side, f"public.{table}", collection)
                await _drop_side(engine, collection)
                log.info("collection %s left bulk mode: %d rows merged", collection, side_rows)
                return "merged"
            moved = await _move(engine, f"public.{table}", side, collection)
            built = await _build_indexes(conn, collection, build)
            await _swap(engine, collection)
            log.info(
                "collection %s left bulk mode: %d indexes built over %d rows, %d moved",
                collection,
                built,
                side_rows,
                moved,
            )
            return "folded"
        except DBAPIError as exc:
            if getattr(exc.orig, "sqlstate", None) == "42P01":  # undefined_table: dropped
                return "gone"
            raise
        finally:
            await conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
