"""Retrieval quality on a BEIR-format data set, through the whole pipeline of ``docproc dev``.

Every document of ``corpus.jsonl`` is uploaded as a ``.txt`` (its title, a blank line, its
text) into one knowledge base, parsed, chunked and embedded as any upload is; then every
judged query of ``queries.jsonl`` goes through ``POST /rag/search`` (``top_k`` 100) in each
mode, a document ranked by its best chunk. The measures are ``ir_measures``' (trec_eval's:
graded judgments with linear gain): nDCG@10, recall@10 and @100, MRR@10, each with a
percentile bootstrap interval over the queries, beside the ingestion time and the search
latency as the client sees it. As BEIR scores, a query's own document (ArguAna's, Quora's)
is left out of its ranking; a query past the API's 10,000 characters is cut there.

    uv run python bench/quality.py --data <a BEIR folder, e.g. SciFact> --split train \\
        --home ../search-quality-data --reference

``--home`` keeps the all-in-one's home (its embedded Postgres and files) there: a corpus is
ingested once, and a later run on the same home only searches (it uploads what the base
lacks). Without it, everything lives in a temporary folder. ``--sweep`` scores hybrid's
fusion (``search.service.fuse``) over the vector and keyword hits for vector weights 0 to 1. ``--reference`` adds what the
pipeline is held to, over the same texts: the built-in model run directly (whole-corpus
exact cosine, sentence-transformers' 256-token truncation; the parity check) and BM25 by
``bm25s`` (English stop words and Snowball stemming, and plain lower-cased words).
``--rerank-model-dir`` mounts a cross-encoder directory (``model.onnx``, ``tokenizer.json``,
optional ``card.json``; docs/search.md, "Reranking") as the all-in-one's
``EMBEDDER__RERANK_MODEL_DIR``, names it the collection's reranker, and adds the ``rerank``
mode: hybrid, its first 50 hits scored by the cross-encoder. Every other mode is searched
with ``rerank: false``, so the legs are measured without it.
Never commit a data set or anything derived from one; ``bench/out/`` is ignored.

``--model-dir`` embeds with a mounted model instead of the built-in one (a folder with
``model.onnx``, ``tokenizer.json`` and ``docproc-model.json``, e.g. the one
``bench/models.py fetch`` writes): the all-in-one gets its parent as
``EMBEDDER__MODELS_DIR`` and the collection (default name suffixed with the model's
folder) names the card's model; ``--reference`` then runs that model directly.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import ir_measures
import numpy as np
from ir_measures import MRR, R, nDCG

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docproc_common.auth import EDIT, VIEW, mint_token  # noqa: E402
from docproc_testing.auth import DEV_AUTH  # noqa: E402
from docproc_testing.dev import running_dev  # noqa: E402
from docproc_testing.runtime import LOCAL_MODEL  # noqa: E402
from docproc_upload.search.schemas import QUERY_CHARS  # noqa: E402

MEASURES = {"nDCG@10": nDCG @ 10, "R@10": R @ 10, "R@100": R @ 100, "MRR@10": MRR @ 10}
MODES = ("vector", "keyword", "hybrid")
#: The modes' request fields: ``rerank`` is hybrid then the collection's reranker, and the
#: others leave the reranker out whatever the collection says.
REQUESTS: dict[str, dict[str, Any]] = {
    "vector": {"mode": "vector", "rerank": False},
    "keyword": {"mode": "keyword", "rerank": False},
    "hybrid": {"mode": "hybrid", "rerank": False},
    "rerank": {"mode": "hybrid", "rerank": True},
}
TOP_K = 100
UPLOADERS = 4
PROGRESS_EVERY = 500  # uploads between two progress lines
STALLED_AFTER = 1800  # seconds without a count moving before a run gives up

Run = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]


@dataclass
class DataSet:
    corpus: dict[str, str]  # document id -> the text uploaded
    queries: dict[str, str]  # judged queries only
    qrels: Qrels


def load_beir(folder: Path, split: str) -> DataSet:
    corpus = {}
    for line in (folder / "corpus.jsonl").open():
        doc = json.loads(line)
        title, body = doc.get("title") or "", doc.get("text") or ""
        corpus[str(doc["_id"])] = f"{title}\n\n{body}" if title else body
    qrels: Qrels = {}
    with (folder / "qrels" / f"{split}.tsv").open() as fh:
        for line in fh:
            qid, did, score = line.rstrip("\n").split("\t")[:3]
            if qid == "query-id":
                continue
            qrels.setdefault(qid, {})[did] = int(score)
    queries = {}
    for line in (folder / "queries.jsonl").open():
        q = json.loads(line)
        if str(q["_id"]) in qrels:
            queries[str(q["_id"])] = q["text"]
    return DataSet(corpus, queries, {q: qrels[q] for q in queries})


def file_name(doc_id: str) -> str:
    """The upload's name: the id itself when it is a plain short name, else its plain
    characters (cut to 80) and a hash of the whole id, so two ids never share a name."""
    plain = re.sub(r"[^A-Za-z0-9_.-]", "_", doc_id)
    if plain == doc_id and len(doc_id) <= 80:
        return doc_id + ".txt"
    return f"{plain[:80]}-{hashlib.sha256(doc_id.encode()).hexdigest()[:12]}.txt"


def judged(run: Run) -> Run:
    """The run without each query's own document, as BEIR scores it (``ignore_identical_ids``:
    in ArguAna or Quora a query is also a document of the corpus)."""
    return {qid: {d: s for d, s in docs.items() if d != qid} for qid, docs in run.items()}


def fitted(data: DataSet) -> DataSet:
    """The queries the API takes: one past its ``QUERY_CHARS`` is cut there, at a word."""
    queries = {}
    for qid, text in data.queries.items():
        if len(text) > QUERY_CHARS:
            text = text[:QUERY_CHARS].rsplit(maxsplit=1)[0]
        queries[qid] = text
    cut = sum(1 for q in data.queries if queries[q] != data.queries[q])
    if cut:
        print(f"{cut} queries longer than {QUERY_CHARS:,} characters are cut there", flush=True)
    return DataSet(data.corpus, queries, data.qrels)


# -- measuring ---------------------------------------------------------------------------


def per_query(qrels: Qrels, run: Run) -> dict[str, dict[str, float]]:
    """Each measure's value per judged query (0 for a query the run found nothing for)."""
    values = {name: dict.fromkeys(qrels, 0.0) for name in MEASURES}
    names = {str(m): n for n, m in MEASURES.items()}
    for metric in ir_measures.iter_calc(list(MEASURES.values()), qrels, run):
        values[names[str(metric.measure)]][metric.query_id] = float(metric.value)
    return values


def bootstrap(values: list[float], rounds: int, seed: int = 7) -> tuple[float, float]:
    """The 95% percentile interval of the mean over ``rounds`` resamples of the queries."""
    rng = np.random.default_rng(seed)
    data = np.asarray(values)
    means = data[rng.integers(0, len(data), (rounds, len(data)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


Interval = tuple[float, float, float]  # a mean and its 95% interval


def report(name: str, qrels: Qrels, run: Run, rounds: int, extra: str = "") -> dict[str, Interval]:
    """One row of the table: each measure's mean and interval, which it also returns."""
    run = judged(run)
    values = per_query(qrels, run)
    cells, figures = [], {}
    for measure in MEASURES:
        column = list(values[measure].values())
        mean = statistics.fmean(column)
        low, high = bootstrap(column, rounds)
        figures[measure] = (mean, low, high)
        cells.append(f"{mean:.3f} [{low:.3f}, {high:.3f}]")
    empty = sum(1 for q in qrels if not run.get(q))
    print(f"| {name} | " + " | ".join(cells) + f" | {empty} | {extra} |", flush=True)
    return figures


def write_baseline(path: Path, data: Path, ndcg: dict[str, Interval]) -> None:
    modes = {
        m: {"ndcg_at_10": round(v, 4), "low": round(lo, 4), "high": round(hi, 4)}
        for m, (v, lo, hi) in ndcg.items()
    }
    path.write_text(
        json.dumps({"data": data.name, "measure": "nDCG@10", "modes": modes}, indent=2) + "\n"
    )
    print(f"baseline written: {path}")


def regressions(path: Path, ndcg: dict[str, Interval]) -> list[str]:
    """The quality gate: each mode of the baseline whose nDCG@10 now falls below the low end
    of the baseline's interval (a mode the baseline lacks, or this run did not score, is
    not judged)."""
    failed = []
    for mode, was in json.loads(path.read_text())["modes"].items():
        if mode not in ndcg:
            continue
        now = ndcg[mode][0]
        verdict = "ok" if now >= was["low"] else "REGRESSED"
        print(
            f"gate: {mode} nDCG@10 {now:.4f}, baseline {was['ndcg_at_10']:.4f} "
            f"[{was['low']:.4f}, {was['high']:.4f}]: {verdict}",
            flush=True,
        )
        if verdict != "ok":
            failed.append(mode)
    return failed


def header() -> None:
    print("| ranking | " + " | ".join(MEASURES) + " | no hit | p50 / p95 search |")
    print("|---" * (len(MEASURES) + 3) + "|")


def ranked(scores: Iterable[tuple[str, float]]) -> dict[str, float]:
    """A run's entry from (document, score) best first: a score by rank, so ties never reorder."""
    return {doc: float(TOP_K - rank) for rank, (doc, _) in enumerate(scores)}


# -- the pipeline --------------------------------------------------------------------------


class FreshToken(httpx.Auth):
    """An app admin's token minted per request: an ingestion outlasts one token's hour."""

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = mint_token(DEV_AUTH, user_id="bench", permissions=[VIEW, EDIT], app_admin=True)
        request.headers["Authorization"] = f"Bearer {token}"
        yield request


def client(api: str) -> httpx.Client:
    return httpx.Client(base_url=api + "/api/v1", auth=FreshToken(), timeout=300)


def knowledge_base(
    c: httpx.Client,
    name: str,
    config: str,
    chunk_size: int | None,
    model: dict[str, str] | None = None,
) -> dict[str, str]:
    for kb in c.get("/kb").raise_for_status().json():
        if kb["collection_name"] == name:
            return dict(kb)
    body: dict[str, Any] = {
        "name": name,
        "collection_name": name,
        "scope": "app",
        "text_search_config": config,
    }
    if chunk_size is not None:
        overlap = min(200, chunk_size // 8)
        body["ingestion_config"] = {"chunk_size": chunk_size, "chunk_overlap": overlap}
    embedding = model or LOCAL_MODEL
    created = c.post("/kb", json={**body, **embedding})
    if created.status_code != 201:  # a default name past the limit, say: name one
        sys.exit(f"creating the collection {name!r} was refused: {created.text} (--collection)")
    return dict(created.json())


def held(c: httpx.Client, kb_id: str) -> set[str]:
    """The file names the base already holds (any status)."""
    names: set[str] = set()
    cursor = None
    while True:
        page = c.get(
            f"/kb/{kb_id}/documents",
            params={"limit": 500, **({"cursor": cursor} if cursor else {})},
        ).raise_for_status()
        body = page.json()
        names |= {d["filename"] for d in body["items"]}
        cursor = body["next_cursor"]
        if not cursor:
            return names


def upload(c: httpx.Client, kb_id: str, name: str, text: str) -> None:
    """One document; a 503 (the intake bound) waits as ``Retry-After`` says and tries again."""
    while True:
        r = c.post(f"/kb/{kb_id}/documents", files={"file": (name, text.encode())})
        if r.status_code != 503:
            r.raise_for_status()
            return
        time.sleep(float(r.headers.get("Retry-After", "1")))


def ingest(c: httpx.Client, kb_id: str, data: DataSet) -> tuple[float, dict[str, int]]:
    """Upload what the base lacks and wait for the base to be indexed: seconds, final state."""
    have = held(c, kb_id)
    missing = [(file_name(d), t) for d, t in data.corpus.items() if file_name(d) not in have]
    started = time.perf_counter()
    print(f"uploading {len(missing)} documents ({len(have)} held already)", flush=True)
    with ThreadPoolExecutor(UPLOADERS) as pool:
        for done, _ in enumerate(pool.map(lambda item: upload(c, kb_id, *item), missing), 1):
            if done % PROGRESS_EVERY == 0:
                print(f"uploaded {done} of {len(missing)}; load {load()}", flush=True)
    state = indexed(c, kb_id)
    print(
        f"ingested {len(missing)} documents in {time.perf_counter() - started:.0f} s "
        f"({len(have)} held before): {state}",
        flush=True,
    )
    return time.perf_counter() - started, state


def indexed(c: httpx.Client, kb_id: str) -> dict[str, int]:
    """The base's ingestion state once it is complete, its counts shown every minute; a base
    whose counts have not moved for ``STALLED_AFTER`` seconds ends the run (however long a
    large corpus takes while it moves)."""
    last: tuple[int, ...] = ()
    moved = shown = time.monotonic()
    while True:
        state = dict(c.get(f"/kb/{kb_id}/ingestion").raise_for_status().json())
        if state["indexing_status"] == "complete":
            return state
        counts = tuple(v for v in state.values() if isinstance(v, int))
        now = time.monotonic()
        if counts != last:
            last, moved = counts, now
        elif now - moved > STALLED_AFTER:
            sys.exit(f"ingestion has not moved for {STALLED_AFTER} s: {state}")
        if now - shown >= 60:
            shown = now
            print(
                f"indexing: {state['indexed_count']} indexed, {state['failed_count']} failed, "
                f"{state['processing_count']} in progress of {state['document_count']}; "
                f"load {load()}",
                flush=True,
            )
        time.sleep(2)


Hits = dict[str, list[dict[str, Any]]]  # query id -> the API's hits, best first


def search_runs(
    c: httpx.Client, collection: str, data: DataSet, modes: Iterable[str]
) -> Iterator[tuple[str, Hits, list[float]]]:
    for mode in modes:
        hits: Hits = {}
        latencies = []
        for qid, query in data.queries.items():
            body = {"query": query, "collections": [collection], "top_k": TOP_K, **REQUESTS[mode]}
            started = time.perf_counter()
            hits[qid] = c.post("/rag/search", json=body).raise_for_status().json()["results"]
            latencies.append(1000 * (time.perf_counter() - started))
        yield mode, hits, latencies


def documents(data: DataSet, hits: Hits) -> Run:
    """The run: each query's documents, each at its best chunk's place."""
    by_file = {file_name(d): d for d in data.corpus}
    run: Run = {}
    for qid, found in hits.items():
        best: dict[str, float] = {}
        for hit in found:
            best.setdefault(by_file[hit["filename"]], hit["score"])
        run[qid] = ranked(best.items())
    return run


def fusion_sweep(data: DataSet, vector: Hits, keyword: Hits, rounds: int) -> None:
    """``docproc_upload.search.service.fuse`` over the two legs' hits as the API gave them
    (each cut to the candidates a hybrid search fuses), for vector weights 0 to 1."""
    from docproc_upload.search.repository import Hit
    from docproc_upload.search.service import HYBRID_CANDIDATES, fuse

    def as_hits(found: list[dict[str, Any]]) -> list[Hit]:
        return [
            Hit(
                chunk_id=uuid.uuid5(uuid.UUID(h["vector_document_id"]), str(h["chunk_no"])),
                document_id=uuid.UUID(h["vector_document_id"]),
                tracking_id=None,
                chunk_no=h["chunk_no"],
                content="",
                filename=h["filename"],
                score=h["score"],
            )
            for h in found[:HYBRID_CANDIDATES]
        ]

    for tenth in range(11):
        weight = tenth / 10
        fused: Hits = {}
        for qid in data.queries:
            blend = fuse(
                as_hits(vector[qid]),
                as_hits(keyword[qid]),
                TOP_K,
                limit=HYBRID_CANDIDATES,
                weight=weight,
            )
            fused[qid] = [{"filename": h.filename, "score": h.score} for h in blend]
        report(f"fuse, vector weight {weight:.1f}", data.qrels, documents(data, fused), rounds)


def percentiles(latencies: list[float]) -> str:
    cuts = statistics.quantiles(latencies, n=20)
    return f"{statistics.median(latencies):.0f} / {cuts[18]:.0f} ms"


# -- references over the same texts --------------------------------------------------------


def model_run(data: DataSet, cache: Path, model_dir: Path | None = None) -> Run:
    """The built-in model (or the mounted one in ``model_dir``) directly: every document
    embedded whole (truncated to its window, as sentence-transformers does; a mounted
    model's queries with its query prefix), exact cosine top 100."""
    from docproc_common.embedding.local_model import LocalMiniLM, WindowedEncoder
    from docproc_common.embedding.mounted import MountedModel, MountedModelDir, read_card

    model: WindowedEncoder
    if model_dir is not None:
        model = MountedModel(MountedModelDir(model_dir, read_card(model_dir)))
    else:
        model = LocalMiniLM(cache_dir=ROOT / ".cache" / "models")
    ids = list(data.corpus)
    cache.parent.mkdir(parents=True, exist_ok=True)
    if cache.exists():
        docs = np.load(cache)
    else:
        docs = model.embed([data.corpus[d] for d in ids], truncate=True)
        np.save(cache, docs)
    queries = model.embed(list(data.queries.values()), truncate=True, kind="query")
    scores = queries @ docs.T
    run: Run = {}
    for qid, row in zip(data.queries, scores, strict=True):
        top = np.argsort(-row)[:TOP_K]
        run[qid] = ranked((ids[i], float(row[i])) for i in top)
    return run


def bm25_run(data: DataSet, stem: bool) -> Run:
    """BM25 by ``bm25s`` (Lucene's variant, k1 1.5, b 0.75)."""
    import bm25s

    stemmer = None
    if stem:
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
    stopwords = "en" if stem else None
    ids = list(data.corpus)
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(
            [data.corpus[d] for d in ids], stopwords=stopwords, stemmer=stemmer, show_progress=False
        ),
        show_progress=False,
    )
    tokens = bm25s.tokenize(
        list(data.queries.values()), stopwords=stopwords, stemmer=stemmer, show_progress=False
    )
    found, scores = retriever.retrieve(tokens, k=min(TOP_K, len(ids)), show_progress=False)
    run: Run = {}
    for qid, docs, row in zip(data.queries, found, scores, strict=True):
        run[qid] = ranked((ids[int(i)], float(s)) for i, s in zip(docs, row, strict=True) if s > 0)
    return run


# -- main --------------------------------------------------------------------------------


@contextmanager
def home(path: Path | None) -> Iterator[Path]:
    if path is not None:
        path.mkdir(parents=True, exist_ok=True)
        yield path
        return
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp)


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def with_reranker(
    ap: argparse.ArgumentParser, modes: str | None, model_dir: Path | None
) -> tuple[str, dict[str, str]]:
    """The modes to run (``rerank`` added when a cross-encoder is given and no modes are
    named) and the all-in-one's settings that mount the cross-encoder."""
    chosen = (modes or ",".join(MODES)).split(",")
    if model_dir is not None and modes is None:
        chosen.append("rerank")
    if "rerank" in chosen and model_dir is None:
        ap.error("the rerank mode needs a cross-encoder: --rerank-model-dir")
    env = {} if model_dir is None else {"EMBEDDER__RERANK_MODEL_DIR": str(model_dir.resolve())}
    return ",".join(chosen), env


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="a BEIR-format folder")
    ap.add_argument("--split", default="test", help="qrels/<split>.tsv (default test)")
    ap.add_argument("--home", type=Path, help="keep the all-in-one's home here between runs")
    ap.add_argument("--collection", help="default: beir_<folder>_<config>[_<chunk size>]")
    ap.add_argument("--config", default="simple", help="the collection's text_search_config")
    ap.add_argument(
        "--chunk-size", type=int, help="the base's chunk_size (default: the product's default)"
    )
    ap.add_argument("--modes", help=f"default: {','.join(MODES)} (and rerank with a model)")
    ap.add_argument(
        "--rerank-model-dir",
        type=Path,
        help="a cross-encoder directory: the collection reranks with it (the rerank mode)",
    )
    ap.add_argument(
        "--hybrid-weight",
        type=float,
        help="set the collection's hybrid_vector_weight (0-1) before searching; "
        "without it the collection keeps its own (the product's 0.6 unless set)",
    )
    ap.add_argument("--queries", type=int, help="the first N judged queries only")
    ap.add_argument("--bootstrap", type=int, default=1000, help="resamples per interval")
    ap.add_argument("--reference", action="store_true", help="also the model directly and BM25")
    ap.add_argument(
        "--sweep", action="store_true", help="hybrid's fusion over the vector weights 0 to 1"
    )
    ap.add_argument("--baseline", type=Path, help="write each mode's nDCG@10 and interval here")
    ap.add_argument(
        "--check",
        type=Path,
        help="the quality gate: exit 1 when a mode's nDCG@10 falls below this baseline's interval",
    )
    ap.add_argument(
        "--model-dir",
        type=Path,
        help="embed with this mounted model (bench/models.py fetch) instead of MiniLM",
    )
    args = ap.parse_args()
    mounted: dict[str, str] | None = None
    env: dict[str, str] = {}
    model_label = "MiniLM"
    if args.model_dir is not None:
        from docproc_common.embedding.mounted import read_card

        model_dir = args.model_dir.resolve()
        card = read_card(model_dir)
        mounted = {"embedding_provider": "local", "embedding_model": card.name}
        env["EMBEDDER__MODELS_DIR"] = str(model_dir.parent)
        model_label = card.name

    data = fitted(load_beir(args.data, args.split))
    args.modes, reranker_env = with_reranker(ap, args.modes, args.rerank_model_dir)
    env.update(reranker_env)
    if args.queries:
        keep = list(data.queries)[: args.queries]
        data = DataSet(
            data.corpus, {q: data.queries[q] for q in keep}, {q: data.qrels[q] for q in keep}
        )
    folder = re.sub(r"[^a-z0-9_]", "_", args.data.resolve().name.lower())
    chunking = f"_{args.chunk_size}" if args.chunk_size else ""
    collection = args.collection or f"beir_{folder}_{args.config}{chunking}"
    if args.model_dir is not None and not args.collection:
        collection += "_" + re.sub(r"[^a-z0-9_]", "_", args.model_dir.resolve().name.lower())
    print(
        f"data {args.data} split {args.split}: {len(data.corpus)} documents, "
        f"{len(data.queries)} judged queries; collection {collection}; load {load()}",
        flush=True,
    )
    with (
        home(args.home) as where,
        running_dev(where, embedded=True, env=env) as dev,
        client(dev.url) as c,
    ):
        kb = knowledge_base(c, collection, args.config, args.chunk_size, mounted)
        if args.rerank_model_dir is not None:
            reranker = {"rerank": {"provider": "local"}}
            c.patch(f"/kb/{kb['id']}", json=reranker).raise_for_status()
        if args.hybrid_weight is not None:
            weight = {"hybrid_vector_weight": args.hybrid_weight}
            c.patch(f"/kb/{kb['id']}", json=weight).raise_for_status()
            print(f"the collection's hybrid_vector_weight: {args.hybrid_weight}", flush=True)
        seconds, state = ingest(c, kb["id"], data)
        chunks = c.get(f"/rag/collections/{collection}/info").raise_for_status().json()
        print(
            f"ingestion: {seconds:.0f} s, {state['indexed_count']} indexed, "
            f"{state['failed_count']} failed, {chunks.get('total_vectors')} chunks; load {load()}",
            flush=True,
        )
        header()
        legs: dict[str, Hits] = {}
        ndcg: dict[str, Interval] = {}
        for mode, hits, latencies in search_runs(c, collection, data, args.modes.split(",")):
            legs[mode] = hits
            figures = report(
                mode, data.qrels, documents(data, hits), args.bootstrap, percentiles(latencies)
            )
            ndcg[mode] = figures["nDCG@10"]
        print(f"load {load()}", flush=True)
        saved = where / "bench" / f"{collection}_{args.split}_hits.json"
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(json.dumps(legs))
        print(f"the hits of each mode: {saved}", flush=True)
        if args.sweep:
            fusion_sweep(data, legs["vector"], legs["keyword"], args.bootstrap)
        if args.reference:
            references: dict[str, Callable[[], Run]] = {
                f"{model_label} directly (exact, no chunking)": lambda: model_run(
                    data,
                    where
                    / "bench"
                    / f"{collection}_{'minilm' if mounted is None else 'model'}.npy",
                    args.model_dir,
                ),
                "bm25s (en stop words, Snowball)": lambda: bm25_run(data, stem=True),
                "bm25s (lower-cased words)": lambda: bm25_run(data, stem=False),
            }
            for name, make in references.items():
                report(name, data.qrels, make(), args.bootstrap)
    if args.baseline:
        write_baseline(args.baseline, args.data, ndcg)
    failed = regressions(args.check, ndcg) if args.check else []
    print(f"done; load {load()}")
    if failed:
        sys.exit(f"quality gate: {', '.join(failed)} fell below the baseline's interval")


if __name__ == "__main__":
    main()
