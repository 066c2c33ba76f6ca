"""Ingestion throughput: a generated corpus of text PDFs through ``docproc dev`` and through the
five services as processes on Kafka; docs/s, chunks/s, the share of time per stage, and the
pipeline's chunks/s as a ratio to the embedding model's raw chunks/s.

The raw rate is the local model embedding the pipeline's own chunks (the corpus parsed and
chunked as the parser does, with the collection defaults), all of them in one ``embed``
call, in this process. The machine is shared and its speed moves between minutes, so the
raw rate is measured before and after each mode and the ratio is to their mean. The same
is given per CPU-second (the embedder's process, all of ``docproc dev`` in dev mode,
against this process while it runs the model alone), which other work on the machine
moves far less.

    uv run python bench/ingest.py                    # 200 PDFs x 20 pages, both modes
    uv run python bench/ingest.py --docs 40 --modes dev
    uv run python bench/ingest.py --docs 8 --modes batching

``batching`` times the model alone on the corpus's chunks, interleaved in one process: a
call per document with the fixed batches of 32 windows used before length batching, a
call per document with length batching, documents fused four to a call (what the
embedder's concurrency gives), and everything in one call (the raw rate); with the
share of computed tokens that was padding in each, and chunks per CPU-second of this
process, which moves far less than chunks/s when other work loads the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import asyncpg
import httpx
import pymupdf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docproc_common.auth import EDIT, VIEW, mint_token  # noqa: E402
from docproc_common.embedding.local_model import LocalMiniLM  # noqa: E402
from docproc_common.ingestion import IngestionConfig  # noqa: E402
from docproc_parser.engine.processor import extract_text  # noqa: E402
from docproc_parser.handler import chunk  # noqa: E402
from docproc_testing.api import wait_for  # noqa: E402
from docproc_testing.auth import DEV_AUTH  # noqa: E402
from docproc_testing.db import plain_dsn  # noqa: E402
from docproc_testing.dev import running_dev  # noqa: E402
from docproc_testing.infra import load_infra_env  # noqa: E402
from docproc_testing.runtime import LOCAL_MODEL  # noqa: E402

from tests.e2e.harness import running_cluster  # noqa: E402

WORDS = (
    "revenue quarter region growth customer contract policy review budget forecast "
    "invoice supplier delivery warranty compliance audit risk strategy market product"
).split()
STAGES = ("parse", "chunk", "embed", "write")


def make_corpus(folder: Path, docs: int, pages: int) -> list[Path]:
    rng = random.Random(7)
    paths = []
    for d in range(docs):
        pdf = pymupdf.open()
        for p in range(pages):
            text = "\n\n".join(
                " ".join(rng.choice(WORDS) for _ in range(40)).capitalize() + "." for _ in range(6)
            )
            pdf.new_page().insert_textbox(
                pymupdf.Rect(40, 40, 560, 800), f"Doc {d} page {p}\n\n{text}", fontsize=8
            )
        path = folder / f"doc{d:04d}.pdf"
        pdf.save(path)
        paths.append(path)
    return paths


def pipeline_chunks(files: list[Path]) -> list[str]:
    """The corpus's chunks as the pipeline makes them: the parser's text, the default chunking."""
    config = IngestionConfig()
    return [
        c.text
        for path in files
        for c in chunk(extract_text(path.read_bytes(), path.name, config.parser).text, config)
    ]


def raw_model_rate(model: LocalMiniLM, chunks: list[str]) -> tuple[float, float]:
    """Chunks/s and chunks per CPU-second of the model alone on ``chunks`` (one call)."""
    model.embed(chunks[:32])
    started, cpu_started = time.perf_counter(), time.process_time()
    model.embed(chunks)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    return len(chunks) / wall, len(chunks) / cpu


def cpu_seconds(url: str) -> float:
    """The CPU seconds a service process has used (its ``process_cpu_seconds_total``)."""
    body = httpx.get(f"{url}/metrics", timeout=10).text
    match = re.search(r"^process_cpu_seconds_total (\S+)$", body, re.M)
    assert match, f"{url} exports no process_cpu_seconds_total"
    return float(match.group(1))


class FixedBatches(LocalMiniLM):
    """The batching before length batching: the sorted windows cut every 32, each batch
    padded to its first (longest) window."""

    def _batches(self, widths: Sequence[int]) -> list[list[int]]:
        order = sorted(range(len(widths)), key=widths.__getitem__, reverse=True)
        return [order[i : i + 32] for i in range(0, len(order), 32)]


def padding_share(model: LocalMiniLM, calls: list[list[str]]) -> float:
    """Of the tokens the model computes for ``calls``, the share that is padding."""
    real = computed = 0
    for texts in calls:
        widths: list[int] = []
        for text in texts:
            pieces = model.count_tokens(text) - 2
            widths += [model.MAX_INPUT_TOKENS] * (pieces // model.WINDOW_TOKENS)
            if pieces % model.WINDOW_TOKENS or not pieces:
                widths.append(pieces % model.WINDOW_TOKENS + 2)
        real += sum(widths)
        computed += sum(len(b) * widths[b[0]] for b in model._batches(widths))
    return 1 - real / computed


def compare_batching(files: list[Path], repeats: int = 4, fused: int = 4) -> None:
    documents = [pipeline_chunks([path]) for path in files]
    count = sum(len(d) for d in documents)
    cache = ROOT / ".cache" / "models"
    new, old = LocalMiniLM(cache_dir=cache), FixedBatches(cache_dir=cache)
    variants: dict[str, tuple[LocalMiniLM, list[list[str]]]] = {
        "per document, fixed 32 (before)": (old, documents),
        "per document, by length": (new, documents),
        f"{fused} documents a call, by length": (
            new,
            [sum(documents[i : i + fused], []) for i in range(0, len(documents), fused)],
        ),
        "all in one call (raw)": (new, [[c for d in documents for c in d]]),
    }
    new.embed(documents[0])
    old.embed(documents[0])
    names = list(variants)
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):  # interleaved, each repeat in another order: the machine moves
        for name in names[r % len(names) :] + names[: r % len(names)]:
            model, calls = variants[name]
            started, cpu_started = time.perf_counter(), time.process_time()
            for texts in calls:
                model.embed(texts)
            wall[name].append(count / (time.perf_counter() - started))
            cpu[name].append(count / (time.process_time() - cpu_started))
    first = names[0]
    print(f"{'calls':34} {'padding':>8} {'chunks/s':>9} {'per CPU-s':>9} {'CPU vs before':>13}")
    for name in names:
        model, calls = variants[name]
        print(
            f"{name:34} {100 * padding_share(model, calls):7.1f}% {max(wall[name]):9.1f} "
            f"{max(cpu[name]):9.2f} {max(cpu[name]) / max(cpu[first]):13.2f}"
        )
    print(f"load average {load()}")


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def scrape(urls: list[str]) -> dict[str, float]:
    sums: dict[str, float] = dict.fromkeys(STAGES, 0.0)
    chunks = 0.0
    for url in urls:
        body = httpx.get(f"{url}/metrics", timeout=10).text
        for stage in STAGES:
            for m in re.finditer(
                rf'^docproc_\w+_stage_seconds_sum\{{stage="{stage}"\}} (\S+)$', body, re.M
            ):
                sums[stage] += float(m.group(1))
        for m in re.finditer(r"^docproc_embedder_chunks_total (\S+)$", body, re.M):
            chunks += float(m.group(1))
    sums["chunks"] = chunks
    return sums


def client(api: str) -> httpx.Client:
    """An HTTP client on ``api``'s public API with an app admin's token."""
    token = mint_token(DEV_AUTH, user_id="bench", permissions=[VIEW, EDIT], app_admin=True)
    return httpx.Client(
        base_url=api + "/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=120
    )


def ingest(api: str, files: list[Path], name: str | None = None) -> tuple[float, int]:
    """Upload ``files`` into a new knowledge base (collection ``name``, else a random one) and
    wait until all are indexed: the seconds that took and the documents indexed."""
    with client(api) as c:
        name = name or f"bench_{uuid.uuid4().hex[:8]}"
        kb = c.post(
            "/kb",
            json={
                "name": name,
                "collection_name": name,
                "scope": "app",
                **LOCAL_MODEL,
            },
        ).json()
        started = time.perf_counter()
        for path in files:
            r = c.post(f"/kb/{kb['id']}/documents", files={"file": (path.name, path.read_bytes())})
            r.raise_for_status()

        def complete() -> dict[str, int] | None:
            s = c.get(f"/kb/{kb['id']}/ingestion").json()
            return s if s["indexing_status"] == "complete" else None

        state = wait_for(complete, timeout=7200, interval=1, what="ingestion")
        elapsed = time.perf_counter() - started
        assert state["failed_count"] == 0, state
        return elapsed, int(state["indexed_count"])


@contextlib.contextmanager
def dev_server(tmp: Path) -> Iterator[str]:
    """``docproc dev`` on a fresh database of the test Postgres, dropped afterwards: its URL."""
    database_url = ""
    try:
        with running_dev(tmp) as dev:
            database_url = dev.database_url
            yield dev.url
    finally:
        if database_url:
            drop_database(load_infra_env(("postgres",))["DATABASE__URL"], database_url)


def drop_database(admin_url: str, url: str) -> None:
    """Drop ``url``'s database (made by ``create_test_database``) from ``admin_url``'s."""

    async def drop() -> None:
        conn = await asyncpg.connect(plain_dsn(admin_url))
        try:
            await conn.execute(f"DROP DATABASE IF EXISTS {url.rpartition('/')[2]} WITH (FORCE)")
        finally:
            await conn.close()

    asyncio.run(drop())


def run_dev(files: list[Path], tmp: Path) -> tuple[float, int, dict[str, float]]:
    with dev_server(tmp) as api:
        cpu = cpu_seconds(api)
        elapsed, docs = ingest(api, files)
        return elapsed, docs, {**scrape([api]), "cpu": cpu_seconds(api) - cpu}


def run_kafka(files: list[Path], tmp: Path) -> tuple[float, int, dict[str, float]]:
    with running_cluster(tmp) as cluster:
        embedder = f"http://127.0.0.1:{cluster.services['embedder'].port}"
        cpu = cpu_seconds(embedder)
        elapsed, docs = ingest(cluster.api.removesuffix("/api/v1"), files)
        urls = [f"http://127.0.0.1:{s.port}" for s in cluster.services.values()]
        return elapsed, docs, {**scrape(urls), "cpu": cpu_seconds(embedder) - cpu}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=200)
    ap.add_argument("--pages", type=int, default=20)
    ap.add_argument("--modes", default="dev,kafka", help="dev,kafka or batching")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        corpus = tmp / "corpus"
        corpus.mkdir()
        files = make_corpus(corpus, args.docs, args.pages)
        if args.modes == "batching":
            print(f"corpus: {args.docs} PDFs x {args.pages} pages; load average {load()}")
            compare_batching(files)
            return
        chunks = pipeline_chunks(files)
        model = LocalMiniLM(cache_dir=ROOT / ".cache" / "models")
        windows = sum(-(-(model.count_tokens(c) - 2) // model.WINDOW_TOKENS) for c in chunks)
        print(
            f"corpus: {args.docs} PDFs x {args.pages} pages, {len(chunks)} chunks, "
            f"{windows} model windows; load average {load()}"
        )
        print(
            f"{'mode':8} {'docs/s':>8} {'chunks/s':>9} {'raw before':>10} {'raw after':>9} "
            f"{'vs raw':>7} {'per CPU-s':>9} {'raw':>6} {'vs raw':>7}  "
            + "  ".join(f"{s:>6}" for s in STAGES)
            + "  load after"
        )
        raw_before, raw_cpu_before = raw_model_rate(model, chunks)
        for mode in args.modes.split(","):
            run = run_dev if mode == "dev" else run_kafka
            (tmp / mode).mkdir()
            elapsed, docs, sums = run(files, tmp / mode)
            raw_after, raw_cpu_after = raw_model_rate(model, chunks)
            total = sum(sums[s] for s in STAGES) or 1.0
            rate = sums["chunks"] / elapsed
            ratio = rate / ((raw_before + raw_after) / 2)
            per_cpu = sums["chunks"] / sums["cpu"]  # the embedder's (dev: the whole) process
            raw_cpu = (raw_cpu_before + raw_cpu_after) / 2
            shares = "  ".join(f"{100 * sums[s] / total:5.1f}%" for s in STAGES)
            print(
                f"{mode:8} {docs / elapsed:8.2f} {rate:9.1f} {raw_before:10.1f} {raw_after:9.1f} "
                f"{ratio:7.2f} {per_cpu:9.2f} {raw_cpu:6.2f} {per_cpu / raw_cpu:7.2f}  "
                f"{shares}  {load()}",
                flush=True,
            )
            raw_before, raw_cpu_before = raw_after, raw_cpu_after


if __name__ == "__main__":
    main()
