"""Bulk load: a backfill through the embedder's own write path, without and with bulk mode.

Each path gets its own collection on one fresh test database (dropped at the end): a
knowledge base, ``--docs`` tracking rows waiting for their attempt and their chunk sets in
storage (``--chunks-per-doc`` chunks of ~500 characters each, as bench/vectors.py writes),
then every ``DocumentParsed`` through the real ``EmbedderHandler`` (claim, current-attempt
lock, one transaction per document writing its chunk set, completion and outbox event),
``--concurrency`` documents at a time as the embedder's consumer runs them. The provider is
instant (``InstantClients``: the vectors are precomputed, 384-d unit vectors), so the
figures are the write path's and the index's, as with a fast HTTP or GPU embedder. The
vectors are bench/vectors.py's ``--data`` corpus (``latent`` by default, shaped like text
embeddings); ``uniform`` ones, with no structure for the graph to follow, make the HNSW
build costlier (3.2 against 2.4 s on 6k rows).

- *old path*: bulk mode off (``bulk_enter_backlog = 0``): every row goes into the
  HNSW-indexed table.
- *bulk path*: the default thresholds; the handler puts the collection in bulk mode on
  its backlog, the chunk sets go to the side table, and the
  embedder's sweep task (``BulkMode.sweeper``, running from the start as in the service)
  folds it once the writes settle (index build with ``--maintenance-work-mem`` and
  ``--workers``, moves, swap). Its time runs from the first document to the end of the fold.

Both end with the same checks: every row once, no side table, every index valid, and a
breakdown by phase (``Phases``): the wall time spent in each step of the handler and of the
fold, summed over the documents (``--concurrency`` of them overlap, so the handler's phases
add up to about ``concurrency`` x the writes' wall time), and the SQL statements a document
costs.

    uv run python bench/bulk_load.py                       # 100k chunks bulk, 20k old
    uv run python bench/bulk_load.py --old-docs 2000       # the old path on 100k too (~10 min at load 5-7)
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import resource
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import numpy as np
import numpy.typing as npt
from docproc_common import bulkload
from docproc_common.bus import stage
from docproc_common.bus.delivery import Delivery
from docproc_common.db.models import DocumentStatus, KnowledgeBase, RagDocument
from docproc_common.embedding.client import EmbeddingClient, EmbeddingClients
from docproc_common.events import DocumentParsed
from docproc_common.runtime import Runtime
from docproc_embedder import index
from docproc_embedder.bulk import BulkMode
from docproc_embedder.handler import EmbedderHandler
from docproc_testing.db import plain_dsn
from docproc_testing.infra import load_infra_env
from docproc_testing.runtime import fresh_runtime
from sqlalchemy import event, text

sys.path.insert(0, str(Path(__file__).parent))
import vectors as corpora  # noqa: E402  (bench/vectors.py: its embedding-like corpus)

DIM = 384
WORDS = (
    "capybara rodent river grass water wetland herd savanna burrow tail fur swim dive "
    "marsh reed bank shade sun mud forage graze season flood dry night dawn"
).split()


class InstantClient:
    """Answers every text with its precomputed vector (the text's first word is its row)."""

    dimensions = DIM

    def __init__(self, vectors: npt.NDArray[np.float32]) -> None:
        self._vectors = vectors

    async def embed(
        self,
        texts: list[str],
        kind: str = "passage",  # noqa: ARG002
    ) -> npt.NDArray[np.float32]:
        rows = [int(t.split(" ", 1)[0]) for t in texts]
        return self._vectors[rows]

    def count_tokens(self, texts: list[str]) -> int:
        return sum(len(t) // 4 for t in texts)


class InstantClients(EmbeddingClients):
    def __init__(self, runtime: Runtime, vectors: npt.NDArray[np.float32]) -> None:
        super().__init__(runtime.settings)
        self._instant = InstantClient(vectors)

    async def for_collection(self, kb: Any, session: Any) -> EmbeddingClient:  # noqa: ARG002
        return self._instant


class Phases:
    """Wall time per phase: each wraps an async function (a module attribute or a method)
    and adds up the time its calls take; ``statements`` counts what the engine executes."""

    HANDLER = (
        ("read (claim check, row, base)", stage, "_read"),
        ("storage get", None, "get"),
        ("unit of work (whole transaction)", stage, "_write"),
        ("  bulk entry check", BulkMode, "maybe_enter"),
        ("  chunk set: lock, delete, COPY", index, "write_chunks"),
        ("  base share lock", index.repository, "share_lock_kb"),
        ("  teardown reservation", index.repository, "reserved"),
        ("  row done", index.repository, "complete"),
        ("  outbox", stage.outbox, "enqueue"),
        ("storage delete", None, "delete"),
    )
    FOLD = (
        ("fold: moves", bulkload, "_move"),
        ("fold: index builds", bulkload, "_build_indexes"),
        ("fold: swap", bulkload, "_swap"),
    )

    def __init__(self, runtime: Runtime) -> None:
        self.seconds: dict[str, float] = {}
        self.statements = 0
        self._undo: list[tuple[Any, str, Any]] = []  # what to put back (None: delete)
        for label, owner, attr in (*self.HANDLER, *self.FOLD):
            self._wrap(label, runtime.storage if owner is None else owner, attr)
        self._engine = runtime.engine.sync_engine
        event.listen(self._engine, "before_cursor_execute", self._count)

    def _wrap(self, label: str, owner: Any, attr: str) -> None:
        original = getattr(owner, attr)
        self.seconds[label] = 0.0

        async def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - started

        self._undo.append((owner, attr, original if attr in vars(owner) else None))
        setattr(owner, attr, timed)

    def _count(self, *_: Any) -> None:
        self.statements += 1

    def close(self) -> None:
        event.remove(self._engine, "before_cursor_execute", self._count)
        for owner, attr, original in reversed(self._undo):
            if original is None:
                delattr(owner, attr)  # the instance's own wrapper; its class's method remains
            else:
                setattr(owner, attr, original)

    def report(self, docs: int) -> dict[str, Any]:
        return {
            "per_document_ms": {
                label: round(1000 * self.seconds[label] / docs, 2) for label, *_ in self.HANDLER
            },
            "fold_s": {label: round(self.seconds[label], 1) for label, *_ in self.FOLD},
            "statements_per_document": round(self.statements / docs, 1),
        }


def cpu_seconds(database: str) -> tuple[float, float]:
    """CPU time (user + system) of this process and of the backends of ``database`` now open
    (the pool's; a parallel index build's workers are not among them)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    backends = 0.0
    title = f"postgres: postgres {database} ".encode()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "cmdline").read_bytes().startswith(title):
                fields = (proc / "stat").read_text().rpartition(")")[2].split()
                backends += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            continue  # gone meanwhile
    return usage.ru_utime + usage.ru_stime, backends


def chunk_texts(first_row: int, count: int, rng: np.random.Generator) -> list[str]:
    out = []
    for row in range(first_row, first_row + count):
        words = rng.choice(WORDS, size=80)
        out.append(f"{row} " + " ".join(words))  # ~500 characters
    return out


async def prepare(
    runtime: Runtime, name: str, docs: int, per_doc: int, rng: np.random.Generator
) -> list[DocumentParsed]:
    """A knowledge base, ``docs`` tracking rows waiting for their attempt, their chunk sets."""
    events = []
    async with runtime.sessionmaker() as s, s.begin():
        kb = KnowledgeBase(
            name=name,
            collection_name=name,
            scope="org",
            owner_id="bench",
            organization_id="bench",
            ingestion_config={},
            embedding_provider="local",
            embedding_model="sentence-transformers/all-MiniLM-L6-v2",
            embedding_dim=DIM,
        )
        s.add(kb)
        await s.flush()
        for _ in range(docs):
            attempt = uuid.uuid4()
            doc = RagDocument(
                collection_name=name,
                knowledge_base_id=kb.id,
                organization_id="bench",
                filename="backfill.txt",
                filetype="txt",
                status=DocumentStatus.PROCESSING,
                attempt_id=attempt,
            )
            s.add(doc)
            await s.flush()
            events.append(
                DocumentParsed(
                    document_id=doc.id,
                    attempt_id=attempt,
                    collection_name=name,
                    knowledge_base_id=kb.id,
                    chunks_path=f"rag/{name}/chunks/{doc.id}/{attempt}.json",
                    parsed_path=f"rag/{name}/parsed/{doc.id}.txt",
                    chunk_count=per_doc,
                )
            )
    for i, parsed in enumerate(events):
        body = json.dumps(chunk_texts(i * per_doc, per_doc, rng)).encode()
        await runtime.storage.put(parsed.chunks_path, body, "application/json")
    return events


def with_embedder(runtime: Runtime, **embedder: Any) -> Runtime:
    e = runtime.settings.embedder.model_copy(update=embedder)
    return dataclasses.replace(
        runtime, settings=runtime.settings.model_copy(update={"embedder": e})
    )


async def run_path(
    runtime: Runtime,
    clients: EmbeddingClients,
    name: str,
    events: list[DocumentParsed],
    concurrency: int,
) -> dict[str, Any]:
    handler = EmbedderHandler(runtime, clients)
    queue: asyncio.Queue[DocumentParsed] = asyncio.Queue()
    for e in events:
        queue.put_nowait(e)

    async def worker() -> None:
        while not queue.empty():
            event = queue.get_nowait()
            delivery = Delivery(
                consumer="embedder", topic=DocumentParsed.TOPIC, event_id=uuid.uuid4(), attempt=1
            )
            await handler(event, delivery)

    phases = Phases(runtime)
    database = runtime.settings.database.url.rpartition("/")[2]
    cpu_start = cpu_seconds(database)
    load_before = os.getloadavg()
    stop = asyncio.Event()
    sweeping = asyncio.create_task(handler.bulk.sweeper()(stop))  # as the embedder runs it
    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    written = time.perf_counter() - started
    cpu_written = cpu_seconds(database)
    async with runtime.sessionmaker() as s:
        entered = await bulkload.in_bulk(s, name)
    while True:  # until the embedder's sweep has folded the collection
        async with runtime.sessionmaker() as s:
            if not await bulkload.in_bulk(s, name):
                break
        await asyncio.sleep(0.1)
    total = time.perf_counter() - started
    stop.set()
    await sweeping
    cpu_end = cpu_seconds(database)
    phases.close()
    async with runtime.sessionmaker() as s:
        rows, distinct = (
            await s.execute(text(f"SELECT count(*), count(DISTINCT id) FROM rag_{name}"))
        ).one()
        valid = (
            await s.execute(
                text(
                    "SELECT bool_and(indisvalid), count(*) FROM pg_index "
                    f"WHERE indrelid = to_regclass('public.rag_{name}')"
                )
            )
        ).one()
    return {
        "bulk_mode": entered,
        "rows": rows,
        "distinct_rows": distinct,
        "indexes_valid": bool(valid[0]),
        "indexes": valid[1],
        "write_s": round(written, 1),
        "fold_s": round(total - written, 1),
        "total_s": round(total, 1),
        "rows_per_s": round(rows / total),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "phases": phases.report(len(events)),
        "cpu_s": {  # (this process, the database's backends), by step
            "writes": [round(b - a, 1) for a, b in zip(cpu_start, cpu_written, strict=True)],
            "fold": [round(b - a, 1) for a, b in zip(cpu_written, cpu_end, strict=True)],
        },
    }


async def main(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(args.seed)
    most = max(args.docs, args.old_docs) * args.chunks_per_doc
    corpus = corpora.Corpus(DIM, 1000, 0.6, args.seed, args.data)  # bench/vectors.py defaults
    vectors = corpus.uniform(rng, most) if args.data == "uniform" else corpus.clustered(rng, most)
    results: dict[str, Any] = {"args": vars(args)}
    with tempfile.TemporaryDirectory() as tmp:
        async with fresh_runtime(
            Path(tmp),
            embedder={
                "index_build_maintenance_work_mem": args.maintenance_work_mem,
                "index_build_parallel_workers": args.workers,
            },
        ) as runtime:
            url = runtime.settings.database.url
            try:
                clients = InstantClients(runtime, vectors)
                paths = [
                    ("old", with_embedder(runtime, bulk_enter_backlog=0), args.old_docs),
                    ("bulk", runtime, args.docs),
                ]
                for label, rt, docs in paths:
                    name = f"bench_{label}_{uuid.uuid4().hex[:6]}"
                    events = await prepare(rt, name, docs, args.chunks_per_doc, rng)
                    results[label] = await run_path(rt, clients, name, events, args.concurrency)
                    print(label, json.dumps(results[label]), flush=True)
                await clients.aclose()
            finally:
                await runtime.engine.dispose()
                admin = await asyncpg.connect(
                    plain_dsn(load_infra_env(("postgres",))["DATABASE__URL"])
                )
                try:
                    await admin.execute(
                        f"DROP DATABASE IF EXISTS {url.rpartition('/')[2]} WITH (FORCE)"
                    )
                finally:
                    await admin.close()
    old, bulk = results["old"], results["bulk"]
    print(
        f"\nold path:  {old['rows']:>7} rows in {old['total_s']:>6} s = {old['rows_per_s']:>6} rows/s"
        f"\nbulk path: {bulk['rows']:>7} rows in {bulk['total_s']:>6} s = {bulk['rows_per_s']:>6} "
        f"rows/s (writes {bulk['write_s']} s, fold {bulk['fold_s']} s)"
        f"\nbulk / old: {bulk['rows_per_s'] / old['rows_per_s']:.2f}x"
    )
    for label in ("old", "bulk"):
        p, cpu = results[label]["phases"], results[label]["cpu_s"]
        print(
            f"\n{label} path: CPU s (bench process, database backends): writes {cpu['writes']}, "
            f"fold {cpu['fold']}"
        )
        print(f"{label} path, per document (ms, {p['statements_per_document']} statements):")
        for phase, ms in p["per_document_ms"].items():
            print(f"  {phase:<36} {ms:>8}")
        if label == "bulk":
            for phase, s in p["fold_s"].items():
                print(f"  {phase:<36} {s:>8} s")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--docs", type=int, default=2000, help="documents on the bulk path")
    p.add_argument("--old-docs", type=int, default=400, help="documents on the old path")
    p.add_argument("--chunks-per-doc", type=int, default=50)
    p.add_argument("--concurrency", type=int, default=4, help="EMBEDDER__CONCURRENCY")
    p.add_argument("--maintenance-work-mem", default="1GB")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--data",
        choices=("latent", "islands", "uniform"),
        default="latent",
        help="the vectors: bench/vectors.py's corpora (latent: clustered, low intrinsic "
        "dimension, as text embeddings), or uniform on the sphere (no structure: a "
        "costlier HNSW build)",
    )
    p.add_argument("--json", help="write the figures here")
    asyncio.run(main(p.parse_args()))
