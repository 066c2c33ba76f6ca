"""pgvector storage: one runtime table per collection, ``rag_<collection>``.

Created on first write with its HNSW cosine index, hash indexes on the lookup
keys and b-trees on the search filter columns, all in one transaction, serialized by a transaction-scoped advisory lock so
concurrent first writers never race into a ``UniqueViolation``. Every identifier
is derived from a name that passed ``validate_collection_name``; the longest one
(``rag_<name>_embedding_idx``) fits Postgres' 63 bytes, so nothing is truncated
into another collection's object.

Chunks are written with binary ``COPY`` inside the caller's transaction, so a
document's chunk set appears whole or not at all.

Each table also carries ``content_tsv``, a stored ``tsvector`` generated from the chunk's
text with the collection's text-search configuration (``simple`` unless the collection
chose another), under a GIN index: the keyword half of the API's search
(``docproc_upload.search``). A table created before
it existed gets both from ``add_keyword_index`` (``docproc rag-keyword-index``).

And each chunk's citation (``docproc_common.citations``): ``page_start``, ``page_end``,
``char_start``, ``char_end``, ``heading_path``, null for a chunk written without one (a
chunk set from before citations, an operator ingest of a file from before). A table created
before them gets the columns on its next write (``ensure_citation_columns``: nullable and
without a default, a change of the catalog only, no rewrite); until then its searches read
no citations (``has_citation_columns``).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

import numpy as np
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession

from docproc_common.citations import Citation
from docproc_common.db.engine import driver_connection
from docproc_common.db.vector_tables import vector_table_name

COLUMNS = (
    "id",
    "document_id",
    "chunk_no",
    "content",
    "embedding",
    "knowledge_base_id",
    "organization_id",
    "tracking_id",
    "source",
    "document_type",
    "organizational_unit",
    "document_date",
    "source_path",
    "filename",
    "content_hash",
    "writer_kind",
    "page_start",
    "page_end",
    "char_start",
    "char_end",
    "heading_path",
)

#: The citation columns (``COLUMNS``' last five) and their types.
CITATION_COLUMNS = {
    "page_start": "integer",
    "page_end": "integer",
    "char_start": "integer",
    "char_end": "integer",
    "heading_path": "text[]",
}


@dataclass(frozen=True, slots=True)
class ChunkStamp:
    """What every chunk of one document is stamped with at ingestion."""

    knowledge_base_id: uuid.UUID | None
    organization_id: str | None
    tracking_id: uuid.UUID
    source: str
    document_type: str
    organizational_unit: str | None
    document_date: date | None
    source_path: str | None
    filename: str
    content_hash: str | None
    writer_kind: str


def chunk_id(document_id: uuid.UUID, chunk_no: int) -> uuid.UUID:
    return uuid.uuid5(document_id, str(chunk_no))


def _lock_key(table: str) -> int:
    return int.from_bytes(uuid.uuid5(uuid.NAMESPACE_DNS, table).bytes[:8], "big", signed=True)


BULK_SCHEMA = "docproc_bulk"
"""Where a collection in bulk mode keeps its side table: ``docproc_bulk.rag_<collection>``,
a child (``INHERITS``) of ``public.rag_<collection>`` without its HNSW index
(``docproc_common.bulkload``, docs/decisions/0005-bulk-load.md)."""


def side_table_name(collection: str) -> str:
    return f"{BULK_SCHEMA}.{vector_table_name(collection)}"


async def _relation_exists(session: AsyncSession, schema: str, table: str) -> bool:
    # pg_class under this statement's snapshot, not ``to_regclass`` (see ``ensure_table``)
    row = await session.execute(
        text(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname = :s AND c.relname = :t)"
        ),
        {"s": schema, "t": table},
    )
    return bool(row.scalar())


async def lock_for_writing(session: AsyncSession, collection: str) -> str:
    """Take the collection's lock shared for this transaction and say which table new chunks
    go to: the side table while the collection is in bulk mode, else ``rag_<collection>``.

    Every write and delete holds it shared; entering bulk mode, the fold's moves and swap
    and the drop hold it exclusive, so a write never lands in a table being swapped away.
    """
    table = vector_table_name(collection)
    await session.execute(text("SELECT pg_advisory_xact_lock_shared(:k)"), {"k": _lock_key(table)})
    if await _relation_exists(session, BULK_SCHEMA, table):
        return side_table_name(collection)
    return table


async def table_exists(session: AsyncSession, collection: str) -> bool:
    table = vector_table_name(collection)
    row = await session.execute(
        text("SELECT to_regclass(:t) IS NOT NULL"), {"t": f"public.{table}"}
    )
    return bool(row.scalar())


VectorType = Literal["vector", "halfvec"]
"""How a collection stores its embeddings: ``vector`` (4-byte floats) or ``halfvec``
(2-byte floats: half the heap and index, docs/benchmarks.md "halfvec"). A property of the
collection (``knowledge_bases.vector_type``), fixed at creation; every path that creates
the table or builds its HNSW index reads it from there (``ensure_table``,
``embedding_index_sql``). Writes and searches need nothing more: the binary COPY and the
query's parameter take the column's type."""

VECTOR_TYPES: tuple[VectorType, ...] = ("vector", "halfvec")
DEFAULT_VECTOR_TYPE: VectorType = "halfvec"
"""A new collection's type when its first base names none: at 1M chunks halfvec's recall
was within one query of 200 of vector's on both of ``bench/vectors.py``'s data sets, with
an index 0.57x the size and cheaper filtered searches (ADR 0008). Existing collections
keep theirs."""

HNSW_MAX_DIMENSIONS: dict[str, int] = {"vector": 2000, "halfvec": 4000}
"""The widest embedding pgvector's HNSW index takes, by vector type."""


def _vector_type(vector_type: str) -> VectorType:
    for known in VECTOR_TYPES:
        if vector_type == known:
            return known
    raise ValueError(f"not a vector type: {vector_type!r}")


def embedding_index_sql(table: str, vector_type: str, *, concurrently: bool = False) -> str:
    """The HNSW cosine index on ``table``'s embeddings, with the operator class of its
    vector type (``vector_cosine_ops``, ``halfvec_cosine_ops``)."""
    how = "CONCURRENTLY " if concurrently else ""
    ops = f"{_vector_type(vector_type)}_cosine_ops"
    return f"CREATE INDEX {how}{table}_embedding_idx ON {table} USING hnsw (embedding {ops})"


DEFAULT_TEXT_SEARCH_CONFIG = "simple"
_TEXT_SEARCH_CONFIG = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


async def text_search_config_exists(session: AsyncSession, name: str) -> bool:
    """Is ``name`` a text-search configuration of this database (``pg_ts_config``, on the
    search path)? Only plain lower-case names are taken, so one is safe in DDL text."""
    if not _TEXT_SEARCH_CONFIG.match(name):
        return False
    row = await session.execute(
        text(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_ts_config "
            "WHERE cfgname = :c AND pg_catalog.pg_ts_config_is_visible(oid))"
        ),
        {"c": name},
    )
    return bool(row.scalar())


def _keyword_column_sql(table: str, config: str) -> str:
    if not _TEXT_SEARCH_CONFIG.match(config):
        raise ValueError(f"not a text-search configuration name: {config!r}")
    return (
        f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS content_tsv tsvector "
        f"GENERATED ALWAYS AS (to_tsvector('{config}'::regconfig, content)) STORED"
    )


def _keyword_index_sql(table: str, *, concurrently: bool = False) -> str:
    how = "CONCURRENTLY " if concurrently else ""
    return f"CREATE INDEX {how}IF NOT EXISTS {table}_tsv_idx ON {table} USING gin (content_tsv)"


FILTER_INDEXES = {
    "source": "source",
    "doctype": "document_type",
    "orgunit": "organizational_unit",
    "date": "document_date",
    "parent": "tracking_id",
}
"""B-tree per search filter column (index suffix -> column), so the exact scan that answers a
selective filter reads the matching rows, not the whole table
(``docproc_upload.search.service.search_collection``)."""


async def ensure_table(
    session: AsyncSession,
    collection: str,
    dim: int,
    text_search_config: str = DEFAULT_TEXT_SEARCH_CONFIG,
    vector_type: str = DEFAULT_VECTOR_TYPE,
) -> None:
    """Create ``rag_<collection>`` and its indexes if missing, in the caller's transaction,
    its embeddings stored as ``vector_type`` (the collection's, ``VectorType``)."""
    table = vector_table_name(collection)
    column_type = _vector_type(vector_type)
    await session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _lock_key(table)})
    # Read pg_class under this statement's snapshot, not ``to_regclass``: its catalog cache
    # may still hold "no such table" from a look earlier in this transaction (the embedder's
    # ``table_exists``), as an advisory lock does not make the backend read invalidations.
    created = await session.execute(
        text(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relname = :t)"
        ),
        {"t": table},
    )
    if created.scalar():
        return
    statements = [
        f"""CREATE TABLE {table} (
            id uuid PRIMARY KEY,
            document_id uuid NOT NULL,
            chunk_no integer NOT NULL,
            content text NOT NULL,
            embedding {column_type}({int(dim)}) NOT NULL,
            knowledge_base_id uuid,
            organization_id text,
            tracking_id uuid,
            source text,
            document_type text,
            organizational_unit text,
            document_date date,
            source_path text,
            filename text,
            content_hash text,
            writer_kind text,
            {", ".join(f"{c} {t}" for c, t in CITATION_COLUMNS.items())},
            created_at timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT {table}_chunk_key UNIQUE (document_id, chunk_no)
        )""",
        _keyword_column_sql(table, text_search_config),
        embedding_index_sql(table, column_type),
        _keyword_index_sql(table),
        f"CREATE INDEX {table}_kb_idx ON {table} (knowledge_base_id)",
        f"CREATE INDEX {table}_path_idx ON {table} USING hash (source_path)",
        f"CREATE INDEX {table}_fname_idx ON {table} USING hash (filename)",
        f"CREATE INDEX {table}_hash_idx ON {table} USING hash (content_hash)",
        *(
            f"CREATE INDEX {table}_{suffix}_idx ON {table} ({column})"
            for suffix, column in FILTER_INDEXES.items()
        ),
    ]
    for sql in statements:
        await session.execute(text(sql))


async def add_keyword_index(engine: AsyncEngine, collection: str, text_search_config: str) -> bool:
    """Give a table created before the keyword index its ``content_tsv`` and GIN index.

    True when anything was missing. The column is added in one transaction under the
    table's lock: that rewrites the table, so the collection's writes and searches wait
    for it (minutes for millions of chunks). The index is then built ``CONCURRENTLY``,
    outside any transaction, so the table stays writable and searchable while it builds;
    an index an interrupted build left invalid is dropped and built again.
    """
    table = vector_table_name(collection)
    async with engine.begin() as conn:
        await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _lock_key(table)})
        state = (
            await conn.execute(
                text(
                    "SELECT to_regclass(:t) IS NOT NULL, EXISTS (SELECT 1 FROM pg_attribute "
                    "WHERE attrelid = to_regclass(:t) AND attname = 'content_tsv' "
                    "AND NOT attisdropped), "
                    "(SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(:i))"
                ),
                {"t": f"public.{table}", "i": f"public.{table}_tsv_idx"},
            )
        ).one()
        has_table, has_column, index_valid = state
        if not has_table or (has_column and index_valid):
            return False
        if not has_column:
            await conn.execute(text(_keyword_column_sql(table, text_search_config)))
    autocommit = await engine.connect()
    try:
        conn = await autocommit.execution_options(isolation_level="AUTOCOMMIT")
        if index_valid is False:
            await conn.execute(text(f"DROP INDEX CONCURRENTLY IF EXISTS {table}_tsv_idx"))
        await conn.execute(text(_keyword_index_sql(table, concurrently=True)))
    finally:
        await autocommit.close()
    return True


async def has_citation_columns(
    conn: AsyncSession | AsyncConnection, table: str, schema: str = "public"
) -> bool:
    """Whether ``schema.table`` has the citation columns (a table created before them has
    none until its next write)."""
    row = await conn.execute(
        text(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c "
            "ON c.oid = a.attrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = :s AND c.relname = :t AND a.attname = 'char_start' "
            "AND NOT a.attisdropped)"
        ),
        {"s": schema, "t": table},
    )
    return bool(row.scalar())


async def ensure_citation_columns(conn: AsyncSession | AsyncConnection, collection: str) -> None:
    """Give ``rag_<collection>`` (and its side table, which inherits them) the citation
    columns when it was created before them, in the caller's transaction.

    Nullable without a default, so Postgres changes its catalog only (no rewrite); the
    ``ACCESS EXCLUSIVE`` lock this takes holds the collection's searches and writes until
    the caller's transaction ends, once in the table's life. Concurrent callers serialize
    on that lock, and the later ones find the columns there (``IF NOT EXISTS``)."""
    table = vector_table_name(collection)
    if await has_citation_columns(conn, table):
        return
    added = ", ".join(f"ADD COLUMN IF NOT EXISTS {c} {t}" for c, t in CITATION_COLUMNS.items())
    await conn.execute(text(f"ALTER TABLE public.{table} {added}"))


def _citation_values(citation: Citation | None) -> tuple[Any, ...]:
    if citation is None:
        return (None, None, None, None, None)
    return (
        citation.page_start,
        citation.page_end,
        citation.char_start,
        citation.char_end,
        list(citation.heading_path),
    )


def chunk_records(
    document_id: uuid.UUID,
    chunks: Sequence[str],
    embeddings: np.ndarray,
    stamp: ChunkStamp,
    citations: Sequence[Citation] | None = None,
) -> list[tuple[Any, ...]]:
    """One row per chunk, in ``COLUMNS`` order, as the binary COPY takes them; without
    ``citations`` (one per chunk), the citation columns are null."""
    if citations is not None and len(citations) != len(chunks):
        raise ValueError(f"{len(citations)} citations for {len(chunks)} chunks")
    return [
        (
            chunk_id(document_id, i),
            document_id,
            i,
            content.replace("\x00", ""),
            embeddings[i],
            stamp.knowledge_base_id,
            stamp.organization_id,
            stamp.tracking_id,
            stamp.source,
            stamp.document_type,
            stamp.organizational_unit,
            stamp.document_date,
            stamp.source_path,
            stamp.filename,
            stamp.content_hash,
            stamp.writer_kind,
            *_citation_values(citations[i] if citations is not None else None),
        )
        for i, content in enumerate(chunks)
    ]


async def write_chunks(
    session: AsyncSession,
    collection: str,
    document_id: uuid.UUID,
    chunks: Sequence[str],
    embeddings: np.ndarray,
    stamp: ChunkStamp,
    citations: Sequence[Citation] | None = None,
) -> int:
    """Replace the chunk set of ``document_id`` with these chunks (binary COPY), in the caller's tx.

    Deleting first makes a redelivered event rewrite the same set instead of
    adding a second copy. In bulk mode the set goes to the side table (``lock_for_writing``).
    A table from before citations gets their columns first (``ensure_citation_columns``).
    """
    table = vector_table_name(collection)
    target = await lock_for_writing(session, collection)
    await ensure_citation_columns(session, collection)
    # the parent's DELETE reaches its side table too (inheritance)
    await session.execute(text(f"DELETE FROM {table} WHERE document_id = :d"), {"d": document_id})
    records = chunk_records(document_id, chunks, embeddings, stamp, citations)
    if records:
        conn = await driver_connection(session)
        schema, _, name = target.rpartition(".")
        await conn.copy_records_to_table(
            name, records=records, columns=list(COLUMNS), schema_name=schema or None
        )
    return len(records)


async def delete_documents(
    session: AsyncSession, collection: str, document_ids: Sequence[uuid.UUID]
) -> int:
    if not document_ids or not await table_exists(session, collection):
        return 0
    table = vector_table_name(collection)
    await lock_for_writing(session, collection)
    result = await session.execute(
        text(f"DELETE FROM {table} WHERE document_id = ANY(:ids)"), {"ids": list(document_ids)}
    )
    return int(getattr(result, "rowcount", 0) or 0)


OPERATOR_CHUNKS = (
    "(knowledge_base_id IS NULL AND organization_id IS NULL AND writer_kind = 'operator')"
)

#: The unfiled chunks of the organizations of the bases ``:kbs`` (every base but an
#: app-scoped one, and none outside an organization): legacy content filed under no base,
#: which the bases of its tenant list, search and take (``unfiled.tenants``).
TENANT_UNFILED_CHUNKS = (
    "(knowledge_base_id IS NULL AND organization_id = ANY(ARRAY("
    "SELECT organization_id FROM knowledge_bases WHERE id = ANY(:kbs) "
    "AND scope <> 'app' AND organization_id IS NOT NULL)))"
)


def scope_sql(include_operator: bool) -> str:
    """The tenant constraint, from the caller's resolved knowledge bases (``:kbs``, all on the
    table's name), never from a request body.

    The bases read their own chunks and the unfiled chunks of their organizations
    (``TENANT_UNFILED_CHUNKS``); an app-scoped base (``include_operator``) also reads the
    operator's unfiled global chunks (``docproc rag-ingest``). Nothing else reads chunks no
    knowledge base owns.
    """
    reads = ["knowledge_base_id = ANY(:kbs)", TENANT_UNFILED_CHUNKS]
    if include_operator:
        reads.append(OPERATOR_CHUNKS)
    return f"({' OR '.join(reads)})"


async def drop_table(session: AsyncSession, collection: str) -> None:
    table = vector_table_name(collection)
    await session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _lock_key(table)})
    await session.execute(text(f"DROP TABLE IF EXISTS {side_table_name(collection)}"))
    await session.execute(text(f"DROP TABLE IF EXISTS {table}"))
