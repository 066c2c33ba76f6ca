"""Vector store: write throughput, and search latency and recall, on the test Postgres + pgvector.

1. **Writes.** The same rows (384-d random unit vectors, ~500-character contents, documents
   of ``--chunks-per-doc`` chunks) written several ways into tables of the same shape, side
   by side (the methods take turns document by document, in a rotating order):

   - *ours*: ``vectorstore.write_chunks`` in a SQLAlchemy session transaction per document
     (DELETE of the document's old chunks, then binary COPY), i.e. what the embedder runs;
   - *INSERT per row*: one ``INSERT ... VALUES`` statement per chunk through the session,
     a transaction per document;
   - *raw COPY*: asyncpg ``copy_records_to_table`` on a plain asyncpg connection, a
     transaction per document;
   - *ours* and *raw COPY* once more inside a transaction that is already open (as in the
     embedder, where the claim and the document lookups come first): only the write and
     the COMMIT are timed, so the session's own costs (pool checkout, BEGIN) are left out.

   Once into tables as ``ensure_table`` creates them (HNSW index included, which is what
   ingestion writes into) and once with the HNSW index dropped (isolating the write path).

2. **Search.** For each ``--sizes`` entry, a ``rag_`` table is filled with clustered
   synthetic data (``--clusters`` gaussian clusters, see ``Corpus`` for ``--data latent``
   and ``--data islands``; 1% of the documents, so ~1% of the chunks, have
   ``document_type = 'rare'``), the HNSW index is (re)built after the load with
   ``SET maintenance_work_mem`` and timed, and ``--queries`` queries (drawn from the same
   clusters) are run through ``search.service.search_collection`` with no filter and with
   ``document_type = ['rare']``. Recall@10 is measured against an exact top-10 computed
   with numpy over the very vectors that were loaded (brute force, float32); for
   ``--exact-check`` queries per case the exact scan is also run in Postgres
   (``ORDER BY`` over an ``OFFSET 0`` subquery, so no index is used) to confirm both
   agree and to time it.

    uv run python bench/vectors.py --sizes 100000
    uv run python bench/vectors.py --sizes 100000 --insert-rows 0 --data islands
    uv run python bench/vectors.py --sizes 1000000 --insert-rows 0 --database URL --keep-tables
    uv run python bench/vectors.py --sizes 100000 --insert-rows 0 --vector-types vector,halfvec

``--vector-types`` builds each size once per storage type (``vector``, ``halfvec``: the
collection's ``vector_type``) from the same rows, and searches each the same way.

A fresh database (``create_test_database``) on the test server is used and dropped at the
end. ``--database URL --keep-tables`` keeps the search tables in that database instead, and a
later run with the same generator arguments reuses them (the data is regenerated in memory
for the ground truth; no load, no index build): a 1M-chunk build takes most of an hour here.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import platform
import re
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

import asyncpg
import numpy as np
from docproc_common import vectorstore
from docproc_common.db.engine import create_engine, create_sessionmaker
from docproc_common.db.vector_tables import vector_table_name
from docproc_common.settings import DatabaseSettings
from docproc_common.vectorstore import COLUMNS, ChunkStamp
from docproc_testing.db import create_test_database, plain_dsn
from docproc_testing.infra import load_infra_env
from docproc_testing.rows import chunk_stamp
from docproc_upload.search import repository as search_repository
from docproc_upload.search import service as search_service
from docproc_upload.search.repository import SearchFilters
from pgvector.asyncpg import register_vector
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

TOP_K = 10
RARE = "rare"
RARE_SHARE = 0.01
KB = uuid.UUID("00000000-0000-4000-8000-0000000000b1")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- data


def unit(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    return out


class Corpus:
    """Clustered unit vectors and prose-like contents, deterministic per seed.

    ``latent``: the ``clusters`` gaussian clusters live in a ``latent_dim``-dimensional
    space (centroids and within-cluster spread), mapped into ``dim`` dimensions by a fixed
    random orthonormal map, plus a little isotropic noise. Neighbouring clusters are near
    each other and a cluster has a low intrinsic dimension, as with text embeddings.

    ``islands``: centroids uniformly random on the ``dim``-sphere (so every cluster is
    nearly orthogonal to every other) and isotropic ``dim``-dimensional noise around them:
    a stress case. Between clusters there is no gradient for a graph search to follow,
    and inside a cluster the points are uniform noise, every one nearly equidistant from
    a query.
    """

    def __init__(
        self,
        dim: int,
        clusters: int,
        spread: float,
        seed: int,
        kind: str = "latent",
        latent_dim: int = 32,
        jitter: float = 0.1,
    ) -> None:
        rng = np.random.default_rng(seed)
        self.dim = dim
        self.spread = spread
        self.kind = kind
        self.jitter = jitter
        space = latent_dim if kind == "latent" else dim
        self.centroids = unit(rng.standard_normal((clusters, space), dtype=np.float32))
        # columns: an orthonormal basis of a random latent_dim-dimensional subspace
        self.basis = np.linalg.qr(rng.standard_normal((dim, latent_dim)))[0].astype(np.float32)
        letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
        vocab = [
            bytes(rng.choice(letters, size=int(n))).decode()
            for n in rng.choice([1, 2, 3, 3, 4, 5, 6, 7, 8, 9], size=20_000)
        ]
        self.text = " ".join(rng.choice(vocab, size=600_000))  # ~3 MB

    def clustered(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Points = centroid + gaussian noise of norm ~``spread``, normalized."""
        c = rng.integers(0, len(self.centroids), size=n)
        space = self.centroids.shape[1]
        noise = rng.standard_normal((n, space), dtype=np.float32)
        noise *= self.spread / math.sqrt(space)
        points = self.centroids[c] + noise
        if self.kind == "latent":
            points = points @ self.basis.T
            points += rng.standard_normal((n, self.dim), dtype=np.float32) * (
                self.jitter / math.sqrt(self.dim)
            )
        return unit(points)

    def uniform(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return unit(rng.standard_normal((n, self.dim), dtype=np.float32))

    def contents(self, rng: np.random.Generator, n: int) -> list[str]:
        starts = rng.integers(0, len(self.text) - 600, size=n)
        lengths = rng.integers(450, 551, size=n)
        return [
            self.text[s : s + m] for s, m in zip(starts.tolist(), lengths.tolist(), strict=True)
        ]


def stamp_for(doc: uuid.UUID, document_type: str, n: int) -> ChunkStamp:
    return chunk_stamp(
        KB,
        organization_id="org-bench",
        tracking_id=doc,
        document_type=document_type,
        organizational_unit=("sales", "legal", "ops", "hr")[n % 4],
        document_date=date(2024, 1 + n % 12, 1 + n % 28),
        source_path=f"bench/{doc}.txt",
        filename=f"{doc}.txt",
        content_hash=f"{doc.hex}{doc.hex}",
    )


INSERT_SQL = "INSERT INTO {table} ({cols}) VALUES ({params})"
WRITE_METHODS = ("ours", "insert", "copy", "ours_open", "copy_open")
GENERATOR_ARGS = (
    "data",
    "dim",
    "clusters",
    "spread",
    "latent_dim",
    "jitter",
    "seed",
    "chunks_per_doc",
    "vector_type",
)


def quote_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


# --------------------------------------------------------------------------- helpers


async def raw_connect(url: str) -> asyncpg.Connection:
    conn = await asyncpg.connect(plain_dsn(url))
    await register_vector(conn)
    return conn


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(p / 100 * len(s)) - 1))]


async def index_def(conn: asyncpg.Connection, table: str) -> str:
    return str(
        await conn.fetchval(
            "SELECT indexdef FROM pg_indexes WHERE tablename = $1 AND indexname = $2",
            table,
            f"{table}_embedding_idx",
        )
    )


# --------------------------------------------------------------------------- writes


@dataclass
class WriteResult:
    shape: str
    method: str
    rows: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.rows / self.seconds


async def bench_writes(
    url: str,
    sm: async_sessionmaker[AsyncSession],
    corpus: Corpus,
    rows: int,
    per_doc: int,
    seed: int,
) -> list[WriteResult]:
    rng = np.random.default_rng(seed + 1)
    docs: list[tuple[uuid.UUID, list[str], np.ndarray, ChunkStamp]] = []
    for d in range(math.ceil(rows / per_doc)):
        n = min(per_doc, rows - d * per_doc)
        doc = uuid.UUID(bytes=rng.bytes(16), version=4)
        docs.append(
            (doc, corpus.contents(rng, n), corpus.uniform(rng, n), stamp_for(doc, "pdf", d))
        )
    raw = await raw_connect(url)
    results: list[WriteResult] = []
    try:
        names = {m: f"bench_w_{m}" for m in WRITE_METHODS}
        tables = {m: vector_table_name(c) for m, c in names.items()}
        insert_sql = INSERT_SQL.format(
            table=tables["insert"],
            cols=", ".join(COLUMNS),
            params=", ".join(f":{c}" for c in COLUMNS),
        )
        Doc = tuple[uuid.UUID, list[str], np.ndarray, ChunkStamp]

        # Each returns the seconds it measured: a whole transaction per document, or (the
        # "open" variants) the write and the COMMIT in a transaction that a handler's earlier
        # statements already opened (session checkout, BEGIN and those statements untimed).
        async def ours(doc: Doc) -> float:
            t0 = time.perf_counter()
            async with sm() as s, s.begin():
                await vectorstore.write_chunks(s, names["ours"], *doc)
            return time.perf_counter() - t0

        async def insert(doc: Doc) -> float:
            t0 = time.perf_counter()
            async with sm() as s, s.begin():
                for rec in vectorstore.chunk_records(*doc):
                    await s.execute(text(insert_sql), dict(zip(COLUMNS, rec, strict=True)))
            return time.perf_counter() - t0

        async def copy(doc: Doc) -> float:
            t0 = time.perf_counter()
            async with raw.transaction():
                await raw.copy_records_to_table(
                    tables["copy"], records=vectorstore.chunk_records(*doc), columns=list(COLUMNS)
                )
            return time.perf_counter() - t0

        async def ours_open(doc: Doc) -> float:
            async with sm() as s, s.begin():
                await s.execute(text("SELECT 1"))  # stands for the handler's claim etc.
                t0 = time.perf_counter()
                await vectorstore.write_chunks(s, names["ours_open"], *doc)
                await s.commit()
                return time.perf_counter() - t0

        async def copy_open(doc: Doc) -> float:
            tr = raw.transaction()
            await tr.start()
            await raw.execute("SELECT 1")
            t0 = time.perf_counter()
            await raw.copy_records_to_table(
                tables["copy_open"], records=vectorstore.chunk_records(*doc), columns=list(COLUMNS)
            )
            await tr.commit()
            return time.perf_counter() - t0

        methods: dict[str, Callable[[Doc], Awaitable[float]]] = {
            "ours": ours,
            "insert": insert,
            "copy": copy,
            "ours_open": ours_open,
            "copy_open": copy_open,
        }
        for shape, keep_hnsw in (
            ("ensure_table (HNSW, hash and b-tree indexes)", True),
            ("HNSW index dropped", False),
        ):
            async with sm() as s, s.begin():
                for c in names.values():
                    await vectorstore.drop_table(s, c)
                    await vectorstore.ensure_table(s, c, corpus.dim)
                    if not keep_hnsw:
                        await s.execute(text(f"DROP INDEX {vector_table_name(c)}_embedding_idx"))

            order = list(methods)
            spent = dict.fromkeys(methods, 0.0)
            for i, document in enumerate(docs):  # the methods take turns, in a rotating order
                for m in order[i % len(order) :] + order[: i % len(order)]:
                    spent[m] += await methods[m](document)
            for m, table in tables.items():
                count = await raw.fetchval(f"SELECT count(*) FROM {table}")
                assert count == rows, (m, count, rows)
                results.append(WriteResult(shape, m, rows, spent[m]))
                log(
                    f"writes [{shape}] {m}: {rows} rows, {spent[m]:.2f} s, {rows / spent[m]:,.0f}/s"
                )
            async with sm() as s, s.begin():
                for c in names.values():
                    await vectorstore.drop_table(s, c)
    finally:
        await raw.close()
    return results


# --------------------------------------------------------------------------- search


@dataclass
class CaseResult:
    size: int
    case: str
    queries: int
    p50_ms: float
    p95_ms: float
    recall: float
    min_recall: float
    short: int
    hnsw_statements: int
    exact_statements: int
    plan: str
    exact_checked: int
    exact_agree: int
    exact_p50_ms: float


@dataclass
class FilterIndexResult:
    queries: int
    with_p50_ms: float
    with_p95_ms: float
    without_p50_ms: float
    without_p95_ms: float


@dataclass
class SizeResult:
    size: int
    vector_type: str
    rare_rows: int
    load_s: float
    build_s: float
    build_notice: str
    table_mb: float
    index_mb: float
    toast_mb: float
    cases: list[CaseResult]
    filter_index: FilterIndexResult


class StatementCounter:
    """Counts the HNSW and the exact-scan statements ``search_collection`` sends."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.hnsw = self.exact = 0
        event.listen(engine.sync_engine, "before_cursor_execute", self._seen)

    def _seen(self, _conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if "OFFSET 0" in statement:
            self.exact += 1
        elif "ORDER BY embedding <=>" in statement:
            self.hnsw += 1


def exact_topk(x: np.ndarray, rows: np.ndarray, queries: np.ndarray, k: int) -> list[np.ndarray]:
    """Row numbers (into the full table) of the exact top-k by cosine among ``rows``."""
    sub = x[rows]
    out: list[np.ndarray] = []
    for start in range(0, len(queries), 50):
        scores = sub @ queries[start : start + 50].T  # unit vectors: cosine = dot
        for col in range(scores.shape[1]):
            s = scores[:, col]
            part = np.argpartition(-s, k)[:k] if len(s) > k else np.arange(len(s))
            out.append(rows[part[np.argsort(-s[part])]])
    return out


async def load_table(
    url: str, corpus: Corpus, table: str, size: int, per_doc: int, seed: int, *, copy: bool = True
) -> tuple[np.ndarray, list[uuid.UUID], np.ndarray, float]:
    """Generate ``size`` chunks (deterministic per seed) and COPY them in (unless ``copy`` is off)."""
    rng = np.random.default_rng(seed + 2)
    x = np.empty((size, corpus.dim), dtype=np.float32)
    ids: list[uuid.UUID] = []
    rare = np.zeros(size, dtype=bool)
    raw = await raw_connect(url)
    started = time.perf_counter()
    try:
        batch_docs = max(1, 10_000 // per_doc)
        done = 0
        d = 0
        next_log = 100_000
        while done < size:
            records: list[tuple[Any, ...]] = []
            for _ in range(batch_docs):
                if done >= size:
                    break
                n = min(per_doc, size - done)
                doc = uuid.UUID(bytes=rng.bytes(16), version=4)
                emb = corpus.clustered(rng, n)
                x[done : done + n] = emb
                # 1% of the documents (so 1% of the chunks) are 'rare'; their chunks fall in
                # whatever clusters their vectors do, so rare chunks are spread over all of them
                is_rare = rng.random() < RARE_SHARE
                rare[done : done + n] = is_rare
                st = stamp_for(doc, RARE if is_rare else ("pdf", "docx", "txt")[d % 3], d)
                recs = vectorstore.chunk_records(doc, corpus.contents(rng, n), emb, st)
                ids.extend(r[0] for r in recs)
                records.extend(recs)
                done += n
                d += 1
            if copy:
                async with raw.transaction():
                    await raw.copy_records_to_table(table, records=records, columns=list(COLUMNS))
            if done >= next_log:
                next_log += 100_000
                log(
                    f"  loaded {done:,} rows ({done / (time.perf_counter() - started):,.0f} rows/s)"
                )
    finally:
        await raw.close()
    return x, ids, rare, time.perf_counter() - started


async def build_index(url: str, table: str, definition: str, mwm: str) -> tuple[float, str]:
    conn = await raw_connect(url)
    notices: list[str] = []
    conn.add_log_listener(lambda _c, msg: notices.append(f"{msg.severity}: {msg.message}"))
    watcher = await raw_connect(url)
    started = time.perf_counter()

    async def progress() -> None:
        while True:
            await asyncio.sleep(60)
            row = await watcher.fetchrow(
                "SELECT phase, blocks_done, blocks_total, tuples_done, tuples_total "
                "FROM pg_stat_progress_create_index WHERE relid = $1::regclass",
                table,
            )
            log(
                f"  index build {time.perf_counter() - started:,.0f} s: {dict(row) if row else '-'}"
            )

    task = asyncio.create_task(progress())
    try:
        await conn.execute(f"SET maintenance_work_mem = '{mwm}'")
        await conn.execute(definition)
        elapsed = time.perf_counter() - started
    finally:
        task.cancel()
        await conn.close()
        await watcher.close()
    return elapsed, "; ".join(notices)


async def bench_size(
    url: str,
    sm: async_sessionmaker[AsyncSession],
    counter: StatementCounter,
    corpus: Corpus,
    size: int,
    args: argparse.Namespace,
) -> SizeResult:
    collection = f"bench_s_{args.data}_{size}" + (
        "" if args.vector_type == "vector" else f"_{args.vector_type}"
    )
    table = vector_table_name(collection)
    tag = json.dumps({k: getattr(args, k) for k in GENERATOR_ARGS} | {"size": size}, sort_keys=True)
    raw = await raw_connect(url)
    reuse = bool(args.keep_tables) and (
        await raw.fetchval(
            "SELECT obj_description(to_regclass($1), 'pg_class') = $2 AND "
            "(SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($3))",
            table,
            tag,
            f"{table}_embedding_idx",
        )
        is True
    )
    await raw.close()
    build_s = load_s = float("nan")
    notice = ""
    if reuse:
        log(f"size {size:,}: reusing {table} (same generator arguments); regenerating its data")
        x, ids, rare, _ = await load_table(
            url, corpus, table, size, args.chunks_per_doc, args.seed, copy=False
        )
    else:
        async with sm() as s, s.begin():
            await vectorstore.drop_table(s, collection)
            await vectorstore.ensure_table(s, collection, corpus.dim, vector_type=args.vector_type)
        # a bulk load: every secondary index (HNSW, GIN, b-tree, hash) dropped, built after
        raw = await raw_connect(url)
        definition = await index_def(raw, table)
        others = [
            r["indexdef"]
            for r in await raw.fetch(
                "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = $1 "
                "AND indexname LIKE '%\\_idx' AND indexname <> $2",
                table,
                f"{table}_embedding_idx",
            )
        ]
        for index in [f"{table}_embedding_idx", *(d.split()[2] for d in others)]:
            await raw.execute(f"DROP INDEX {index}")
        await raw.close()

        log(f"size {size:,}: loading")
        x, ids, rare, load_s = await load_table(
            url, corpus, table, size, args.chunks_per_doc, args.seed
        )
        log(f"size {size:,}: loaded in {load_s:.1f} s ({size / load_s:,.0f} rows/s); building HNSW")
        build_s, notice = await build_index(url, table, definition, args.maintenance_work_mem)
        log(f"size {size:,}: HNSW built in {build_s:.1f} s {notice}")
        raw = await raw_connect(url)
        started = time.perf_counter()
        for index in others:
            await raw.execute(index)
        await raw.close()
        log(
            f"size {size:,}: {len(others)} other indexes built in {time.perf_counter() - started:.1f} s"
        )
    raw = await raw_connect(url)
    await raw.execute(f"VACUUM ANALYZE {table}")
    await raw.execute(f"COMMENT ON TABLE {table} IS {quote_literal(tag)}")
    sizes = await raw.fetchrow(
        "SELECT pg_relation_size(c.oid) AS heap, pg_relation_size($2::regclass) AS idx, "
        "coalesce(pg_total_relation_size(c.reltoastrelid), 0) AS toast "
        "FROM pg_class c WHERE c.oid = $1::regclass",
        table,
        f"{table}_embedding_idx",
    )
    await raw.close()

    qrng = np.random.default_rng(args.seed + 3)
    queries = corpus.clustered(qrng, args.queries + args.warmup)
    warm, queries = queries[: args.warmup], queries[args.warmup :]
    all_rows = np.arange(size)
    rare_rows = np.flatnonzero(rare)
    cases: list[CaseResult] = []
    for case, filters, rows in (
        ("no filter", SearchFilters(), all_rows),
        ("document_type = 'rare' (1%)", SearchFilters(document_type=[RARE]), rare_rows),
    ):
        truth = exact_topk(x, rows, queries, TOP_K)

        async def run(
            q: np.ndarray, filters: SearchFilters = filters
        ) -> list[search_repository.Hit]:
            async with sm() as s, s.begin():
                return await search_service.search_collection(
                    s, collection, q, knowledge_base_ids=[KB], top_k=TOP_K, filters=filters
                )

        for q in warm:
            await run(q)
        counter.hnsw = counter.exact = 0
        latencies: list[float] = []
        recalls: list[float] = []
        short = 0
        for q, t in zip(queries, truth, strict=True):
            t0 = time.perf_counter()
            hits = await run(q)
            latencies.append(time.perf_counter() - t0)
            want = {ids[i] for i in t}  # fewer than TOP_K only when fewer rows match
            got = {h.chunk_id for h in hits}
            recalls.append(len(want & got) / len(want) if want else 1.0)
            short += len(hits) < len(want)
        hnsw_statements, exact_statements = counter.hnsw, counter.exact

        # the plan of the first statement search() sent (HNSW, or the exact scan up front)
        params: dict[str, Any] = {"q": queries[0], "kbs": [KB], "k": TOP_K}
        where = " AND ".join(
            [vectorstore.scope_sql(False), *search_repository._filter_sql(filters, params)]
        )
        async with sm() as s, s.begin():
            if hnsw_statements:
                await s.execute(text("SET LOCAL hnsw.iterative_scan = relaxed_order"))
                ef = search_service.ef_search_for(size, TOP_K)
                await s.execute(text(f"SET LOCAL hnsw.ef_search = {ef}"))
                sql = f"SELECT id FROM {table} WHERE {where} ORDER BY embedding <=> :q LIMIT :k"
            else:
                sql = (
                    f"SELECT * FROM (SELECT id, embedding <=> :q AS d FROM {table} "
                    f"WHERE {where} OFFSET 0) s ORDER BY d LIMIT :k"
                )
            plan_rows = (await s.execute(text(f"EXPLAIN {sql}"), params)).all()
        plan = " / ".join(re.sub(r"'\[[^']*\]'::\w+", "$q", r[0].strip()) for r in plan_rows[:4])

        exact_lat: list[float] = []
        agree = 0
        for q, t in list(zip(queries, truth, strict=True))[: args.exact_check]:
            params = {"q": q, "kbs": [KB], "k": TOP_K}
            where = " AND ".join(
                [vectorstore.scope_sql(False), *search_repository._filter_sql(filters, params)]
            )
            async with sm() as s, s.begin():
                t0 = time.perf_counter()
                got_rows = (
                    await s.execute(
                        text(
                            f"SELECT id FROM (SELECT id, embedding <=> :q AS d FROM {table} "
                            f"WHERE {where} OFFSET 0) s ORDER BY d LIMIT :k"
                        ),
                        params,
                    )
                ).all()
                exact_lat.append(time.perf_counter() - t0)
            agree += {r[0] for r in got_rows} == {ids[i] for i in t}

        res = CaseResult(
            size=size,
            case=case,
            queries=len(queries),
            p50_ms=pct(latencies, 50) * 1000,
            p95_ms=pct(latencies, 95) * 1000,
            recall=statistics.fmean(recalls),
            min_recall=min(recalls),
            short=short,
            hnsw_statements=hnsw_statements,
            exact_statements=exact_statements,
            plan=plan,
            exact_checked=len(exact_lat),
            exact_agree=agree,
            exact_p50_ms=pct(exact_lat, 50) * 1000 if exact_lat else float("nan"),
        )
        log(f"size {size:,} [{case}]: {res}")
        cases.append(res)

    filter_index = await bench_filter_index(sm, collection, queries)
    log(f"size {size:,}: 1% filter with / without its index: {filter_index}")

    if not args.keep_tables:
        async with sm() as s, s.begin():
            await vectorstore.drop_table(s, collection)
    return SizeResult(
        size=size,
        vector_type=args.vector_type,
        rare_rows=int(rare.sum()),
        load_s=load_s,
        build_s=build_s,
        build_notice=notice,
        table_mb=sizes["heap"] / 2**20,
        index_mb=sizes["idx"] / 2**20,
        toast_mb=sizes["toast"] / 2**20,
        cases=cases,
        filter_index=filter_index,
    )


async def bench_filter_index(
    sm: async_sessionmaker[AsyncSession], collection: str, queries: np.ndarray
) -> FilterIndexResult:
    """The 1% filter's search with its b-tree and without, query by query in one process.

    "Without" drops ``<table>_doctype_idx`` inside the search's own transaction, which is
    then rolled back: the planner plans without the index, and the next query has it again.
    """
    table = vector_table_name(collection)
    filters = SearchFilters(document_type=[RARE])
    timings: dict[bool, list[float]] = {True: [], False: []}
    for i, q in enumerate(queries):
        for indexed in (True, False) if i % 2 else (False, True):
            async with sm() as s:
                await s.begin()
                if not indexed:
                    await s.execute(text(f"DROP INDEX {table}_doctype_idx"))
                t0 = time.perf_counter()
                await search_service.search_collection(
                    s, collection, q, knowledge_base_ids=[KB], top_k=TOP_K, filters=filters
                )
                timings[indexed].append(time.perf_counter() - t0)
                await s.rollback()
    return FilterIndexResult(
        queries=len(queries),
        with_p50_ms=pct(timings[True], 50) * 1000,
        with_p95_ms=pct(timings[True], 95) * 1000,
        without_p50_ms=pct(timings[False], 50) * 1000,
        without_p95_ms=pct(timings[False], 95) * 1000,
    )


# --------------------------------------------------------------------------- main


def print_report(
    writes: list[WriteResult], searches: list[SizeResult], args: argparse.Namespace
) -> None:
    print(
        f"\npython {platform.python_version()}, numpy {np.__version__}, asyncpg {asyncpg.__version__}; "
        f"dim {args.dim}, top_k {TOP_K}\n"
    )
    if writes:
        print(
            f"Writes: {writes[0].rows:,} rows, {args.chunks_per_doc} chunks per document/transaction\n"
        )
        print("| table | method | rows/s | time vs ours |")
        print("|---|---|---:|---:|")
        label = {
            "ours": "ours: `write_chunks` (session per document: DELETE + binary COPY)",
            "insert": "INSERT per row (session per document)",
            "copy": "raw asyncpg `copy_records_to_table` (transaction per document)",
            "ours_open": "ours, transaction already open (write + COMMIT timed)",
            "copy_open": "raw COPY, transaction already open (COPY + COMMIT timed)",
        }
        for shape in dict.fromkeys(w.shape for w in writes):
            group = {w.method: w for w in writes if w.shape == shape}
            for m, w in group.items():
                base = group["ours_open" if m.endswith("_open") else "ours"]
                print(f"| {shape} | {label[m]} | {w.rate:,.0f} | {base.rate / w.rate:.2f}x |")
        print()
        for shape in dict.fromkeys(w.shape for w in writes):
            g = {w.method: w.rate for w in writes if w.shape == shape}
            print(
                f"{shape}: raw COPY / ours = {g['copy'] / g['ours']:.2f}x per document "
                f"transaction, {g['copy_open'] / g['ours_open']:.2f}x in an open transaction; "
                f"ours / INSERT loop = {g['ours'] / g['insert']:.2f}x"
            )
        print()
    for r in searches:
        built = (
            "table reused from an earlier run (no load, no build)"
            if math.isnan(r.build_s)
            else f"load {r.load_s:.0f} s ({r.size / r.load_s:,.0f} rows/s), HNSW build "
            f"{r.build_s:.0f} s (maintenance_work_mem {args.maintenance_work_mem}) {r.build_notice}"
        )
        print(
            f"Search, {args.data} data, {r.size:,} chunks ({r.rare_rows:,} rare), stored as "
            f"{r.vector_type}: {built}; heap "
            f"{r.table_mb:,.0f} MiB, TOAST {r.toast_mb:,.0f} MiB, HNSW {r.index_mb:,.0f} MiB\n"
        )
        print(
            "| chunks | filter | p50 ms | p95 ms | recall@10 | min recall | short top-10 "
            "| HNSW / exact statements | exact scan p50 ms (agree) |"
        )
        print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
        for c in r.cases:
            print(
                f"| {c.size:,} | {c.case} | {c.p50_ms:.1f} | {c.p95_ms:.1f} | {c.recall:.3f} "
                f"| {c.min_recall:.1f} | {c.short}/{c.queries} | {c.hnsw_statements} / {c.exact_statements} "
                f"| {c.exact_p50_ms:.0f} ({c.exact_agree}/{c.exact_checked}) |"
            )
        for c in r.cases:
            print(f"  plan [{c.case}]: {c.plan}")
        f = r.filter_index
        print(
            f"\n1% filter, {f.queries} queries alternating with and without the b-tree on "
            f"document_type: p50/p95 {f.with_p50_ms:.1f} / {f.with_p95_ms:.1f} ms with, "
            f"{f.without_p50_ms:.1f} / {f.without_p95_ms:.1f} ms without "
            f"(p50 {f.without_p50_ms / f.with_p50_ms:.1f}x faster with)"
        )
        print()


async def amain(args: argparse.Namespace) -> int:
    env = load_infra_env(("postgres",))
    url = args.database or await create_test_database(env["DATABASE__URL"])
    log(f"database {url.rpartition('/')[2]}")
    engine = create_engine(DatabaseSettings(pool_size=2, max_overflow=2), url=url)
    sm = create_sessionmaker(engine)
    counter = StatementCounter(engine)
    corpus = Corpus(
        args.dim, args.clusters, args.spread, args.seed, args.data, args.latent_dim, args.jitter
    )
    writes: list[WriteResult] = []
    searches: list[SizeResult] = []
    try:
        if args.insert_rows:
            writes = await bench_writes(
                url, sm, corpus, args.insert_rows, args.chunks_per_doc, args.seed
            )
        for size in args.sizes:
            for vector_type in args.vector_types:  # the same rows, stored each way
                args.vector_type = vector_type
                searches.append(await bench_size(url, sm, counter, corpus, size, args))
                print_report(writes, searches[-1:], args)  # figures as they come
    finally:
        await engine.dispose()
        if not args.database:
            admin = await asyncpg.connect(plain_dsn(env["DATABASE__URL"]))
            try:
                await admin.execute(
                    f"DROP DATABASE IF EXISTS {url.rpartition('/')[2]} WITH (FORCE)"
                )
            finally:
                await admin.close()
    print_report(writes, searches, args)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {
                    "args": vars(args),
                    "writes": [w.__dict__ | {"rate": w.rate} for w in writes],
                    "search": [
                        s.__dict__
                        | {
                            "cases": [c.__dict__ for c in s.cases],
                            "filter_index": s.filter_index.__dict__,
                        }
                        for s in searches
                    ],
                },
                fh,
                indent=1,
            )
    failed = False
    rates = {(w.shape, w.method): w.rate for w in writes}
    for shape, method in rates:
        if method in ("copy", "copy_open"):
            ours = rates[shape, method.replace("copy", "ours")]
            ratio = rates[shape, method] / ours
            if ratio > 1.5:
                print(f"FAIL: raw COPY is {ratio:.2f}x write_chunks ({shape}, {method})")
                failed = True
    for s in searches:
        for c in s.cases:
            if c.recall < 0.95 or c.short:
                print(f"FAIL: {c.size:,} [{c.case}] recall@10 {c.recall:.3f}, short {c.short}")
                failed = True
    return 1 if failed else 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100000", help="comma-separated table sizes (chunks)")
    parser.add_argument("--queries", type=int, default=200, help="measured queries per case")
    parser.add_argument("--warmup", type=int, default=20, help="unmeasured queries per case")
    parser.add_argument(
        "--exact-check",
        type=int,
        default=20,
        help="queries per case also run as an exact scan in Postgres",
    )
    parser.add_argument(
        "--insert-rows", type=int, default=20_000, help="rows per write method (0: skip writes)"
    )
    parser.add_argument("--chunks-per-doc", type=int, default=50)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument(
        "--data", choices=("latent", "islands"), default="latent", help="see Corpus"
    )
    parser.add_argument("--latent-dim", type=int, default=32)
    parser.add_argument(
        "--spread", type=float, default=0.6, help="norm of the noise around a centroid"
    )
    parser.add_argument("--jitter", type=float, default=0.1, help="isotropic noise (latent data)")
    parser.add_argument("--maintenance-work-mem", default="1GB")
    parser.add_argument(
        "--vector-types",
        default="vector",
        help="comma-separated: how the search tables store the embeddings (vector, halfvec); "
        "each size is built and searched once per type, from the same rows",
    )
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--json", help="write the figures here too")
    parser.add_argument(
        "--database",
        help="use this database (URL) instead of a fresh one, and leave it in place",
    )
    parser.add_argument(
        "--keep-tables",
        action="store_true",
        help="keep the search tables; with --database, a later run with the same generator "
        "arguments reuses them (no load, no index build)",
    )
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    args.vector_types = [t.strip() for t in args.vector_types.split(",") if t.strip()]
    args.vector_type = args.vector_types[0]
    sys.exit(asyncio.run(amain(args)))


if __name__ == "__main__":
    main()
