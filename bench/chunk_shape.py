"""Chunks shaped for the model: does the heading path in the embedded text help?

Every document of a BEIR-format folder becomes a markdown file whose title is its heading
(``# <title>``, a blank line, its text), read by the parser's own code for ``.md`` files
and chunked with the product's chunking and citations (``docproc_parser.handler.
chunk_and_cite``) at each ``--chunk-size``. Each chunk is embedded by the built-in model
as the embedder embeds it (windows averaged), twice: as its text alone, and after the
path of headings above it (its citation's ``heading_path``) that it does not begin with
(``passage_text``: ``"Title > Section\\n\\n"`` then the chunk). A document is ranked by its best chunk (exact cosine); the
measures are ``bench/quality.py``'s, with the paired difference's bootstrap interval.

    uv run python bench/chunk_shape.py --data <a BEIR folder, e.g. SciFact> --split train \\
        --chunk-size 2500 --chunk-size 1000

Only chunks that do not begin with their heading differ between the two runs (a
document's first chunk opens with its title), so only those are embedded twice.
Measured and not adopted (docs/benchmarks.md, "Chunks shaped for the model"): the
embedder embeds a chunk's own text.
Never commit a data set or anything derived from one.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.quality import (  # noqa: E402
    TOP_K,
    DataSet,
    Run,
    bootstrap,
    header,
    load,
    load_beir,
    per_query,
    ranked,
    report,
)


def passage_text(chunk: str, heading_path: tuple[str, ...]) -> str:
    """The chunk after the headings above it that its first lines do not show (as a line,
    or as a markdown heading line), joined by " > "."""
    lines = chunk.lstrip("\n").split("\n", len(heading_path))[: len(heading_path)]
    shown = {line.strip() for line in lines} | {line.strip().lstrip("#").strip() for line in lines}
    missing = [title for title in heading_path if title not in shown]
    return " > ".join(missing) + "\n\n" + chunk if missing else chunk


def markdown_corpus(folder: Path) -> dict[str, str]:
    """Each document as a markdown file whose heading is its title."""
    import json

    corpus = {}
    for line in (folder / "corpus.jsonl").open():
        doc = json.loads(line)
        title, body = (doc.get("title") or "").strip(), doc.get("text") or ""
        corpus[str(doc["_id"])] = f"# {title}\n\n{body}" if title else body
    return corpus


def chunked(corpus: dict[str, str], chunk_size: int) -> tuple[list[str], list[str], list[str]]:
    """(document id, chunk text, passage text) of every chunk, as the pipeline cuts them."""
    from docproc_common.ingestion import IngestionConfig
    from docproc_parser.engine.processor import extract_text
    from docproc_parser.handler import chunk_and_cite

    config = IngestionConfig(chunk_size=chunk_size)  # the default overlap, 200
    owners, plain, passages = [], [], []
    for doc_id, text in corpus.items():
        doc = extract_text(text.encode(), "document.md", "pymupdf")
        pieces, citations = chunk_and_cite(doc, config)
        for piece, citation in zip(pieces, citations, strict=True):
            owners.append(doc_id)
            plain.append(piece.text)
            passages.append(passage_text(piece.text, citation.heading_path))
    return owners, plain, passages


def best_chunk_run(
    data: DataSet, queries: np.ndarray, owners: list[str], chunks: np.ndarray
) -> Run:
    scores = queries @ chunks.T
    run: Run = {}
    for qid, row in zip(data.queries, scores, strict=True):
        best: dict[str, float] = {}
        for i in np.argsort(-row):
            best.setdefault(owners[i], float(row[i]))
            if len(best) == TOP_K:
                break
        run[qid] = ranked(best.items())
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="a BEIR-format folder")
    ap.add_argument("--split", default="test", help="qrels/<split>.tsv (default test)")
    ap.add_argument("--chunk-size", type=int, action="append", help="repeatable; default 2500")
    ap.add_argument("--bootstrap", type=int, default=1000, help="resamples per interval")
    args = ap.parse_args()

    from docproc_common.embedding.local_model import LocalMiniLM

    data = load_beir(args.data, args.split)
    corpus = markdown_corpus(args.data)
    model = LocalMiniLM(cache_dir=ROOT / ".cache" / "models")
    queries = model.embed(list(data.queries.values()), kind="query")
    print(
        f"data {args.data} split {args.split}: {len(corpus)} documents, "
        f"{len(data.queries)} judged queries; load {load()}"
    )
    header()
    for size in args.chunk_size or [2500]:
        started = time.perf_counter()
        owners, plain, passages = chunked(corpus, size)
        differ = [i for i, (a, b) in enumerate(zip(plain, passages, strict=True)) if a != b]
        vectors = model.embed(plain)
        with_path = vectors.copy()
        if differ:
            with_path[differ] = model.embed([passages[i] for i in differ])
        took = time.perf_counter() - started
        extra = f"{len(plain)} chunks, {len(differ)} with a heading path added; {took:.0f} s"
        before = best_chunk_run(data, queries, owners, vectors)
        after = best_chunk_run(data, queries, owners, with_path)
        report(f"{size} chars, chunk text", data.qrels, before, args.bootstrap, extra)
        report(f"{size} chars, heading path + chunk", data.qrels, after, args.bootstrap)
        a = per_query(data.qrels, before)["nDCG@10"]
        b = per_query(data.qrels, after)["nDCG@10"]
        deltas = [b[q] - a[q] for q in data.qrels]
        low, high = bootstrap(deltas, args.bootstrap)
        print(
            f"| {size} chars, paired difference | {statistics.fmean(deltas):+.4f} "
            f"[{low:+.4f}, {high:+.4f}] | | | | | |",
            flush=True,
        )
    print(f"load {load()}")


if __name__ == "__main__":
    main()
