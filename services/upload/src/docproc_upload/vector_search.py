"""Reading the collections' vector tables (``rag_<collection>``, written by the embedder
through ``docproc_common.vectorstore``): a search within the caller's knowledge bases, and
what the API counts and lists of the chunks a search reads (``scope_sql``).

A search ranks by vector (HNSW with an exact-scan fallback), by keyword (the table's
``content_tsv`` under its GIN index) or by both fused (``search``, ``fuse``).
"""

from __future__ import annotations

import json
import math
import time
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, Literal

import numpy as np
from docproc_common.db.vector_tables import vector_table_name
from docproc_common.errors import Conflict, FieldError
from docproc_common.vectorstore import (
    DEFAULT_TEXT_SEARCH_CONFIG,
    OPERATOR_CHUNKS,
    scope_sql,
    table_exists,
)
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


async def holds_unfiled_beyond(
    session: AsyncSession,
    collection: str,
    *,
    operator: bool,
    organization_ids: Sequence[str],
) -> bool:
    """Does the table hold a chunk no knowledge base owns other than the operator's
    (``OPERATOR_CHUNKS``, when ``operator``) and the unfiled chunks of ``organization_ids``?

    What keeps the last bases' table when they are deleted: content they do not take
    (an operator ingest under an organization's base, another tenant's unfiled chunks,
    a legacy chunk of unknown origin).
    """
    if not await table_exists(session, collection):
        return False
    table = vector_table_name(collection)
    taken = " OR ".join(["organization_id = ANY(:orgs)", *([OPERATOR_CHUNKS] if operator else [])])
    row = await session.execute(
        text(
            f"SELECT EXISTS (SELECT 1 FROM {table} "
            f"WHERE knowledge_base_id IS NULL AND NOT COALESCE({taken}, false))"
        ),
        {"orgs": list(organization_ids)},
    )
    return bool(row.scalar())


async def count_vectors(
    session: AsyncSession,
    collection: str,
    knowledge_base_ids: Sequence[uuid.UUID],
    *,
    include_operator: bool = False,
) -> int:
    """The chunks ``search`` reads for these knowledge bases (``scope_sql``)."""
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
    """The ``organizational_unit`` values really present in the chunks ``search`` reads."""
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


EF_SEARCH_BY_ROWS: tuple[tuple[float, int], ...] = ((200_000, 100), (float("inf"), 400))
"""``hnsw.ef_search`` by table size (rows up to, ef) for an unfiltered search; see ``search``."""


EF_SEARCH_MAX = 400
"""The most a filtered search raises ``hnsw.ef_search`` to (2 x the rows asked for when
that is larger); a filter that would need more is an exact scan."""


EXACT_BELOW_ROWS = 500
"""Below this many rows a search is a deliberate exact scan (``search``)."""


Reader = AsyncSession | AsyncConnection
"""What a search reads through: a session, or an autocommit connection (one statement per
search, no ``BEGIN``/``COMMIT``)."""


def _ef_cap(limit: int) -> int:
    return max(EF_SEARCH_MAX, 2 * limit)


def ef_search_for(table_rows: float, limit: int, matching_rows: float | None = None) -> int:
    """``hnsw.ef_search`` for ``limit`` rows from a table of ``table_rows``: by size, at
    least 2 x ``limit``, and enough candidates to hold ``limit`` of the ``matching_rows``
    the scope and filters keep (up to ``_ef_cap``)."""
    ef = max(next(ef for rows, ef in EF_SEARCH_BY_ROWS if table_rows <= rows), 2 * limit)
    if matching_rows is not None and matching_rows < table_rows:
        ef = max(ef, math.ceil(limit * table_rows / max(matching_rows, 1.0)))
    return min(ef, _ef_cap(limit))


SearchMode = Literal["vector", "keyword", "hybrid"]


HYBRID_VECTOR_WEIGHT = 0.5
"""The vector ranking's share of a hybrid score (``fuse``): ``w x cosine + (1 - w) x
keyword score``; see ``fuse`` for how it was measured."""


HYBRID_CANDIDATES = 50
"""Hits each ranking contributes to the fusion (``top_k`` when that is larger)."""


class KeywordIndexMissing(Conflict):
    def __init__(self, collection: str) -> None:
        super().__init__(
            f"The collection '{collection}' has no keyword index yet; the operator adds it "
            "with docproc rag-keyword-index (vector search works meanwhile)",
            fields=[FieldError("mode", "the collection has no keyword index yet")],
        )


@dataclass(frozen=True, slots=True)
class _Estimates:
    table_rows: float
    matching_rows: float
    keyword_index: bool


class PlanCache:
    """The planner's estimates (``_row_estimates``) of recent searches, by table, scope and
    filters, kept ``ttl_s``: a search that repeats them sends its one statement only.

    Estimates only choose the plan (HNSW or exact scan, ``ef_search``); a stale one costs
    time, never a result (a short HNSW page is still completed by the exact scan).
    """

    def __init__(self, ttl_s: float = 30.0, size: int = 1024) -> None:
        self.ttl_s = ttl_s
        self.size = size
        self._entries: OrderedDict[tuple[Any, ...], tuple[float, _Estimates]] = OrderedDict()

    @staticmethod
    def key(table: str, where: str, params: dict[str, Any]) -> tuple[Any, ...]:
        values = tuple(
            (k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(params.items())
        )
        return (table, where, values)

    def get(self, key: tuple[Any, ...]) -> _Estimates | None:
        entry = self._entries.get(key)
        if entry is None or time.monotonic() - entry[0] > self.ttl_s:
            return None
        self._entries.move_to_end(key)
        return entry[1]

    def put(self, key: tuple[Any, ...], estimates: _Estimates) -> None:
        self._entries[key] = (time.monotonic(), estimates)
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def forget(self, table: str) -> None:
        for key in [k for k in self._entries if k[0] == table]:
            del self._entries[key]


async def _row_estimates(
    session: Reader, table: str, where: str, params: dict[str, Any]
) -> _Estimates | None:
    """Rows in the table and rows ``where`` keeps, as the planner estimates them, and whether
    the table has its keyword column; None: no table.

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
                "AND a.attname = 'content_tsv' AND NOT a.attisdropped) "
                "FROM pg_class c WHERE c.oid = to_regclass(:t)"
            ),
            {"t": f"public.{table}"},
        )
    ).first()
    if size is None:
        return None
    plan: Any = (
        await session.execute(
            text(f"EXPLAIN (FORMAT JSON) SELECT 1 FROM {table} WHERE {where}"),
            params,
        )
    ).scalar_one()
    if isinstance(plan, str):
        plan = json.loads(plan)
    return _Estimates(float(size[0]), float(plan[0]["Plan"]["Plan Rows"]), bool(size[1]))


_SELECT_COLUMNS = (
    "id, document_id, tracking_id, chunk_no, content, filename, source, document_type, "
    "organizational_unit, document_date"
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
    )


def _exact_scan(estimates: _Estimates, limit: int) -> bool:
    """A small table, or a scope and filters so selective that even the index's first
    ``_ef_cap`` candidates would hold fewer than ``limit`` matching rows."""
    if estimates.table_rows < EXACT_BELOW_ROWS:
        return True
    return estimates.matching_rows * _ef_cap(limit) < limit * estimates.table_rows


async def _vector_hits(
    session: Reader,
    table: str,
    where: str,
    params: dict[str, Any],
    estimates: _Estimates,
    limit: int,
) -> list[Hit]:
    """The ``limit`` nearest matching chunks, best first (cosine similarity); see ``search``.

    The HNSW statement sets its own ``hnsw.*`` settings, local to its transaction, in an
    InitPlan the planner runs as a one-time filter before the index scan starts: one
    statement, no ``SET`` before it, and no transaction needed around it.
    """
    ef_search = ef_search_for(estimates.table_rows, limit, estimates.matching_rows)
    select_cols = f"{_SELECT_COLUMNS}, embedding <=> :q AS distance"
    params = {**params, "k": limit}
    rows: Sequence[Any] = []
    if not _exact_scan(estimates, limit):
        rows = (
            await session.execute(
                text(
                    f"SELECT {select_cols} FROM {table} WHERE {where} AND (SELECT "
                    "set_config('hnsw.iterative_scan', 'relaxed_order', true) || "
                    "set_config('hnsw.ef_search', :ef, true)) IS NOT NULL "
                    "ORDER BY embedding <=> :q LIMIT :k"
                ),
                {**params, "ef": str(ef_search)},
            )
        ).all()
    if len(rows) < limit:
        rows = (
            await session.execute(
                text(
                    f"SELECT * FROM (SELECT {select_cols} FROM {table} WHERE {where} OFFSET 0) s "
                    "ORDER BY distance LIMIT :k"
                ),
                params,
            )
        ).all()
    hits = [_hit(r, 1.0 - float(r.distance)) for r in rows]
    return sorted(hits, key=lambda h: h.score, reverse=True)


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


async def _keyword_hits(
    session: Reader, table: str, scope: str, where: str, params: dict[str, Any], limit: int
) -> list[Hit]:
    """The ``limit`` chunks holding any word of the query, best first by BM25, from the GIN
    index; a chunk that satisfies the whole query (web-search syntax: every word,
    ``"a phrase"``, ``or``) ranks above every chunk that does not, and a ``-word`` excludes.

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
                SELECT {_SELECT_COLUMNS}, (s.rank + CASE WHEN c.content_tsv @@ q.strict
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
            {**params, "k": limit},
        )
    ).all()
    return [_hit(r, float(r.rank)) for r in rows]


def fuse(
    vector: Sequence[Hit],
    keyword: Sequence[Hit],
    top_k: int,
    *,
    limit: int,
    weight: float = HYBRID_VECTOR_WEIGHT,
) -> list[Hit]:
    """A normalised score blend of the two rankings (each at most ``limit`` hits, best
    first): ``weight x cosine + (1 - weight) x keyword score``, best first, ties in the
    vector ranking's order then the keyword one's.

    Both scores are on fixed scales (a cosine; the keyword score in [0, 1), 0.5 and above
    for a chunk satisfying the whole query), so a weak keyword match (a paraphrase sharing
    a common word) moves a chunk little, and an exact identifier a lot, where reciprocal
    rank fusion gives a ranking's first hit the same weight however poor it is. A chunk
    missing from a full ranking (``limit`` hits) takes that ranking's last score, the most
    it can have there; from a shorter one, 0 (it did not match).
    """

    def floor(ranking: Sequence[Hit]) -> float:
        return ranking[-1].score if len(ranking) >= limit else 0.0

    similarity = {h.chunk_id: h.score for h in vector}
    matched = {h.chunk_id: h.score for h in keyword}
    first: dict[uuid.UUID, Hit] = {}
    for hit in [*vector, *keyword]:
        first.setdefault(hit.chunk_id, hit)
    low_v, low_k = floor(vector), floor(keyword)
    scores = {
        c: weight * similarity.get(c, low_v) + (1 - weight) * matched.get(c, low_k) for c in first
    }
    order = sorted(first, key=scores.__getitem__, reverse=True)  # stable: first seen wins ties
    return [replace(first[c], score=scores[c]) for c in order[:top_k]]


async def search(
    session: Reader,
    collection: str,
    query: np.ndarray | None,
    *,
    knowledge_base_ids: Sequence[uuid.UUID],
    top_k: int,
    filters: SearchFilters = SearchFilters(),  # noqa: B008 - frozen, immutable default
    include_operator: bool = False,
    mode: SearchMode = "vector",
    text_query: str = "",
    text_search_config: str = DEFAULT_TEXT_SEARCH_CONFIG,
    plans: PlanCache | None = None,
) -> list[Hit]:
    """Top-k within the caller's knowledge bases, filters applied before top-k.

    ``mode``: ``vector`` ranks by cosine similarity to ``query`` (score: the similarity);
    ``keyword`` by full-text match of ``text_query`` on ``content_tsv`` read with
    ``text_search_config`` (score: ``ts_rank_cd``; ``query`` is not needed); ``hybrid``
    fuses the first ``HYBRID_CANDIDATES`` of both rankings (``fuse``; score: the fused
    one). Both rankings read the same scope and filters.

    The vector ranking is HNSW with pgvector's iterative scan (``relaxed_order``) and
    ``hnsw.ef_search`` from the table's size and the share of it the scope and filters keep
    (``ef_search_for``: 100 up to 200k rows, 400 above; at least 2 x the rows asked for, and
    enough candidates to hold them among the matching rows, up to 400), set inside the
    statement itself (``_vector_hits``). An exact scan over the matching rows answers
    instead on a table under ``EXACT_BELOW_ROWS`` (500), and when the scope and filters are
    selective: when the planner's estimates say even 400 candidates of the index would hold
    fewer than ``top_k`` matching rows (matching rows x 400 < top_k x table rows; with top
    10, under 2.5% of the table).
    When the HNSW scan still leaves fewer than ``top_k`` rows, the exact scan answers too,
    so a filter never returns a short page that a complete one would fill.

    The estimates are one catalog read and one EXPLAIN (planning only); ``plans`` keeps
    them between searches, so a search that repeats a scope and filters is one statement
    (on an autocommit connection: no ``BEGIN``/``COMMIT`` either).

    Why (``bench/vectors.py`` and ``bench/search_cost.py``, 384-d clustered chunks, top
    10, docs/benchmarks.md "Vector store" and "Search cost"):

    - ``ef_search``: at 100k chunks 100 has recall@10 0.999-1.0 on both data sets, where
      40 loses whole queries on islands data (0.97-0.99) for no time saved, and 400 costs
      several times more for nothing; at 1M pgvector's 40 loses whole queries (the graph search
      settles in a wrong neighbourhood: recall@10 0 for ~8% of them) for a mean recall of
      0.90; 100 gives 0.96, 200 0.97, 400 0.99.
    - Small tables: under ~500 rows the exact scan costs what the HNSW scan does, and is
      exact; above, it costs more.
    - Selective filters: once the first candidates hold fewer than ``top_k`` matches the
      result depends on the iterative continuation, whose recall@10 stays at 0.86-0.94
      with a 1% filter whatever ``ef_search`` (up to 1000) or ``max_scan_tuples``, at
      100k and at 1M. With 3.6% or more, HNSW keeps 0.98. The exact scan has recall 1;
      with the filter columns' b-trees (``FILTER_INDEXES``) it reads only the matching
      rows: ~5 ms at 100k chunks, ~26 ms at 1M with 1%.
    """
    table = vector_table_name(collection)
    params: dict[str, Any] = {"kbs": list(knowledge_base_ids)}
    scope = scope_sql(include_operator)
    where = " AND ".join([scope, *_filter_sql(filters, params)])
    key = PlanCache.key(table, where, params)
    estimates = plans.get(key) if plans is not None else None
    if estimates is None or (mode != "vector" and not estimates.keyword_index):
        # (read again when the cache says "no keyword column": rag-keyword-index may have
        # added it since)
        estimates = await _row_estimates(session, table, where, params)
        if estimates is None:
            return []
        if plans is not None:
            plans.put(key, estimates)
    if mode != "vector" and not estimates.keyword_index:
        raise KeywordIndexMissing(collection)
    limit = top_k if mode != "hybrid" else max(top_k, HYBRID_CANDIDATES)
    rankings: list[list[Hit]] = []
    try:
        if mode != "keyword":
            if query is None:
                raise ValueError(f"a {mode} search needs the query's vector")
            vector_params = {**params, "q": query.astype(np.float32)}
            rankings.append(
                await _vector_hits(session, table, where, vector_params, estimates, limit)
            )
        if mode != "vector":
            keyword_params = {**params, "text": text_query, "cfg": text_search_config}
            rankings.append(
                await _keyword_hits(session, table, scope, where, keyword_params, limit)
            )
    except DBAPIError as exc:
        # the estimates were cached and the table has gone since (its last base emptied,
        # docproc rag-drop): nothing to find. An autocommit connection goes on; a
        # session's transaction is aborted, so there the error stands.
        gone = getattr(exc.orig, "sqlstate", None) == "42P01"  # undefined_table
        if gone and plans is not None:
            plans.forget(table)
        if not gone or not isinstance(session, AsyncConnection):
            raise
        return []
    if mode == "hybrid":
        return fuse(rankings[0], rankings[1], top_k, limit=limit)
    return rankings[0]
