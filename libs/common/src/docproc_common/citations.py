"""Where each chunk came from, as the parser records it and a search hit answers it.

The parser writes the citations of a chunk set next to the set itself
(``citations_key``): ``{"schema_version": 1, "citations": [...]}``, one entry per chunk
in the set's order. The chunk set keeps its format (a JSON list of the chunks' texts), so
a set written before citations existed (an older parser, a redelivery during an upgrade)
embeds as it did, its chunks without citations, and an older embedder reading a newer
parser's set ignores the citations file.

A citation, precisely:

* ``page_start`` / ``page_end``: the 1-based pages the chunk's first and last characters
  are on, for a document the parser read page by page (PyMuPDF's PDF pages, the pages of
  the parsed view, ``GET /kb/{kb_id}/documents/{id}/parsed``); ``None`` for a format read
  as one text. ``crosses_pages`` when they differ.
* ``char_start`` / ``char_end``: the chunk's text as ``[char_start, char_end)``, counted
  from the first character of page ``page_start`` in the parsed text (``GET
  /rag/documents/{id}``: the pages' texts joined by a blank line), or from the start of
  the parsed text when there are no pages. So ``page_text[char_start:char_end]`` is the
  chunk for a chunk within its page; a chunk that crosses pages runs past its first
  page's end, across the blank line between pages. Whitespace around a chunk is not in
  it; with the ``markdown`` strategy a chunk's content begins with the heading lines the
  splitter prefixed, which are outside its offsets.
* ``heading_path``: the headings above the chunk's first character, outermost first
  (``docproc_parser.citations`` says where the parser sees headings); empty when none.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

CITATIONS_SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class Citation:
    page_start: int | None
    page_end: int | None
    char_start: int
    char_end: int
    heading_path: tuple[str, ...] = ()

    @property
    def crosses_pages(self) -> bool:
        return self.page_start is not None and self.page_end != self.page_start


def citations_key(chunks_path: str) -> str:
    """Where the citations of the chunk set at ``chunks_path`` are: ``<set>.citations.json``."""
    return f"{chunks_path.removesuffix('.json')}.citations.json"


def dump_citations(citations: Sequence[Citation]) -> bytes:
    entries = [
        {
            "page_start": c.page_start,
            "page_end": c.page_end,
            "char_start": c.char_start,
            "char_end": c.char_end,
            "heading_path": list(c.heading_path),
        }
        for c in citations
    ]
    return json.dumps({"schema_version": CITATIONS_SCHEMA_VERSION, "citations": entries}).encode()


def load_citations(data: bytes, chunk_count: int) -> list[Citation]:
    """The citations of a set of ``chunk_count`` chunks; ``ValueError`` for another version
    or another count (they would cite the wrong chunks)."""
    document: dict[str, Any] = json.loads(data)
    version = document.get("schema_version")
    if version != CITATIONS_SCHEMA_VERSION:
        raise ValueError(f"citations schema_version {version!r} is not {CITATIONS_SCHEMA_VERSION}")
    entries = document["citations"]
    if len(entries) != chunk_count:
        raise ValueError(f"{len(entries)} citations for a set of {chunk_count} chunks")
    return [
        Citation(
            page_start=e["page_start"],
            page_end=e["page_end"],
            char_start=e["char_start"],
            char_end=e["char_end"],
            heading_path=tuple(e["heading_path"]),
        )
        for e in entries
    ]
