"""The project's own labelled set: PostgreSQL's reference pages as a BEIR-format folder.

Each page of the SQL commands and client applications reference (``sql-*.html``,
``app-*.html`` of Debian's ``postgresql-doc-15``) is one document: its synopsis and
description, without its name line. Its query is the page's one-line purpose ("define a
new index", "change the definition of a table"), and the page is the one relevant answer.
The purposes are short, written by the same hands, and close to each other (a dozen pages
"define a new ..."), so a mode that stops telling them apart shows. Pages that share a
purpose (ROLLBACK and ABORT: "abort the current transaction") are one query with each
page relevant.

    apt-get download postgresql-doc-15 && dpkg-deb -x postgresql-doc-15_*.deb pgdoc
    uv run python bench/labelled_set.py pgdoc/usr/share/doc/postgresql-doc-15/html \\
        tests/quality/postgresql-reference

The folder is committed (PostgreSQL's licence, in its ``LICENSE``, allows it): the quality
gate (``tests/quality``) scores the pipeline on it in CI against the figures in its
``baseline.json``, written by ``bench/quality.py --baseline``.
"""

from __future__ import annotations

import argparse
import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

#: A document's text at most: the synopsis and the start of the description.
DOCUMENT_CHARS = 2000
PAGES = ("sql-*.html", "app-*.html")
PURPOSE = re.compile(r'<div class="refnamediv">.*?<p>(.*?)</p>', re.S)
SECTION = re.compile(r"<h2>(Synopsis|Description)</h2>(.*?)(?=<h2>|$)", re.S)


class Text(HTMLParser):
    """An HTML fragment's text, one space for every run of white space."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in {"p", "pre", "div", "li", "dt", "dd", "td", "tr"}:
            self.parts.append(" ")

    def text(self) -> str:
        return re.sub(r"\s+", " ", "".join(self.parts)).strip()


def text_of(fragment: str) -> str:
    parser = Text()
    parser.feed(fragment)
    return parser.text()


def page(path: Path) -> tuple[str, str] | None:
    """(purpose, document text) of one reference page, or None if it has no purpose line."""
    source = path.read_text(encoding="utf-8")
    found = PURPOSE.search(source)
    if found is None:
        return None
    name_line = html.unescape(text_of(found.group(1)))
    purpose = name_line.split("—", 1)[-1].strip()
    body = " ".join(text_of(part) for _, part in SECTION.findall(source))
    return purpose, body[:DOCUMENT_CHARS].rsplit(" ", 1)[0]


def build(source: Path, out: Path) -> tuple[int, int]:
    corpus, answers = [], {}
    for path in sorted(p for pattern in PAGES for p in source.glob(pattern)):
        found = page(path)
        if found is None or not found[1]:
            continue
        purpose, body = found
        corpus.append({"_id": path.stem, "title": "", "text": body})
        answers.setdefault(purpose, []).append(path.stem)
    queries = [{"_id": f"q-{pages[0]}", "text": purpose} for purpose, pages in answers.items()]
    qrels = [f"q-{pages[0]}\t{p}\t1" for pages in answers.values() for p in pages]
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    (out / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus))
    (out / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (out / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "\n".join(qrels) + "\n"
    )
    return len(corpus), len(queries)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("source", type=Path, help="postgresql-doc-15's html folder")
    ap.add_argument("out", type=Path, help="the BEIR-format folder to write")
    args = ap.parse_args()
    documents, queries = build(args.source, args.out)
    print(f"{documents} documents and {queries} queries in {args.out}")


if __name__ == "__main__":
    main()
