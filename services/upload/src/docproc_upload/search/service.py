"""``POST /rag/search``: what a search reads, how, and what it refuses.

The bases are resolved and each collection's embedding client opened before a vector is
read (``plan_search``: a name the caller reaches nothing on, a base it cannot view, a
query no base of its own organization would pay for, a collection without a usable key
all refuse the whole search). Each collection is then ranked by vector (HNSW with an
exact-scan fallback), by keyword (BM25 on the table's ``content_tsv``) or by both fused
(``search_collection``, ``fuse``); the statements are ``search.repository``'s. A collection
whose base names a reranker (or every one, with ``rerank: true``) then has its first
``RERANK_CANDIDATES`` hits reordered by it (``plan_rerank``, ``rerank``; ADR 0017).
"""

from __future__ import annotations

import math
import statistics
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
from docproc_common.auth import Principal
from docproc_common.connectors import CONNECTORS
from docproc_common.db.models import KnowledgeBase, Scope
from docproc_common.db.vector_tables import validate_collection_name
from docproc_common.documents import CLI_SOURCE, UPLOAD_SOURCE
from docproc_common.embedding.client import EmbeddingClient, EmbeddingClients
from docproc_common.errors import Conflict, FieldError, InvalidInput
from docproc_common.rerank.client import Reranker
from docproc_common.runtime import Runtime
from docproc_common.unfiled import adopts_operator
from docproc_common.vectorstore import DEFAULT_TEXT_SEARCH_CONFIG
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from docproc_upload.access import Access, resolve_collection, resolve_kbs
from docproc_upload.search import repository
from docproc_upload.search.hits import search_hit
from docproc_upload.search.repository import Estimates, Hit, Reader, SearchFilters
from docproc_upload.search.schemas import SearchHit, SearchRequest

_LEGACY_FILTER = "parent_doc_id == "
#: What ``filters.source`` may name: every value a document's chunks are stamped with.
SOURCES = frozenset({UPLOAD_SOURCE, CLI_SOURCE, *CONNECTORS})


def _filters(req: SearchRequest) -> SearchFilters:
    f = req.filters
    parent: uuid.UUID | None = f.parent_doc_id if f else None
    if req.filter is not None:
        expr = req.filter.strip()
        if f is not None and f.parent_doc_id is not None:
            raise InvalidInput(
                "Give either the legacy filter string or filters.parent_doc_id, not both",
                fields=[FieldError("filter", "conflicts with filters.parent_doc_id")],
            )
        value = expr[len(_LEGACY_FILTER) :].strip() if expr.startswith(_LEGACY_FILTER) else ""
        try:
            parent = uuid.UUID(value.strip("\"'"))
        except ValueError as exc:
            raise InvalidInput(
                'The filter string only accepts parent_doc_id == "<id>"; use filters instead',
                fields=[FieldError("filter", "unsupported expression")],
            ) from exc
    if f is None:
        return SearchFilters(parent_doc_id=parent)
    unknown = sorted(set(f.source or ()) - SOURCES)
    if unknown:  # a value nothing stamps would match nothing, silently
        raise InvalidInput(
            f"Unknown source {', '.join(repr(v[:50]) for v in unknown)}: "
            f"a document's source is one of {', '.join(sorted(SOURCES))}",
            fields=[FieldError("filters.source", "not a source docproc stamps")],
        )
    return SearchFilters(
        source=f.source,
        document_type=f.document_type,
        organizational_unit=f.organizational_unit,
        date_from=f.date_from,
        date_to=f.date_to,
        parent_doc_id=parent,
    )


def billing_kb(
    principal: Principal, name: str, kbs: list[KnowledgeBase], field: str
) -> KnowledgeBase:
    """Whose embedding configuration (and key) answers a query on ``name``.

    The caller's own base (its organization's, or its own personal one) first, then an
    app-scoped base. Never a third tenant's, reached only through a grant: that would
    open *its* key, bill it for this caller's query and send the text through it, so a
    name reached only that way refuses the search, naming its bases (``field``).
    """
    for kb in kbs:
        if (principal.organization_id and kb.organization_id == principal.organization_id) or (
            kb.scope == Scope.PERSONAL and kb.owner_id == principal.user_id
        ):
            return kb
    for kb in kbs:
        if kb.scope == Scope.APP:
            return kb
    named = ", ".join(f"{kb.id} (organization {kb.organization_id})" for kb in kbs)
    raise InvalidInput(
        f"'{name}' is searched here only through knowledge bases of another organization "
        f"({named}); a search embeds with the caller's own organization's base or an "
        "app-scoped one, never with another organization's key. Search through a base "
        "of your organization instead",
        fields=[FieldError(field, "no knowledge base of your organization or app-scoped")],
    )


async def _searched_bases(
    session: AsyncSession, principal: Principal, req: SearchRequest
) -> list[tuple[str, list[KnowledgeBase]]]:
    """The bases a search reads, by collection name, all resolved before a vector is read.

    A name reaches every base on it the caller may view. ``knowledge_base_ids`` (an agent
    bound to bases) are exactly those bases, names never re-resolved: two bound bases on
    one name are searched together and the name's other bases are not. Any one the caller
    cannot view refuses the whole search as "Collection not found".
    """
    if req.knowledge_base_ids is not None:
        by_name: dict[str, list[KnowledgeBase]] = {}
        for kb in await resolve_kbs(session, principal, req.knowledge_base_ids, Access.VIEW):
            by_name.setdefault(kb.collection_name, []).append(kb)
        return list(by_name.items())
    resolved: list[tuple[str, list[KnowledgeBase]]] = []
    for name in dict.fromkeys(req.collections or []):
        validate_collection_name(name, field="collections")
        resolved.append((name, await resolve_collection(session, principal, name, Access.VIEW)))
    return resolved


@dataclass(frozen=True, slots=True)
class SearchPlan:
    """What a search reads, resolved before anything is embedded (``plan_search``): each
    collection with its bases, the base that bills its query and the client that embeds it
    (none for a keyword search)."""

    filters: SearchFilters
    collections: list[tuple[str, list[KnowledgeBase], KnowledgeBase, EmbeddingClient | None]]
    #: The reranker of each collection that has the stage (``plan_rerank``), by name.
    rerankers: dict[str, Reranker] = field(default_factory=dict)


async def plan_search(
    session: AsyncSession, clients: EmbeddingClients, principal: Principal, req: SearchRequest
) -> SearchPlan:
    """Every base resolved and each collection's embedding client opened, before a vector
    is read. A collection without a usable key or service refuses the search in every
    mode (the seed: it "refuses to index and to search until it has one")."""
    filters = _filters(req)
    field = "collections" if req.knowledge_base_ids is None else "knowledge_base_ids"
    collections = []
    for name, kbs in await _searched_bases(session, principal, req):
        billed = billing_kb(principal, name, kbs, field)
        collections.append(
            (name, kbs, billed, await query_client(session, clients, billed, req.mode))
        )
    rerankers = {
        name: reranker
        for name, _, billed, _ in collections
        if (reranker := await plan_rerank(session, clients, billed, req.rerank)) is not None
    }
    return SearchPlan(filters, collections, rerankers)


class NoReranker(Conflict):
    def __init__(self, collection: str) -> None:
        super().__init__(
            f"The collection '{collection}' has no reranker; its owner names one with "
            "PATCH /kb/{id} (rerank), or search without rerank",
            fields=[FieldError("rerank", "the collection has no reranker")],
        )


async def plan_rerank(
    session: AsyncSession, clients: EmbeddingClients, billed: KnowledgeBase, wanted: bool | None
) -> Reranker | None:
    """The reranker of a collection whose query ``billed`` pays for: its base's, opened
    as its embedding client is (the same base, so the same rule on whose key is used), or
    none. ``wanted``: the request's ``rerank`` (null: the base's setting decides). A
    reranker without a usable key refuses the search, as an embedding key does."""
    if wanted is False:
        return None
    resolved = await clients.rerankers.resolve(session, billed)
    if resolved is None:
        if wanted:
            raise NoReranker(billed.collection_name)
        return None
    return await clients.rerankers.open(resolved)


RERANK_CANDIDATES = 50
"""The hits of a collection's ranking its reranker scores (``top_k`` when that is larger)."""


async def rerank(reranker: Reranker, query: str, hits: Sequence[Hit], top_k: int) -> list[Hit]:
    """``hits`` (a collection's ranking) in the reranker's order, best first, each scored
    with its relevance; ties keep the ranking's order. The first ``top_k``."""
    if not hits:
        return []
    scores = await reranker.rerank(query, [h.content for h in hits])
    order = sorted(range(len(hits)), key=lambda i: -float(scores[i]))  # stable
    return [replace(hits[i], score=float(scores[i])) for i in order[:top_k]]


async def query_client(
    session: AsyncSession,
    clients: EmbeddingClients,
    billed: KnowledgeBase,
    mode: SearchMode,
) -> EmbeddingClient | None:
    """The client that embeds a query billed to ``billed`` (none for a keyword search); a
    base without a usable key or service refuses every mode, though keyword embeds nothing."""
    resolved = await clients.resolve(billed, session)
    if resolved.degraded_reason is not None:
        raise resolved.refusal()
    return None if mode == "keyword" else await clients.open(resolved)


EF_SEARCH_BY_ROWS: tuple[tuple[float, int], ...] = ((200_000, 100), (float("inf"), 400))
"""``hnsw.ef_search`` by table size (rows up to, ef) for an unfiltered search; see
``search_collection``."""


EF_SEARCH_MAX = 400
"""The most a filtered search raises ``hnsw.ef_search`` to (2 x the rows asked for when
that is larger); a filter that would need more is an exact scan."""


EXACT_BELOW_ROWS = 500
"""Below this many rows a search is a deliberate exact scan (``search_collection``)."""


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


HYBRID_VECTOR_WEIGHT = 0.6
"""The vector ranking's share of a hybrid score (``fuse``): ``w x z(cosine) + (1 - w) x
z(keyword score)``; see ``fuse`` for how it was measured."""


HYBRID_CANDIDATES = 50
"""Hits each ranking contributes to the fusion (``top_k`` when that is larger)."""


class KeywordIndexMissing(Conflict):
    def __init__(self, collection: str) -> None:
        super().__init__(
            f"The collection '{collection}' has no keyword index yet; the operator adds it "
            "with docproc rag-keyword-index (vector search works meanwhile)",
            fields=[FieldError("mode", "the collection has no keyword index yet")],
        )


class PlanCache:
    """The planner's estimates (``repository.row_estimates``) of recent searches, by table, scope and
    filters, kept ``ttl_s``: a search that repeats them sends its one statement only.

    Estimates only choose the plan (HNSW or exact scan, ``ef_search``); a stale one costs
    time, never a result (a short HNSW page is still completed by the exact scan).
    """

    def __init__(self, ttl_s: float = 30.0, size: int = 1024) -> None:
        self.ttl_s = ttl_s
        self.size = size
        self._entries: OrderedDict[tuple[Any, ...], tuple[float, Estimates]] = OrderedDict()

    @staticmethod
    def key(table: str, where: str, params: dict[str, Any]) -> tuple[Any, ...]:
        values = tuple(
            (k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(params.items())
        )
        return (table, where, values)

    def get(self, key: tuple[Any, ...]) -> Estimates | None:
        entry = self._entries.get(key)
        if entry is None or time.monotonic() - entry[0] > self.ttl_s:
            return None
        self._entries.move_to_end(key)
        return entry[1]

    def put(self, key: tuple[Any, ...], estimates: Estimates) -> None:
        self._entries[key] = (time.monotonic(), estimates)
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def forget(self, table: str) -> None:
        for key in [k for k in self._entries if k[0] == table]:
            del self._entries[key]


def _exact_scan(estimates: Estimates, limit: int) -> bool:
    """A small table, or a scope and filters so selective that even the index's first
    ``_ef_cap`` candidates would hold fewer than ``limit`` matching rows."""
    if estimates.table_rows < EXACT_BELOW_ROWS:
        return True
    return estimates.matching_rows * _ef_cap(limit) < limit * estimates.table_rows


async def _vector_hits(
    session: Reader,
    chunks: repository.SearchedChunks,
    query: np.ndarray,
    estimates: Estimates,
    limit: int,
) -> list[Hit]:
    """The ``limit`` nearest matching chunks, best first (cosine similarity); see
    ``search_collection``."""
    hits: list[Hit] = []
    if not _exact_scan(estimates, limit):
        ef_search = ef_search_for(estimates.table_rows, limit, estimates.matching_rows)
        hits = await repository.hnsw_hits(session, chunks, query, ef_search=ef_search, limit=limit)
    if len(hits) < limit:
        hits = await repository.exact_hits(session, chunks, query, limit=limit)
    return sorted(hits, key=lambda h: h.score, reverse=True)


def fuse(
    vector: Sequence[Hit],
    keyword: Sequence[Hit],
    top_k: int,
    *,
    limit: int,
    weight: float = HYBRID_VECTOR_WEIGHT,
) -> list[Hit]:
    """A blend of the two rankings' standard scores (each ranking at most ``limit`` hits,
    best first): ``weight x z(cosine) + (1 - weight) x z(keyword score)``, best first, ties
    in the vector ranking's order then the keyword one's. The score a hit answers is the
    blend through the logistic function: in (0, 1), comparable within one search only.

    ``z`` is a score's distance from the mean of its ranking's first ``HYBRID_CANDIDATES``
    (``limit`` when smaller), in their standard deviation: each leg counts by how far a
    chunk stands out among its candidates, whatever the scale of its scores. A model whose
    cosines crowd into 0.6-0.9 (bge) weighs what one spread over 0.1-0.7 (MiniLM) does, and
    a chunk holding an exact identifier (a whole match, twice any partial one) stands as far
    out of the keyword ranking as it is ahead. The sample is the same whatever ``top_k``, so
    a chunk's standard score does not depend on how many hits were asked for. A ranking
    shorter than ``limit`` holds every chunk that matched, and the others count as a score
    of 0 (which joins the sample once when the ranking is shorter than it); a chunk missing
    from a full ranking takes its last score, the most it can have there. A ranking whose
    scores are all alike adds nothing.

    Measured on the hits of the whole pipeline (docs/benchmarks.md, "A stronger model,
    mounted"; ADR 0022, which replaced ADR 0016's scaling by the best score): nDCG@10 at
    0.6, with ADR 0016's blend in brackets: SciFact's training claims 0.715 (0.715) with
    MiniLM and 0.759 (0.738) with bge-small-en-v1.5; the PostgreSQL reference set 0.865
    (0.867) with MiniLM and 0.871 (0.813) with bge (``bench/quality.py``, ``top_k`` 100).
    """

    sampled = min(limit, HYBRID_CANDIDATES)

    def standard(ranking: Sequence[Hit]) -> tuple[dict[uuid.UUID, float], float]:
        """Each hit's standard score, and that of a chunk the ranking does not hold."""
        scores = [h.score for h in ranking]
        sample = scores[:sampled] if len(scores) >= sampled else [*scores, 0.0]
        mean, spread = statistics.fmean(sample), statistics.pstdev(sample)
        if spread == 0:
            return dict.fromkeys((h.chunk_id for h in ranking), 0.0), 0.0
        floor = scores[-1] if len(ranking) >= limit else 0.0
        return {h.chunk_id: (h.score - mean) / spread for h in ranking}, (floor - mean) / spread

    (similarity, low_v), (matched, low_k) = standard(vector), standard(keyword)
    first: dict[uuid.UUID, Hit] = {}
    for hit in [*vector, *keyword]:
        first.setdefault(hit.chunk_id, hit)
    scores = {
        c: weight * similarity.get(c, low_v) + (1 - weight) * matched.get(c, low_k) for c in first
    }
    order = sorted(first, key=scores.__getitem__, reverse=True)  # stable: first seen wins ties
    return [replace(first[c], score=_logistic(scores[c])) for c in order[:top_k]]


def _logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


async def search_collection(
    session: Reader,
    collection: str,
    query: np.ndarray | None,
    *,
    knowledge_base_ids: Sequence[uuid.UUID],
    top_k: int,
    filters: SearchFilters = SearchFilters(),  # noqa: B008 - frozen, immutable default
    include_operator: bool = False,
    mode: SearchMode = "vector",
    chosen: bool = True,
    text_query: str = "",
    text_search_config: str = DEFAULT_TEXT_SEARCH_CONFIG,
    hybrid_vector_weight: float | None = None,
    plans: PlanCache | None = None,
) -> list[Hit]:
    """Top-k within the caller's knowledge bases, filters applied before top-k.

    ``mode``: ``vector`` ranks by cosine similarity to ``query`` (score: the similarity);
    ``keyword`` by BM25 over ``text_query``'s words on ``content_tsv`` read with
    ``text_search_config`` (``repository.keyword_hits``; ``query`` is not needed);
    ``hybrid`` fuses the first ``HYBRID_CANDIDATES`` of both rankings (``fuse`` at the base's
    ``hybrid_vector_weight``, else ``HYBRID_VECTOR_WEIGHT``; score: the fused one). Both
    rankings read the same scope and filters. On a table without a keyword index yet,
    ``keyword`` and ``hybrid`` are refused (``KeywordIndexMissing``) when the caller
    ``chosen`` them, and the search is ``vector`` when the mode is only the default.

    The vector ranking is HNSW with pgvector's iterative scan (``relaxed_order``) and
    ``hnsw.ef_search`` from the table's size and the share of it the scope and filters keep
    (``ef_search_for``: 100 up to 200k rows, 400 above; at least 2 x the rows asked for, and
    enough candidates to hold them among the matching rows, up to 400), set inside the
    statement itself (``repository.hnsw_hits``). An exact scan over the matching rows answers
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
    chunks = repository.searched_chunks(
        collection, knowledge_base_ids, filters, include_operator=include_operator
    )
    key = PlanCache.key(chunks.table, chunks.where, chunks.params)
    estimates = plans.get(key) if plans is not None else None
    if estimates is None or (mode != "vector" and not estimates.keyword_index):
        # (read again when the cache says "no keyword column": rag-keyword-index may have
        # added it since)
        estimates = await repository.row_estimates(session, chunks)
        if estimates is None:
            return []
        if plans is not None:
            plans.put(key, estimates)
    if mode != "vector" and not estimates.keyword_index:
        if chosen:
            raise KeywordIndexMissing(collection)
        mode = "vector"
    # a table from before citations has no columns for them (until its next write)
    chunks = replace(chunks, citations=estimates.citations)
    limit = top_k if mode != "hybrid" else max(top_k, HYBRID_CANDIDATES)
    rankings: list[list[Hit]] = []
    try:
        if mode != "keyword":
            if query is None:
                raise ValueError(f"a {mode} search needs the query's vector")
            rankings.append(await _vector_hits(session, chunks, query, estimates, limit))
        if mode != "vector":
            rankings.append(
                await repository.keyword_hits(
                    session, chunks, text_query, text_search_config=text_search_config, limit=limit
                )
            )
    except DBAPIError as exc:
        # the estimates were cached and the table has gone since (its last base emptied,
        # docproc rag-drop): nothing to find. An autocommit connection goes on; a
        # session's transaction is aborted, so there the error stands.
        gone = repository.table_gone(exc)
        if gone and plans is not None:
            plans.forget(chunks.table)
        if not gone or not isinstance(session, AsyncConnection):
            raise
        return []
    if mode == "hybrid":
        weight = HYBRID_VECTOR_WEIGHT if hybrid_vector_weight is None else hybrid_vector_weight
        return fuse(rankings[0], rankings[1], top_k, limit=limit, weight=weight)
    return rankings[0]


@asynccontextmanager
async def _autocommit(runtime: Runtime) -> AsyncIterator[AsyncConnection]:
    """A connection on which each statement is its own transaction: no ``BEGIN``/``COMMIT``."""
    async with runtime.engine.connect() as connection:
        yield await connection.execution_options(isolation_level="AUTOCOMMIT")


async def search(
    runtime: Runtime,
    clients: EmbeddingClients,
    principal: Principal,
    req: SearchRequest,
    plans: PlanCache | None = None,
) -> list[SearchHit]:
    """``POST /rag/search``: the bases resolved (``plan_search``) on an autocommit
    connection, a statement per name and no ``BEGIN``/``COMMIT`` (reads that need no
    transaction), then ``search_plan`` (docs/benchmarks.md, "Search cost and hybrid
    search")."""
    async with _autocommit(runtime) as reader, AsyncSession(bind=reader) as session:
        plan = await plan_search(session, clients, principal, req)
    return await search_plan(runtime, plan, req, plans)


async def search_plan(
    runtime: Runtime, plan: SearchPlan, req: SearchRequest, plans: PlanCache | None = None
) -> list[SearchHit]:
    """The query embedded with no connection held, then each collection searched on one
    autocommit connection, a statement per collection once ``plans`` holds its estimates."""
    queries = {
        name: (await client.embed([req.query], "query"))[0]
        for name, _, _, client in plan.collections
        if client is not None
    }
    ranked: list[tuple[str, list[KnowledgeBase], list[Hit]]] = []
    async with _autocommit(runtime) as reader:
        for name, kbs, billed, _ in plan.collections:
            reranked = name in plan.rerankers
            found = await search_collection(
                reader,
                name,
                queries.get(name),
                knowledge_base_ids=[kb.id for kb in kbs],
                top_k=max(req.top_k, RERANK_CANDIDATES) if reranked else req.top_k,
                filters=plan.filters,
                include_operator=adopts_operator(kbs),
                mode=req.mode,
                chosen="mode" in req.model_fields_set,
                text_query=req.query,
                text_search_config=billed.text_search_config,
                hybrid_vector_weight=billed.hybrid_vector_weight,
                plans=plans,
            )
            ranked.append((name, kbs, found))
    hits: list[SearchHit] = []
    for name, kbs, found in ranked:  # no connection held while a reranker scores
        if name in plan.rerankers:
            found = await rerank(plan.rerankers[name], req.query, found, req.top_k)
        hits.extend(search_hit(name, h, kbs) for h in found)
    hits.sort(key=lambda h: h.score, reverse=True)
    return hits[: req.top_k]
