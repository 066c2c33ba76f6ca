"""What a search costs, and what the keyword half of hybrid search adds (issue #16, items 4-5).

On a fresh database of the test Postgres, in one process, every comparison interleaved
query by query (so a loaded host slows both sides alike):

1. **ef_search** on a ``--size`` table (``bench/vectors.py``'s clustered corpus, HNSW built
   after the load): recall@10 (against numpy's exact top 10) and latency of the HNSW
   statement at each ``--efs`` value, and recall@50 at ``2 x 50``.
2. **Small tables**: the exact scan against the HNSW scan at ``--small`` sizes, the ground
   for ``search.service.EXACT_BELOW_ROWS``.
3. **search.service.search_collection before / after**: the version before this work (read from git,
   ``--before``: estimates, ``SET``, the query, in a session transaction, ``ef_search``
   400) against today's (one statement on an autocommit connection once ``PlanCache``
   holds the estimates), unfiltered and with a 1% filter.
4. **Modes**: ``vector``, ``keyword`` (two words of a chunk) and ``hybrid``, same table.
5. **POST /rag/search** in-process (ASGI, the upload service's app) on a ``--http-chunks``
   collection, broken down: the framework's floor (the same route refused at validation),
   token verification (signature, and kept), a pool checkout, the resolution (in a
   transaction, and on an autocommit connection), the query's embedding (the client, and
   the model alone), ``search_collection``, the raw pgvector query, the response's
   serialisation; and the route as it was before (the resolution in a session
   transaction, the token's signature checked on every request) swapped in on every
   other request.

    uv run python bench/search_cost.py --size 100000
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import asyncpg
import httpx
import numpy as np
from docproc_common import vectorstore
from docproc_common.auth import mint_token
from docproc_common.db.vector_tables import vector_table_name
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.runtime import Runtime, build_app
from docproc_common.settings import AuthSettings, BusMode
from docproc_testing.auth import DEV_AUTH
from docproc_testing.rows import chunk_stamp
from docproc_testing.runtime import fresh_runtime
from docproc_upload import bearer, deps
from docproc_upload.app import build as build_upload
from docproc_upload.bearer import principal_from_header
from docproc_upload.search import service as upload_service
from docproc_upload.search.repository import SearchFilters
from docproc_upload.search.schemas import SearchHit, SearchRequest, SearchResponse
from docproc_upload.search.service import PlanCache
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

sys.path.insert(0, str(Path(__file__).parent))
import vectors  # noqa: E402  (bench/vectors.py: the corpus, the load, the index build)

TOP_K = 10
MODEL = {"embedding_provider": "local", "embedding_model": "sentence-transformers/all-MiniLM-L6-v2"}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def ms(values: list[float]) -> str:
    return (
        f"p50 {vectors.pct(values, 50) * 1000:6.2f} / p95 {vectors.pct(values, 95) * 1000:6.2f} ms"
    )


def load_before(commit: str) -> ModuleType:
    """``docproc_common.vectorstore`` as it was at ``commit``."""
    source = subprocess.run(
        ["git", "show", f"{commit}:libs/common/src/docproc_common/vectorstore.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "vectorstore_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("vectorstore_before", path)
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


async def timed(fn: Callable[[], Awaitable[Any]]) -> float:
    t0 = time.perf_counter()
    await fn()
    return time.perf_counter() - t0


async def autocommit(runtime: Runtime) -> tuple[AsyncConnection, AsyncConnection]:
    conn = await runtime.engine.connect()
    return conn, await conn.execution_options(isolation_level="AUTOCOMMIT")


async def hnsw_ids(
    raw: asyncpg.Connection, table: str, q: np.ndarray, ef: int, k: int
) -> list[Any]:
    rows = await raw.fetch(
        f"SELECT id FROM {table} WHERE (SELECT set_config('hnsw.ef_search', $2, true)) "
        f"IS NOT NULL ORDER BY embedding <=> $1 LIMIT $3",
        q,
        str(ef),
        k,
    )
    return [r[0] for r in rows]


async def bench_ef(
    raw: asyncpg.Connection,
    table: str,
    x: np.ndarray,
    ids: list[uuid.UUID],
    queries: np.ndarray,
    efs: list[int],
) -> None:
    print(f"\n### ef_search at {len(ids):,} rows ({len(queries)} queries, unfiltered)\n")
    print("| ef_search | top_k | recall (mean) | recall (min) | latency |")
    print("|---|---|---|---|---|")
    cases = [(ef, TOP_K) for ef in efs] + [(ef, 50) for ef in (40, 100, 200)]
    truth = {
        k: vectors.exact_topk(x, np.arange(len(ids)), queries, k) for k in {c[1] for c in cases}
    }
    lat: dict[tuple[int, int], list[float]] = {c: [] for c in cases}
    rec: dict[tuple[int, int], list[float]] = {c: [] for c in cases}
    for i, q in enumerate(queries):
        for ef, k in cases[i % len(cases) :] + cases[: i % len(cases)]:
            t0 = time.perf_counter()
            got = await hnsw_ids(raw, table, q, ef, k)
            lat[ef, k].append(time.perf_counter() - t0)
            want = {ids[j] for j in truth[k][i]}
            rec[ef, k].append(len(want & set(got)) / len(want))
    for c in cases:
        print(
            f"| {c[0]} | {c[1]} | {statistics.fmean(rec[c]):.3f} | {min(rec[c]):.2f} | {ms(lat[c])} |"
        )


async def bench_writes(
    runtime: Runtime, raw: asyncpg.Connection, corpus: vectors.Corpus, rows: int, hnsw: bool
) -> None:
    """COPY the same documents (50 chunks each) into tables as ``ensure_table`` makes them,
    HNSW dropped or kept (``hnsw``; ingestion writes into it): with the keyword column and
    its GIN index, with the column only, and with neither (as before hybrid search); the
    three take turns document by document."""
    where = "HNSW kept" if hnsw else "HNSW dropped"
    print(f"\n### Writes: what the keyword column and index cost ({rows:,} rows each, {where})\n")
    tag = "h" if hnsw else "n"
    shapes = {
        "column + GIN": f"kw_full_{tag}",
        "column, no GIN": f"kw_col_{tag}",
        "neither (before)": f"kw_none_{tag}",
    }
    for table in shapes.values():
        async with runtime.sessionmaker() as s, s.begin():
            await vectorstore.ensure_table(s, table, corpus.dim)
        if not hnsw:
            await raw.execute(f"DROP INDEX rag_{table}_embedding_idx")
    await raw.execute(f"DROP INDEX rag_kw_col_{tag}_tsv_idx")
    await raw.execute(f"DROP INDEX rag_kw_none_{tag}_tsv_idx")
    await raw.execute(f"ALTER TABLE rag_kw_none_{tag} DROP COLUMN content_tsv")
    rng = np.random.default_rng(13)
    spent = dict.fromkeys(shapes, 0.0)
    for d in range(rows // 50):
        doc = uuid.uuid4()
        records = vectorstore.chunk_records(
            doc,
            corpus.contents(rng, 50),
            corpus.clustered(rng, 50),
            vectors.stamp_for(doc, "txt", d),
        )
        order = list(shapes.items())
        for label, table in order[d % 3 :] + order[: d % 3]:
            t0 = time.perf_counter()
            async with raw.transaction():
                await raw.copy_records_to_table(
                    f"rag_{table}", records=records, columns=list(vectorstore.COLUMNS)
                )
            spent[label] += time.perf_counter() - t0
    print("| table | rows/s | vs neither |")
    print("|---|---|---|")
    for label in shapes:
        print(
            f"| {label} | {rows / spent[label]:,.0f} | {spent['neither (before)'] / spent[label]:.2f} |"
        )


async def bench_migrate(
    runtime: Runtime, raw: asyncpg.Connection, corpus: vectors.Corpus, rows: int
) -> None:
    """``add_keyword_index`` (``docproc rag-keyword-index``) on a ``rows`` table of the shape
    from before hybrid search, HNSW index built: the column's rewrite under the lock (which
    rebuilds every index of the table, HNSW included), then the GIN index built
    concurrently; a search on the table waits only for the first."""
    print(f"\n### docproc rag-keyword-index on {rows:,} rows\n")
    collection = "kw_migrate"
    table = vector_table_name(collection)
    async with runtime.sessionmaker() as s, s.begin():
        await vectorstore.ensure_table(s, collection, corpus.dim)
    await raw.execute(f"DROP INDEX {table}_tsv_idx")
    await raw.execute(f"ALTER TABLE {table} DROP COLUMN content_tsv")
    definition = await vectors.index_def(raw, table)
    await raw.execute(f"DROP INDEX {table}_embedding_idx")
    url = runtime.settings.database.url
    await vectors.load_table(url, corpus, table, rows, 50, 17)
    hnsw_s, _ = await vectors.build_index(url, table, definition, "1GB")
    await raw.execute(f"VACUUM ANALYZE {table}")
    print(f"(the table's HNSW index alone was built in {hnsw_s:.1f} s)")
    t0 = time.perf_counter()
    changed = await vectorstore.add_keyword_index(runtime.engine, collection, "simple")
    total = time.perf_counter() - t0
    assert changed
    size = await raw.fetchval(f"SELECT pg_size_pretty(pg_relation_size('{table}_tsv_idx'))")
    print(f"add_keyword_index: {total:.1f} s in all; GIN index {size}")


async def bench_small(
    raw: asyncpg.Connection, corpus: vectors.Corpus, sizes: list[int], n: int
) -> None:
    print(f"\n### Small tables: exact scan against HNSW ({n} queries each)\n")
    print("| rows | exact scan | HNSW (ef 40) |")
    print("|---|---|---|")
    rng = np.random.default_rng(11)
    for size in sizes:
        table = f"small_{size}"
        await raw.execute(
            f"CREATE TABLE {table} (id int PRIMARY KEY, content text, embedding vector({corpus.dim}))"
        )
        emb = corpus.clustered(rng, size)
        await raw.copy_records_to_table(
            table, records=[(i, t, emb[i]) for i, t in enumerate(corpus.contents(rng, size))]
        )
        await raw.execute(f"CREATE INDEX ON {table} USING hnsw (embedding vector_cosine_ops)")
        await raw.execute(f"VACUUM ANALYZE {table}")
        exact: list[float] = []
        hnsw: list[float] = []
        for q in corpus.clustered(rng, n):
            t0 = time.perf_counter()
            await raw.fetch(
                f"SELECT * FROM (SELECT id, content, embedding <=> $1 AS d FROM {table} OFFSET 0) s "
                "ORDER BY d LIMIT 10",
                q,
            )
            exact.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            await raw.fetch(
                f"SELECT id, content FROM {table} ORDER BY embedding <=> $1 LIMIT 10", q
            )
            hnsw.append(time.perf_counter() - t0)
        print(f"| {size:,} | {ms(exact)} | {ms(hnsw)} |")
        await raw.execute(f"DROP TABLE {table}")


async def bench_store(
    runtime: Runtime,
    before: ModuleType,
    collection: str,
    queries: np.ndarray,
    words: list[str],
    kb: uuid.UUID,
) -> None:
    print(f"\n### search_collection before / after, and the modes ({len(queries)} queries)\n")
    plans = PlanCache()
    holder, reader = await autocommit(runtime)
    rare = SearchFilters(document_type=[vectors.RARE])
    results: dict[str, list[float]] = {}

    async def old(q: np.ndarray, filters: SearchFilters) -> None:
        async with runtime.sessionmaker() as s, s.begin():
            await before.search(
                s, collection, q, knowledge_base_ids=[kb], top_k=TOP_K, filters=filters
            )

    async def new(
        q: np.ndarray, filters: SearchFilters, mode: str = "vector", words: str = ""
    ) -> None:
        await upload_service.search_collection(
            reader,
            collection,
            q,
            knowledge_base_ids=[kb],
            top_k=TOP_K,
            filters=filters,
            mode=mode,
            text_query=words,
            plans=plans,  # type: ignore[arg-type]
        )

    cases = [
        ("before, no filter", lambda q, _w: old(q, SearchFilters())),
        ("after, no filter", lambda q, _w: new(q, SearchFilters())),
        ("before, 1% filter", lambda q, _w: old(q, rare)),
        ("after, 1% filter", lambda q, _w: new(q, rare)),
        ("after, keyword", lambda q, w: new(q, SearchFilters(), "keyword", w)),
        ("after, hybrid", lambda q, w: new(q, SearchFilters(), "hybrid", w)),
        ("after, hybrid, 1% filter", lambda q, w: new(q, rare, "hybrid", w)),
    ]
    try:
        for q, w in zip(queries[:5], words[:5], strict=True):  # warm-up, fills the plan cache
            for _, fn in cases:
                await fn(q, w)
        for i, (q, w) in enumerate(zip(queries, words, strict=True)):
            for label, fn in cases[i % len(cases) :] + cases[: i % len(cases)]:
                results.setdefault(label, []).append(await timed(lambda fn=fn, q=q, w=w: fn(q, w)))
    finally:
        await holder.close()
    print("| case | latency |")
    print("|---|---|")
    for label, values in results.items():
        print(f"| {label} | {ms(values)} |")
    for a, b in (
        ("before, no filter", "after, no filter"),
        ("before, 1% filter", "after, 1% filter"),
    ):
        print(
            f"\n{b} / {a}: p50 {vectors.pct(results[b], 50) / vectors.pct(results[a], 50):.2f}, "
            f"p95 {vectors.pct(results[b], 95) / vectors.pct(results[a], 95):.2f}"
        )


async def search_before(
    runtime: Runtime,
    clients: EmbeddingClients,
    principal: Any,
    req: SearchRequest,
    plans: PlanCache | None = None,
) -> list[SearchHit]:
    """``service.search`` as the route ran it before the resolution left its transaction
    (main at 80243c4): ``plan_search`` in a session transaction (checkout, ``BEGIN``, the
    statements, ``COMMIT``), then the same ``search_plan``."""
    async with runtime.sessionmaker() as db, db.begin():
        plan = await upload_service.plan_search(db, clients, principal, req)
    return await upload_service.search_plan(runtime, plan, req, plans)


def verify_uncached(settings: AuthSettings, authorization: str | None) -> Any:
    """``principal_from_header`` as it was before verified tokens were kept: every request
    checks the signature."""
    assert authorization
    return bearer._verify(settings, authorization[7:].strip())[0]


async def bench_http(runtime: Runtime, corpus: vectors.Corpus, chunks: int, n: int) -> None:
    print(f"\n### POST /rag/search on {chunks:,} chunks, broken down ({n} requests each)\n")
    spec = build_upload(runtime)
    app = build_app(runtime, [spec], [], "bench")
    token = mint_token(
        DEV_AUTH,
        user_id="bench",
        organization_id="acme",
        permissions=["collections:view", "collections:edit"],
    )
    headers = {"Authorization": f"Bearer {token}"}
    client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1/api/v1", headers=headers
    )
    name = f"http_{uuid.uuid4().hex[:6]}"
    r = await client.post(
        "/kb", json={"name": name, "collection_name": name, "scope": "org", **MODEL}
    )
    assert r.status_code == 201, r.text
    kb = uuid.UUID(r.json()["id"])
    rng = np.random.default_rng(5)
    async with runtime.sessionmaker() as s, s.begin():
        await vectorstore.ensure_table(s, name, corpus.dim)
        for d in range(chunks // 10):
            stamp = chunk_stamp(kb, filename=f"d{d}.txt")
            await vectorstore.write_chunks(
                s, name, uuid.uuid4(), corpus.contents(rng, 10), corpus.clustered(rng, 10), stamp
            )
    raw = await vectors.raw_connect(runtime.settings.database.url)
    await raw.execute(f"VACUUM ANALYZE {vector_table_name(name)}")
    clients = EmbeddingClients(runtime.settings)
    principal = principal_from_header(runtime.settings.auth, headers["Authorization"])
    async with runtime.sessionmaker() as s:
        kb_row = (
            await upload_service._searched_bases(
                s, principal, SearchRequest(query="x", collections=[name])
            )
        )[0][1]
        local = await clients.for_collection(kb_row[0], s)
    texts = [" ".join(corpus.contents(rng, 1)[0].split()[:8]) for _ in range(n + 5)]
    body = lambda t: {"query": t, "collections": [name], "top_k": 5}  # noqa: E731
    after = (upload_service.search, deps.principal_from_header)
    plans = PlanCache()
    holder, reader = await autocommit(runtime)
    kb_ids = [kb]
    model = clients.local()._model  # noqa: SLF001 (the model alone, without the client)

    async def http(t: str) -> None:
        r = await client.post("/rag/search", json=body(t))
        assert r.status_code == 200, r.text

    async def http_before(t: str) -> None:
        upload_service.search, deps.principal_from_header = search_before, verify_uncached  # type: ignore[assignment]
        try:
            await http(t)
        finally:
            upload_service.search, deps.principal_from_header = after  # type: ignore[assignment]

    async def floor(t: str) -> None:
        r = await client.post("/rag/search", json={**body(t), "top_k": 0})
        assert r.status_code == 422, r.text

    async def auth_uncached(_t: str) -> None:
        verify_uncached(runtime.settings.auth, headers["Authorization"])

    async def auth_cached(_t: str) -> None:
        principal_from_header(runtime.settings.auth, headers["Authorization"])

    async def checkout(_t: str) -> None:
        async with runtime.engine.connect():
            pass

    async def resolve_before(t: str) -> None:
        async with runtime.sessionmaker() as s, s.begin():
            await upload_service.plan_search(s, clients, principal, SearchRequest(**body(t)))

    async def resolve_after(t: str) -> None:
        async with (
            runtime.engine.connect() as c,
            AsyncSession(bind=await c.execution_options(isolation_level="AUTOCOMMIT")) as s,
        ):
            await upload_service.plan_search(s, clients, principal, SearchRequest(**body(t)))

    async def embed(t: str) -> None:
        await local.embed([t])

    async def embed_model(t: str) -> None:
        await asyncio.to_thread(model.embed, [t])

    vecs = {t: (await local.embed([t]))[0] for t in texts}

    async def store(t: str) -> None:
        await upload_service.search_collection(
            reader, name, vecs[t], knowledge_base_ids=kb_ids, top_k=5, plans=plans
        )

    table = vector_table_name(name)

    async def raw_query(t: str) -> None:
        await raw.fetch(
            f"SELECT id, content FROM {table} ORDER BY embedding <=> $1 LIMIT 5", vecs[t]
        )

    sample = SearchRequest(**body(texts[0]))
    hits = await upload_service.search(runtime, clients, principal, sample, plans)

    async def serialise(_t: str) -> None:
        SearchResponse(results=hits).model_dump_json()

    cases: list[tuple[str, Callable[[str], Awaitable[None]]]] = [
        ("HTTP search, before (resolution transaction, token checked each time)", http_before),
        ("HTTP search, after", http),
        ("HTTP floor: the same route refused at validation (422)", floor),
        ("token verification (signature)", auth_uncached),
        ("token verification (kept)", auth_cached),
        ("pool checkout (pre-ping)", checkout),
        ("resolution, before (transaction)", resolve_before),
        ("resolution, after (autocommit)", resolve_after),
        ("query embedding (client)", embed),
        ("query embedding (model alone, in a thread)", embed_model),
        ("search_collection", store),
        ("raw pgvector query", raw_query),
        ("response serialisation (5 hits)", serialise),
    ]
    results: dict[str, list[float]] = {c[0]: [] for c in cases}
    try:
        for t in texts[:5]:
            for _, fn in cases:
                await fn(t)
        for i, t in enumerate(texts[5:]):
            for label, fn in cases[i % len(cases) :] + cases[: i % len(cases)]:
                results[label].append(await timed(lambda fn=fn, t=t: fn(t)))
    finally:
        await holder.close()
        await raw.close()
        await client.aclose()
        await clients.aclose()
    print("| step | latency |")
    print("|---|---|")
    for label, values in results.items():
        print(f"| {label} | {ms(values)} |")
    bound = [
        a + b
        for a, b in zip(
            results["query embedding (client)"], results["raw pgvector query"], strict=True
        )
    ]
    print(f"| query embedding + raw query (per request) | {ms(bound)} |")
    for label in list(results)[:2]:
        print(
            f"\n{label}: p95 / (embedding + raw query) p95 = "
            f"{vectors.pct(results[label], 95) / vectors.pct(bound, 95):.2f}, "
            f"p50 / (embedding + raw query) p50 = "
            f"{vectors.pct(results[label], 50) / vectors.pct(bound, 50):.2f}"
        )
    b, a = list(results)[:2]
    print(
        f"\nafter / before: p50 {vectors.pct(results[a], 50) / vectors.pct(results[b], 50):.2f}, "
        f"p95 {vectors.pct(results[a], 95) / vectors.pct(results[b], 95):.2f}"
    )


async def amain(args: argparse.Namespace) -> None:
    log(f"load average {os.getloadavg()}")
    before = load_before(args.before)
    corpus = vectors.Corpus(384, 1000, 0.6, args.seed, args.data)  # bench/vectors.py defaults
    with tempfile.TemporaryDirectory() as media:
        async with fresh_runtime(Path(media), bus={"mode": BusMode.EMBEDDED}) as runtime:
            url = runtime.settings.database.url
            raw = await vectors.raw_connect(url)
            try:
                if args.writes:
                    await bench_writes(runtime, raw, corpus, args.writes, hnsw=False)
                    await bench_writes(runtime, raw, corpus, args.writes, hnsw=True)
                if args.migrate:
                    await bench_migrate(runtime, raw, corpus, args.migrate)
                if args.small:
                    await bench_small(raw, corpus, args.small, args.queries)
                if args.http_chunks:
                    await bench_http(runtime, corpus, args.http_chunks, args.queries)
                if args.size:
                    collection = f"cost_{args.size}"
                    table = vector_table_name(collection)
                    async with runtime.sessionmaker() as s, s.begin():
                        await vectorstore.ensure_table(s, collection, corpus.dim)
                    definition = await vectors.index_def(raw, table)
                    await raw.execute(f"DROP INDEX {table}_embedding_idx")
                    log(f"loading {args.size:,} rows")
                    x, ids, _, load_s = await vectors.load_table(
                        url, corpus, table, args.size, 50, args.seed
                    )
                    log(f"loaded in {load_s:.0f} s; building HNSW")
                    build_s, _ = await vectors.build_index(url, table, definition, "1GB")
                    await raw.execute(f"VACUUM ANALYZE {table}")
                    log(f"HNSW built in {build_s:.0f} s")
                    qrng = np.random.default_rng(args.seed + 3)
                    queries = corpus.clustered(qrng, args.queries)
                    await bench_ef(raw, table, x, ids, queries, args.efs)
                    words = [" ".join(c.split()[2:4]) for c in corpus.contents(qrng, args.queries)]
                    await bench_store(runtime, before, collection, queries, words, vectors.KB)
            finally:
                await raw.close()
    log(f"load average {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=100_000, help="rows of the big table (0: skip)")
    parser.add_argument(
        "--efs", type=lambda s: [int(v) for v in s.split(",")], default=[10, 20, 40, 100, 400]
    )
    parser.add_argument(
        "--small",
        type=lambda s: [int(v) for v in s.split(",") if v],
        default=[1000, 2000, 5000, 20000],
    )
    parser.add_argument("--http-chunks", type=int, default=2000)
    parser.add_argument("--migrate", type=int, default=0, help="rows of the migrated table")
    parser.add_argument("--writes", type=int, default=3_000, help="rows per table shape (0: skip)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--data", default="latent", choices=["latent", "islands"])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--before", default="6557943", help="the commit whose vectorstore is 'before'"
    )
    asyncio.run(amain(parser.parse_args()))


if __name__ == "__main__":
    main()
