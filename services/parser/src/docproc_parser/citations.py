"""The citation of each chunk (``docproc_common.citations``): its pages, its offsets in the
page text, the headings above it. Pure functions of the parsed text and the chunks'
offsets (``splitters.Chunk.start``/``end``), run with the chunking on the blocking pool.

Where the parser sees headings:

* markdown ``#`` headings (ATX, outside fenced code) in a text that is markdown: a ``.md``
  file, LiteParse's markdown output, LlamaParse's, and any text a collection chunks with
  the ``markdown`` strategy;
* a PDF's outline (its bookmarks, read by PyMuPDF): each entry placed where its title
  first appears on its page, from the previous entry on, else at the page's start;
* nowhere else: a ``.docx``'s heading styles and a plain ``.txt`` give no headings (the
  extracted text does not keep them), so their chunks' ``heading_path`` is empty.

A chunk's page is the page its character is on: the last page beginning at or before it,
so an empty page (which takes no room in the text) is never a chunk's page.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from docproc_common.citations import Citation
from docproc_common.splitters import Chunk, ChunkingStrategy, markdown_headings

from docproc_parser.engine.jobs import OutlineEntry
from docproc_parser.engine.processor import ExtractedDocument


@dataclass(frozen=True, slots=True)
class Heading:
    start: int  # where it begins in the parsed text
    level: int  # 1 outermost
    title: str


def page_index(starts: Sequence[int], offset: int) -> int:
    """The 0-based page holding ``offset`` of the text whose pages begin at ``starts``."""
    return max(bisect.bisect_right(starts, offset) - 1, 0)


def heading_title(line: str) -> str:
    """An ATX heading line's text: without its opening ``#``s nor a closing ``#`` sequence
    (CommonMark: ``## Title ##`` is "Title", ``# C#`` is "C#")."""
    title = line.strip().lstrip("#").strip()
    bare = title.rstrip("#")
    if not bare:
        return ""
    return bare.rstrip() if bare != title and bare[-1] in " \t" else title


def markdown_outline(text: str) -> list[Heading]:
    return [Heading(h.start, h.level, heading_title(h.line)) for h in markdown_headings(text)]


def outline_headings(
    text: str, starts: Sequence[int], outline: Sequence[OutlineEntry]
) -> list[Heading]:
    """A PDF outline's entries placed in the parsed text, in order: where the title first
    appears on its page at or after the previous entry, else at the page's start. An entry
    on a page that was not read (past ``max_pages``, or an invalid target) is left out."""
    headings: list[Heading] = []
    at = 0
    for entry in outline:
        if not 1 <= entry.page <= len(starts):
            continue
        begin = starts[entry.page - 1]
        end = starts[entry.page] if entry.page < len(starts) else len(text)
        found = text.find(entry.title, max(begin, at), end) if entry.title else -1
        at = max(at, found if found != -1 else begin)
        headings.append(Heading(at, entry.level, entry.title))
    return headings


def heading_paths(headings: Sequence[Heading]) -> list[tuple[str, ...]]:
    """For each heading (in text order), the path of headings it opens: itself under the
    nearest heading before it of each shallower level. Untitled headings close sections
    but are not named."""
    stack: list[Heading] = []
    paths: list[tuple[str, ...]] = []
    for heading in headings:
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        paths.append(tuple(h.title for h in stack if h.title))
    return paths


def cite(
    chunks: Sequence[Chunk],
    starts: Sequence[int],
    *,
    paged: bool,
    headings: Sequence[Heading] = (),
) -> list[Citation]:
    """Each chunk's citation (``docproc_common.citations``): pages from ``starts`` when
    ``paged``, offsets from its page's start (or the text's), and the headings above it."""
    if not paged:
        starts = (0,)
    heading_starts = [h.start for h in headings]
    paths = heading_paths(headings)
    citations = []
    for c in chunks:
        first = page_index(starts, c.start)
        last = page_index(starts, c.end - 1)  # a chunk is never empty
        above = bisect.bisect_right(heading_starts, c.start)
        citations.append(
            Citation(
                page_start=first + 1 if paged else None,
                page_end=last + 1 if paged else None,
                char_start=c.start - starts[first],
                char_end=c.end - starts[first],
                heading_path=paths[above - 1] if above else (),
            )
        )
    return citations


def document_headings(doc: ExtractedDocument, strategy: ChunkingStrategy) -> list[Heading]:
    """Where the parser sees headings in ``doc`` (the module's docstring)."""
    if doc.outline:
        return outline_headings(doc.text, doc.page_starts, doc.outline)
    if doc.markdown or strategy is ChunkingStrategy.MARKDOWN:
        return markdown_outline(doc.text)
    return []


def cite_document(
    doc: ExtractedDocument, chunks: Sequence[Chunk], strategy: ChunkingStrategy
) -> list[Citation]:
    """Blocking: the citations of ``chunks``, cut from ``doc.text`` with ``strategy``."""
    return cite(
        chunks,
        doc.page_starts,
        paged=doc.paged and bool(doc.page_starts),
        headings=document_headings(doc, strategy),
    )
