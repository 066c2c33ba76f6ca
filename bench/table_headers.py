"""Chunks shaped for the model: does repeating a table's header row in the chunks that
continue it help?

The set is built here from PostgreSQL's own documentation (Debian's ``postgresql-doc-15``,
as ``bench/labelled_set.py`` takes it): every page that holds a table becomes a markdown
document (its title as a heading, each table's caption, then the table as a markdown pipe
table, header row and delimiter row first), cut with the product's chunking
(``docproc_common.splitters.split_text``, the collection defaults). A table longer than a
chunk is cut between rows, and every chunk that opens on its rows carries the table's
header and delimiter rows (the product since issue #30). The run without them scores the
same chunks with that header taken off (the chunk's own span of the page), so each chunk
keeps its identity across the two runs.

Two kinds of queries, each judged at the chunk (the rows an agent is handed):

* ``row words``: a descriptive cell of a row (four words or more, unique in the set), as
  a person who remembers what the row says asks; the relevant chunks hold the row.
* ``column + key``: a column's name and the row's first cell ("Condition Name of 22012",
  "Aliases of double precision"), as a person asks a table for one value.

Each kind is also scored on its rows past their table's first chunk alone (the rows the
product gives a repeated header).

Queries come from tables of two columns or more, at most ``--per-table`` rows each (evenly
spread). Each chunk is ranked by the built-in model (exact cosine, embedded as the embedder
does), by BM25 (``bm25s``, lower-cased words) and by the product's hybrid blend of the two
(``search.service.fuse``), both variants over the same chunks, with the paired
difference's bootstrap interval.

    apt-get download postgresql-doc-15 && dpkg-deb -x postgresql-doc-15_*.deb pgdoc
    uv run python bench/table_headers.py pgdoc/usr/share/doc/postgresql-doc-15/html
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.quality import (  # noqa: E402
    TOP_K,
    Qrels,
    Run,
    bootstrap,
    header,
    load,
    per_query,
    ranked,
    report,
)

#: The shortest descriptive cell a ``row words`` query is made of.
QUERY_WORDS = 4


@dataclass
class Table:
    caption: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)


class Tables(HTMLParser):
    """A documentation page's title and its tables (``<div class="table">``): caption,
    header cells and row cells, each cell's text on one line."""

    def __init__(self) -> None:
        super().__init__()
        self.title = ""
        self.tables: list[Table] = []
        self._stack: list[str] = []
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._in_head = False
        self._caption: list[str] | None = None
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = dict(attrs).get("class") or ""
        if tag == "title":
            self._in_title = True
        elif tag == "div" and classes == "table":
            self.tables.append(Table("", []))
            self._caption = []
        elif tag == "table" and self._caption is not None:
            self.tables[-1].caption = " ".join("".join(self._caption).split())
            self._caption = None
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr" and self.tables:
            self._row = []
        elif tag in {"td", "th"} and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in {"td", "th"} and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()).replace("|", "\\|"))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            table = self.tables[-1]
            if self._in_head and not table.header:
                table.header = self._row
            elif not self._in_head and self._row and any(self._row):
                table.rows.append(self._row)
            self._row = None
        elif tag == "thead":
            self._in_head = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._cell is not None:
            self._cell.append(data)
        elif self._caption is not None:
            self._caption.append(data)


def pipe_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def page_text(title: str, tables: list[Table]) -> tuple[str, list[tuple[Table, int]]]:
    """The page as a markdown document, and where each table's rows start in it."""
    parts = [f"# {' '.join(title.split())}\n\n"]
    placed = []
    offset = len(parts[0])
    for table in tables:
        width = max([len(table.header), *(len(r) for r in table.rows)])
        head = table.header + [""] * (width - len(table.header))
        lines = pipe_row(head) + "\n" + pipe_row(["---"] * width) + "\n"
        rows = "".join(pipe_row(r + [""] * (width - len(r))) + "\n" for r in table.rows)
        block = f"{table.caption}\n\n{lines}{rows}\n"
        placed.append((table, offset + len(table.caption) + 2 + len(lines)))
        parts.append(block)
        offset += len(block)
    return "".join(parts), placed


@dataclass
class TableSet:
    chunks: list[str] = field(default_factory=list)  # without a repeated header
    variant: list[str] = field(default_factory=list)  # as the product cuts them
    queries: dict[str, dict[str, str]] = field(default_factory=dict)  # kind -> id -> text
    qrels: dict[str, Qrels] = field(default_factory=dict)  # kind -> qrels


def build(source: Path, chunk_size: int, per_table: int) -> TableSet:
    from docproc_common.splitters import split_text

    out = TableSet(queries={"row words": {}, "column + key": {}})
    out.qrels = {kind: {} for kind in out.queries}
    counts: dict[str, int] = {}
    candidates: list[tuple[str, str, list[str]]] = []  # kind, text, relevant chunk ids
    for path in sorted(source.glob("*.html")):
        parser = Tables()
        parser.feed(path.read_text(encoding="utf-8"))
        tables = [t for t in parser.tables if t.header and t.rows]
        if not tables:
            continue
        text, placed = page_text(parser.title, tables)
        first = len(out.chunks)
        spans = []
        for piece in split_text(text, chunk_size=chunk_size):
            spans.append((piece.start, piece.end))
            out.chunks.append(text[piece.start : piece.end])
            out.variant.append(piece.text)
        for table, rows_start in placed:
            if len(table.header) < 2:
                continue
            step = max(1, len(table.rows) // per_table)
            at = rows_start
            offsets = []
            for row in table.rows:
                line = pipe_row(row + [""] * (len(table.header) - len(row)))
                offsets.append((row, at, at + len(line)))
                at += len(line) + 1
            for row, row_start, row_end in offsets[::step][:per_table]:
                holding = [
                    str(first + i)
                    for i, (s, e) in enumerate(spans)
                    if s <= row_start and row_end <= e
                ]
                if not holding:
                    continue
                words = [c for c in row[1:] if len(c.split()) >= QUERY_WORDS]
                if words:
                    candidates.append(("row words", words[0], holding))
                    counts[words[0]] = counts.get(words[0], 0) + 1
                asked = next((j for j in range(1, len(row)) if row[j]), None)
                if row[0] and asked is not None and asked < len(table.header):
                    key_query = f"{table.header[asked]} of {row[0]}"
                    candidates.append(("column + key", key_query, holding))
                    counts[key_query] = counts.get(key_query, 0) + 1
    for kind, text, holding in candidates:
        if counts[text] != 1:  # the same words answer several rows: not a fair question
            continue
        continued = all(out.chunks[int(i)] != out.variant[int(i)] for i in holding)
        for subset in (kind, f"{kind}, rows past the table's first chunk")[: 1 + continued]:
            qid = f"q{len(out.queries.setdefault(subset, {}))}"
            out.queries[subset][qid] = text
            out.qrels.setdefault(subset, {})[qid] = dict.fromkeys(holding, 1)
    return out


def chunk_run(queries: dict[str, str], scores: np.ndarray) -> Run:
    run: Run = {}
    for qid, row in zip(queries, scores, strict=True):
        best = np.argsort(-row)[:TOP_K]
        run[qid] = ranked((str(i), float(row[i])) for i in best if row[i] > 0)
    return run


def hybrid_run(queries: dict[str, str], vector: np.ndarray, keyword: np.ndarray) -> Run:
    """The product's hybrid blend (``search.service.fuse``) over each leg's first 50."""
    import uuid

    from docproc_upload.search.repository import Hit
    from docproc_upload.search.service import HYBRID_CANDIDATES, fuse

    def hits(row: np.ndarray) -> list[Hit]:
        best = [int(i) for i in np.argsort(-row)[:HYBRID_CANDIDATES] if row[i] > 0]
        return [
            Hit(uuid.UUID(int=i), uuid.UUID(int=i), None, 0, "", str(i), float(row[i]))
            for i in best
        ]

    run: Run = {}
    for qid, v, k in zip(queries, vector, keyword, strict=True):
        blend = fuse(hits(v), hits(k), TOP_K, limit=HYBRID_CANDIDATES)
        run[qid] = ranked((h.filename or "", h.score) for h in blend)
    return run


def bm25_scores(chunks: list[str], queries: list[str]) -> np.ndarray:
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(chunks, stopwords=None, show_progress=False), show_progress=False
    )
    tokens = bm25s.tokenize(queries, stopwords=None, show_progress=False)
    found, scores = retriever.retrieve(tokens, k=min(TOP_K, len(chunks)), show_progress=False)
    dense = np.zeros((len(queries), len(chunks)), dtype=np.float32)
    for q, (ids, row) in enumerate(zip(found, scores, strict=True)):
        dense[q, ids] = row
    return dense


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("source", type=Path, help="postgresql-doc-15's html folder")
    ap.add_argument("--chunk-size", type=int, default=2500)
    ap.add_argument("--per-table", type=int, default=20, help="rows asked about per table")
    ap.add_argument("--bootstrap", type=int, default=1000, help="resamples per interval")
    args = ap.parse_args()

    from docproc_common.embedding.local_model import LocalMiniLM

    started = time.perf_counter()
    data = build(args.source, args.chunk_size, args.per_table)
    differ = [i for i, (a, b) in enumerate(zip(data.chunks, data.variant, strict=True)) if a != b]
    print(
        f"{len(data.chunks)} chunks, {len(differ)} open inside a table's rows; queries: "
        + ", ".join(f"{k} {len(q)}" for k, q in data.queries.items())
        + f"; load {load()}",
        flush=True,
    )
    model = LocalMiniLM(cache_dir=ROOT / ".cache" / "models")
    plain = model.embed(data.chunks)
    headed = plain.copy()
    headed[differ] = model.embed([data.variant[i] for i in differ])
    print(f"embedded in {time.perf_counter() - started:.0f} s", flush=True)
    header()
    for kind, queries in data.queries.items():
        qrels = data.qrels[kind]
        texts = list(queries.values())
        vectors = model.embed(texts, kind="query")
        cosines = (vectors @ plain.T, vectors @ headed.T)
        bm25 = (bm25_scores(data.chunks, texts), bm25_scores(data.variant, texts))
        rankings = {
            "MiniLM": [chunk_run(queries, c) for c in cosines],
            "BM25": [chunk_run(queries, b) for b in bm25],
            "hybrid": [hybrid_run(queries, c, b) for c, b in zip(cosines, bm25, strict=True)],
        }
        for ranking, runs in rankings.items():
            report(f"{kind}, {ranking}, header taken off", qrels, runs[0], args.bootstrap)
            report(f"{kind}, {ranking}, header repeated", qrels, runs[1], args.bootstrap)
            a, b = (per_query(qrels, r)["nDCG@10"] for r in runs)
            deltas = [b[q] - a[q] for q in qrels]
            low, high = bootstrap(deltas, args.bootstrap)
            print(
                f"| {kind}, {ranking}, paired difference | {statistics.fmean(deltas):+.4f} "
                f"[{low:+.4f}, {high:+.4f}] | | | | | |",
                flush=True,
            )
    print(f"load {load()}")


if __name__ == "__main__":
    main()
