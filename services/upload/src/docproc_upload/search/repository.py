"""Every SQL statement a search runs, on the collections' vector tables (``rag_<collection>``,
written by the embedder through ``docproc_common.vectorstore``): the planner's estimates,
the vector ranking (HNSW, or the exact scan), the keyword ranking (BM25 on the table's
``content_tsv`` under its GIN index), and what the API counts and lists of the chunks a
search reads (``scope_sql``). Which statement runs, and how the rankings are fused, is
``search.service``'s.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np
from docproc_common.citations import Citation
from docproc_common.db.vector_tables import vector_table_name
from docproc_common.vectorstore import CITATION_COLUMNS, scope_sql, table_exists
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession


@dataclass(frozen=True, slots=True)
class SearchFilters:
    source: list[str] | None = None
    document_type: list[str] | None = None
    organizational_unit: list[str] | None = None
    date_from: date | None = None
    date_to: date | None = None
    parent_doc_id: uuid.UUID | None = None


@dataclass(frozen=True, slots=True)
class Hit:
    chunk_id: uuid.UUID
    document_id: uuid.UUID
    tracking_id: uuid.UUID | None
    chunk_no: int
    content: str
    filename: str | None
    score: float
    metadata: dict[str, Any] = field(default_factory=dict)
    knowledge_base_id: uuid.UUID | None = None
    organization_id: str | None = None
    citation: Citation | None = None


Reader = AsyncSession | AsyncConnection
"""What a search reads through: a session, or an autocommit connection (one statement per
search, no ``BEGIN``/``COMMIT``)."""


async def count_vectors(
    session: AsyncSession,
    collection: str,
    knowledge_base_ids: Sequence[uuid.UUID],
    *,
    include_operator: bool = False,
) -> int:
    """The chunks a search reads for these knowledge bases (``scope_sql``)."""
    if not await table_exists(session, collection):
        return 0
    table = vector_table_name(collection)
    row = await session.execute(
        text(f"SELECT count(*) FROM {table} WHERE {scope_sql(include_operator)}"),
        {"kbs": list(knowledge_base_ids)},
    )
    return int(row.scalar() or 0)


async def filter_values(
    session: AsyncSession,
    collection: str,
    knowledge_base_ids: Sequence[uuid.UUID],
    *,
    include_operator: bool = False,
) -> list[str]:
    """The ``organizational_unit`` values really present in the chunks a search reads."""
    if not await table_exists(session, collection):
        return []
    table = vector_table_name(collection)
    rows = await session.execute(
        text(
            f"SELECT DISTINCT organizational_unit FROM {table} "
            f"WHERE {scope_sql(include_operator)} AND organizational_unit IS NOT NULL "
            "ORDER BY organizational_unit"
        ),
        {"kbs": list(knowledge_base_ids)},
    )
    return [r[0] for r in rows]


def _filter_sql(filters: SearchFilters, params: dict[str, Any]) -> list[str]:
    """OR within a field, AND across fields; a chunk without a value fails closed (NULL never matches)."""
    clauses: list[str] = []
    for name in ("source", "document_type", "organizational_unit"):
        values = getattr(filters, name)
        if values is not None:
            params[name] = list(values)
            clauses.append(f"{name} = ANY(:{name})")
    if filters.date_from is not None:
        params["date_from"] = filters.date_from
        clauses.append("document_date >= :date_from")
    if filters.date_to is not None:
        params["date_to"] = filters.date_to
        clauses.append("document_date <= :date_to")
    if filters.parent_doc_id is not None:
        params["parent_doc_id"] = filters.parent_doc_id
        clauses.append("tracking_id = :parent_doc_id")
    return clauses


@dataclass(frozen=True, slots=True)
class SearchedChunks:
    """The chunks one search reads, as SQL: the table, its ``scope`` (the caller's
    knowledge bases), ``where`` (the scope and the filters) and their parameters; and
    whether the table has the citation columns to read (``Estimates.citations``)."""

    table: str
    scope: str
    where: str
    params: dict[str, Any]
    citations: bool = False

    @property
    def columns(self) -> str:
        """What each hit reads, the citation columns where the table has them."""
        return f"{_SELECT_COLUMNS}, {_CITATION_SELECT}" if self.citations else _SELECT_COLUMNS


def searched_chunks(
    collection: str,
    knowledge_base_ids: Sequence[uuid.UUID],
    filters: SearchFilters,
    *,
    include_operator: bool,
) -> SearchedChunks:
    params: dict[str, Any] = {"kbs": list(knowledge_base_ids)}
    scope = scope_sql(include_operator)
    where = " AND ".join([scope, *_filter_sql(filters, params)])
    return SearchedChunks(vector_table_name(collection), scope, where, params)


@dataclass(frozen=True, slots=True)
class Estimates:
    table_rows: float
    matching_rows: float
    keyword_index: bool
    citations: bool = False


async def row_estimates(session: Reader, chunks: SearchedChunks) -> Estimates | None:
    """Rows in the table and rows ``chunks.where`` keeps, as the planner estimates them, and whether
    the table has its keyword column and its citation columns; None: no table.

    Planning only, from the table's statistics, no scan. The table size is extrapolated
    from ``reltuples`` to the current number of pages as the planner does, so both
    figures age alike; it is 0 while the table has never been analyzed.
    """
    size = (
        await session.execute(
            text(
                "SELECT CASE WHEN c.relpages > 0 AND c.reltuples >= 0 THEN c.reltuples / "
                "c.relpages * (pg_relation_size(c.oid) / current_setting('block_size')::int) "
                "ELSE 0 END, EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid "
                "AND a.attname = 'content_tsv' AND NOT a.attisdropped), "
                "EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid "
                "AND a.attname = 'char_start' AND NOT a.attisdropped) "
                "FROM pg_class c WHERE c.oid = to_regclass(:t)"
            ),
            {"t": f"public.{chunks.table}"},
        )
    ).first()
    if size is None:
        return None
    plan: Any = (
        await session.execute(
            text(f"EXPLAIN (FORMAT JSON) SELECT 1 FROM {chunks.table} WHERE {chunks.where}"),
            chunks.params,
        )
    ).scalar_one()
    if isinstance(plan, str):
        plan = json.loads(plan)
    return Estimates(
        float(size[0]), float(plan[0]["Plan"]["Plan Rows"]), bool(size[1]), bool(size[2])
    )


_SELECT_COLUMNS = (
    "id, document_id, tracking_id, chunk_no, content, filename, source, document_type, "
    "organizational_unit, document_date, knowledge_base_id, organization_id"
)
_CITATION_SELECT = ", ".join(CITATION_COLUMNS)


def _citation(r: Any) -> Citation | None:
    """A row's citation; None where the table or the chunk has none (written before)."""
    row = r._mapping
    if row.get("char_start") is None:
        return None
    return Citation(
        page_start=row["page_start"],
        page_end=row["page_end"],
        char_start=row["char_start"],
        char_end=row["char_end"],
        heading_path=tuple(row["heading_path"] or ()),
    )


def _hit(r: Any, score: float) -> Hit:
    return Hit(
        chunk_id=r.id,
        document_id=r.document_id,
        tracking_id=r.tracking_id,
        chunk_no=r.chunk_no,
        content=r.content,
        filename=r.filename,
        score=score,
        metadata={
            "source": r.source,
            "document_type": r.document_type,
            "organizational_unit": r.organizational_unit,
            "document_date": r.document_date.isoformat() if r.document_date else None,
        },
        knowledge_base_id=r.knowledge_base_id,
        organization_id=r.organization_id,
        citation=_citation(r),
    )


def _distance_columns(chunks: SearchedChunks) -> str:
    return f"{chunks.columns}, embedding <=> :q AS distance"


def _vector_params(chunks: SearchedChunks, query: np.ndarray, limit: int) -> dict[str, Any]:
    return {**chunks.params, "q": query.astype(np.float32), "k": limit}


def _by_similarity(rows: Sequence[Any]) -> list[Hit]:
    return [_hit(r, 1.0 - float(r.distance)) for r in rows]


async def hnsw_hits(
    session: Reader, chunks: SearchedChunks, query: np.ndarray, *, ef_search: int, limit: int
) -> list[Hit]:
    """At most ``limit`` nearest matching chunks by the HNSW index, with pgvector's
    iterative scan (``relaxed_order``) and ``ef_search``; score: the cosine similarity.

    The statement sets its own ``hnsw.*`` settings, local to its transaction, in an
    InitPlan the planner runs as a one-time filter before the index scan starts: one
    statement, no ``SET`` before it, and no transaction needed around it.
    """
    rows = (
        await session.execute(
            text(
                f"SELECT {_distance_columns(chunks)} FROM {chunks.table} WHERE {chunks.where} "
                "AND (SELECT "
                "set_config('hnsw.iterative_scan', 'relaxed_order', true) || "
                "set_config('hnsw.ef_search', :ef, true)) IS NOT NULL "
                "ORDER BY embedding <=> :q LIMIT :k"
            ),
            {**_vector_params(chunks, query, limit), "ef": str(ef_search)},
        )
    ).all()
    return _by_similarity(rows)


async def exact_hits(
    session: Reader, chunks: SearchedChunks, query: np.ndarray, *, limit: int
) -> list[Hit]:
    """The ``limit`` nearest matching chunks by an exact scan of the matching rows (``OFFSET
    0`` keeps the planner off the HNSW index); score: the cosine similarity."""
    rows = (
        await session.execute(
            text(
                f"SELECT * FROM (SELECT {_distance_columns(chunks)} FROM {chunks.table} "
                f"WHERE {chunks.where} OFFSET 0) s ORDER BY distance LIMIT :k"
            ),
            _vector_params(chunks, query, limit),
        )
    ).all()
    return _by_similarity(rows)


BM25_K1 = 1.2
"""BM25's term-frequency saturation (Lucene's and Anserini's default): the second
occurrence of a word adds about half what the first did, the tenth little more."""

BM25_B = 0.75
"""BM25's length normalisation: how far a chunk longer than the scope's average is
discounted for holding more words."""

COMMON_TERM_SHARE = 0.1
"""A query word in more than this share of the scope's chunks scores the candidates
the other words found, but finds none itself (unless every word is that common)."""


AVERAGE_LENGTH_SAMPLE = 1000
"""Chunks of the scope whose mean length stands for the scope's average in BM25's length
normalisation: a constant of the ranking, where reading every chunk's ``tsvector`` would
cost a scan of the scope per search."""


def _term_query_sql(lexeme: str) -> str:
    """A ``tsquery`` of exactly one lexeme, from SQL text ``lexeme``: quoted as tsquery input
    takes it (quotes and backslashes doubled), so nothing in it is read as an operator."""
    escaped = f"replace(replace({lexeme}, '\\', '\\\\'), '''', '''''')"
    return f"CAST('''' || {escaped} || '''' AS tsquery)"


def web_search_text(query: str) -> str:
    """``query`` as ``websearch_to_tsquery`` should read it: a minus excludes only where a
    person types one as an operator, at the start of a word after a space (``-word``,
    ``-"a phrase"``). Postgres also takes a dash between words (``cells - a study``), a
    hyphen after a bracket (``(CD)-associated``) and a number's sign (``-5``) for one, so a
    pasted sentence or abstract would exclude the very chunks that hold its words; those
    minus signs read as spaces. A hyphen inside a word (``IL-6``, ``x-ray``) and anything
    inside quotes stay as they are."""
    read = list(query)
    quoted = False
    for i, char in enumerate(query):
        if char == '"':
            quoted = not quoted
        if char != "-" or quoted:
            continue
        before = query[i - 1] if i else " "
        after = query[i + 1] if i + 1 < len(query) else " "
        typed = before.isspace() and (after.isalpha() or after == '"')
        if not before.isalnum() and not typed:
            read[i] = " "
    return "".join(read)


async def keyword_hits(
    session: Reader,
    chunks: SearchedChunks,
    text_query: str,
    *,
    text_search_config: str,
    limit: int,
) -> list[Hit]:
    """The ``limit`` chunks holding any word of the query, best first by BM25, from the GIN
    index; a chunk that satisfies the whole query (web-search syntax: every word,
    ``"a phrase"``, ``or``) ranks above every chunk that does not, and a ``-word`` excludes
    (``web_search_text``: only a minus typed as an operator).

    BM25 (Robertson et al.; ``BM25_K1``, ``BM25_B``): a word's weight is its inverse
    document frequency ``ln(1 + (N - df + 0.5) / (df + 0.5))`` over the chunks of the
    scope (the caller's knowledge bases, not narrowed by the filters), its frequency in
    the chunk saturates, and a chunk is normalised by its length (distinct lexemes) over
    the scope's average. ``df`` is counted per query word on the GIN index at query time,
    so the statistics are always the collection's as it stands; a word in more than
    ``COMMON_TERM_SHARE`` of the chunks adds to the score but finds no chunk itself. The
    score is BM25 over twice the most any chunk can reach (``ceiling``: ``sum(idf) x (k1 +
    1)``), plus 0.5 for a chunk that satisfies the whole query: in [0, 1), 0.5 and above
    for a whole match, comparable across queries, in rank order.
    """
    table, scope, where = chunks.table, chunks.scope, chunks.where
    one = _term_query_sql("w.lexeme")
    rows = (
        await session.execute(
            text(
                f"""WITH q AS (
                    SELECT websearch_to_tsquery(CAST(:cfg AS regconfig), :text) AS strict
                ), words AS (
                    SELECT w.lexeme, {one} AS one, w.lexeme = ANY(tsvector_to_array(
                        to_tsvector('simple', COALESCE(NULLIF(querytree(q.strict), 'T'), ''))
                    )) AS wanted
                    FROM q, unnest(tsvector_to_array(to_tsvector('simple', q.strict::text)))
                        w(lexeme)
                ), corpus AS (
                    SELECT (SELECT count(*) FROM {table} WHERE {scope}) AS n,
                        (SELECT avg(length(content_tsv)) FROM (SELECT content_tsv FROM {table}
                         WHERE {scope} LIMIT {AVERAGE_LENGTH_SAMPLE}) sample) AS avgdl
                ), weights AS (
                    SELECT words.lexeme, words.one, d.df,
                        ln(1 + (corpus.n - d.df + 0.5) / (d.df + 0.5)) AS idf
                    FROM words, corpus, LATERAL (
                        SELECT count(*) AS df FROM {table} WHERE {scope} AND content_tsv @@ words.one
                    ) d
                    WHERE words.wanted AND d.df > 0
                ), finding AS (
                    SELECT CAST(string_agg(CAST(weights.one AS text), ' | ') AS tsquery) AS found,
                        sum(weights.idf) * {BM25_K1 + 1} AS ceiling,
                        (SELECT array_agg(lexeme) FROM weights) AS lexemes
                    FROM weights, corpus
                    WHERE weights.df <= {COMMON_TERM_SHARE} * corpus.n
                        OR NOT EXISTS (SELECT 1 FROM weights w2 WHERE w2.df <= {COMMON_TERM_SHARE} * corpus.n)
                ), excluded AS (
                    SELECT CAST(string_agg(CAST(words.one AS text), ' | ') AS tsquery) AS out
                    FROM words WHERE NOT words.wanted
                )
                SELECT {chunks.columns}, (s.rank + CASE WHEN c.content_tsv @@ q.strict
                    THEN finding.ceiling ELSE 0 END) / (2 * finding.ceiling) AS rank
                FROM {table} c, q, corpus, finding, excluded, LATERAL (
                    SELECT sum(weights.idf * u.tf * {BM25_K1 + 1} / (u.tf + {BM25_K1}
                        * (1 - {BM25_B} + {BM25_B} * length(c.content_tsv) / corpus.avgdl))) AS rank
                    FROM (SELECT x.lexeme, COALESCE(cardinality(x.positions), 1) AS tf
                          FROM unnest(ts_filter(setweight(c.content_tsv, 'A', finding.lexemes),
                                                '{{a}}')) x) u
                    JOIN weights ON weights.lexeme = u.lexeme
                ) s
                WHERE {where} AND c.content_tsv @@ finding.found
                    AND (excluded.out IS NULL OR NOT c.content_tsv @@ excluded.out)
                ORDER BY rank DESC, c.id LIMIT :k"""
            ),
            {
                **chunks.params,
                "text": web_search_text(text_query),
                "cfg": text_search_config,
                "k": limit,
            },
        )
    ).all()
    return [_hit(r, float(r.rank)) for r in rows]


def table_gone(exc: DBAPIError) -> bool:
    """Whether a statement failed because its table is gone (``undefined_table``)."""
    return getattr(exc.orig, "sqlstate", None) == "42P01"
