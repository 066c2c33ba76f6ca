"""The three chunking strategies of a collection: ``recursive``, ``markdown`` and ``fixed``.

No third-party dependency (this replaces ``langchain-text-splitters``). Every strategy
works on character offsets into the source text and only copies a chunk's text when it
emits it, so a 50 MB document costs a handful of ``str.find``/``str.rfind`` calls per
chunk, all linear in the input.

Rules (see "Configuración de la fragmentación" in the file-processing specification):

* ``chunk_size`` is the maximum number of characters of a chunk; ``chunk_overlap`` is the
  most a chunk repeats from the previous one and must be smaller than ``chunk_size``.
* Pieces are merged greedily up to ``chunk_size``. The next chunk starts at the earliest
  piece boundary that keeps at most ``chunk_overlap`` characters of the previous chunk
  *and* leaves room for the next piece under ``chunk_size``. The overlap is therefore a
  ceiling, not a guarantee: often less, sometimes nothing (always nothing right before
  and after a piece that had to be split at a finer level, and across markdown sections).
* ``recursive`` splits by paragraph (``"\\n\\n"``), then line (``"\\n"``), then word
  (``" "``), then character. A separator stays attached to the start of the piece it
  precedes. A piece that does not fit is split at the next level, so a chunk never
  exceeds ``chunk_size``.
* ``fixed`` splits only at line ends. A line longer than ``chunk_size`` has no separator
  left and is emitted whole; a warning is logged when the emitted chunk is *above*
  ``chunk_size`` (a line of exactly ``chunk_size`` characters passes silently).
* ``markdown`` splits at ATX headings (``#`` .. ``######``, ignoring ``#`` lines inside
  fenced code blocks), then runs the recursive splitter inside each section.
  Design choice: each chunk of a section is prefixed with the section's heading path,
  e.g. ``"# Title\\n## Section\\n"`` followed by the body text, and the prefix counts
  within ``chunk_size``: the body is split with ``chunk_size - len(prefix)`` (and an
  overlap capped to fit). The heading lines are written stripped, one per line.
  A prefix may take at most half of ``chunk_size``; when the path is longer, its
  outermost headings are dropped, and when even the section's own heading does not fit,
  the prefix is empty and the heading line is split as part of the body.
  A heading with no text under it is carried by the prefixes of the chunks that follow
  it; when no chunk carries it (an empty trailing section, a section followed directly
  by a sibling), it gets a chunk of its own whose body is the heading line (prefixed
  with its ancestors), so no text of the document is lost.

* Tables, in every strategy: a markdown pipe table (a header row, a delimiter row such
  as ``|---|:--:|``, then rows up to the first line without a ``|``) longer than a chunk
  is cut between its rows, and every chunk that opens on one of its rows after the first
  carries the table's header and delimiter rows before its body (after the markdown
  heading path), counted within ``chunk_size``; such a chunk repeats no row of the chunk
  before it (no overlap: the header says what the rows are). A header taking more than
  half of ``chunk_size`` is not repeated. Measured in ``bench/table_headers.py``.

Whitespace is stripped from both ends of every chunk and whitespace-only chunks are
dropped. :class:`Chunk` ``start``/``end`` are the offsets of the (stripped) chunk body in
the source text, so ``chunk.text == prefix + text[chunk.start:chunk.end]`` where
``prefix`` is empty except for the markdown heading path and a table's header rows.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import re
from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "DEFAULT_CHUNK_OVERLAP",
    "DEFAULT_CHUNK_SIZE",
    "FIXED_SEPARATORS",
    "RECURSIVE_SEPARATORS",
    "SPLITTER_VERSION",
    "Chunk",
    "ChunkingStrategy",
    "MarkdownHeading",
    "markdown_headings",
    "split_text",
]

logger = logging.getLogger(__name__)

DEFAULT_CHUNK_SIZE = 2500
DEFAULT_CHUNK_OVERLAP = 200

#: Bumped whenever a strategy cuts the same text with the same settings differently
#: (tests/unit/test_splitters.py pins the output to it): ``rag-ingest`` re-chunks a file
#: cut with another version even when its bytes and settings are unchanged.
SPLITTER_VERSION = 2

#: Paragraph, line, word, character: the order in which ``recursive`` tries separators.
RECURSIVE_SEPARATORS: tuple[str, ...] = ("\n\n", "\n", " ", "")
#: ``fixed`` cuts only at line ends.
FIXED_SEPARATORS: tuple[str, ...] = ("\n",)


class ChunkingStrategy(StrEnum):
    RECURSIVE = "recursive"
    MARKDOWN = "markdown"
    FIXED = "fixed"


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk: its text and the offsets ``[start, end)`` of its body in the source."""

    text: str
    start: int
    end: int


_NON_SPACE = re.compile(r"\S")
# An ATX heading (up to three spaces of indentation, 1-6 '#', then a blank or the end of
# the line) or a code fence line (``` or ~~~, three or more). The scan pattern starts with
# a literal "\n", which lets the regex engine skip ahead to line breaks (several times
# faster than a MULTILINE "^" on large texts); the first line is matched separately.
_MARKDOWN_LINE_BODY = (
    r"(?P<line> {0,3}(?:(?P<hashes>#{1,6})(?:[ \t][^\n]*)?"
    r"|(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)))$"
)
_MARKDOWN_FIRST_LINE = re.compile(_MARKDOWN_LINE_BODY, re.MULTILINE)
_MARKDOWN_LINES = re.compile("\n" + _MARKDOWN_LINE_BODY, re.MULTILINE)
# A pipe table's delimiter row: cells of hyphens, optionally colon-aligned, at least one "|"
# after a cell ("|---|---|", "--- | :-:", "| --- |").
_TABLE_DELIMITER = re.compile(
    r"^[ \t]*\|?(?:[ \t]*:?-+:?[ \t]*\|)+(?:[ \t]*:?-+:?)?[ \t]*$", re.MULTILINE
)


def split_text(
    text: str,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP,
    strategy: ChunkingStrategy = ChunkingStrategy.RECURSIVE,
) -> list[Chunk]:
    """Split ``text`` into chunks of at most ``chunk_size`` characters.

    Raises :class:`ValueError` for ``chunk_size < 1``, ``chunk_overlap < 0``,
    ``chunk_overlap >= chunk_size`` or an unknown strategy.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    if chunk_overlap < 0:
        raise ValueError(f"chunk_overlap must not be negative, got {chunk_overlap}")
    if chunk_overlap >= chunk_size:
        raise ValueError(
            f"chunk_overlap ({chunk_overlap}) must be smaller than chunk_size ({chunk_size})"
        )
    strategy = ChunkingStrategy(strategy)  # also accepts the plain string value

    splitter = _Splitter(text)
    splitter.tables = markdown_tables(text)
    if strategy is ChunkingStrategy.MARKDOWN:
        splitter.split_markdown(chunk_size, chunk_overlap)
    else:
        separators = (
            RECURSIVE_SEPARATORS if strategy is ChunkingStrategy.RECURSIVE else FIXED_SEPARATORS
        )
        splitter.configure(chunk_size, chunk_overlap, separators, "")
        splitter.split(0, len(text), 0)
    return splitter.chunks


@dataclass(frozen=True, slots=True)
class MarkdownTable:
    """A markdown pipe table's rows ``[rows_start, rows_end)`` and its header, the header and
    delimiter lines (stripped, each ending in a newline) that a chunk opening on a row
    repeats."""

    rows_start: int
    rows_end: int
    header: str


def markdown_tables(text: str) -> list[MarkdownTable]:
    """The pipe tables of ``text`` that have rows, in order: a line holding a ``|``, a
    delimiter row under it, then each following non-blank line holding a ``|``."""
    tables: list[MarkdownTable] = []
    for m in _TABLE_DELIMITER.finditer(text):
        if tables and m.start() < tables[-1].rows_end:
            continue  # a row of the table before that looks like a delimiter
        head_end = m.start() - 1
        if head_end < 0:
            continue
        head_start = text.rfind("\n", 0, head_end) + 1
        head = text[head_start:head_end]
        if "|" not in head or not head.strip():
            continue
        rows_start = rows_end = m.end() + 1
        while rows_end < len(text):
            line_end = text.find("\n", rows_end)
            line_end = len(text) if line_end == -1 else line_end
            line = text[rows_end:line_end]
            if "|" not in line or not line.strip():
                break
            rows_end = line_end + 1
        rows_end = min(rows_end, len(text))
        if rows_end > rows_start:
            header = head.strip() + "\n" + m.group(0).strip() + "\n"
            tables.append(MarkdownTable(rows_start, rows_end, header))
    return tables


@dataclass(frozen=True, slots=True)
class MarkdownHeading:
    """An ATX heading of a markdown text (``markdown_headings``)."""

    line: str  # the heading line, stripped
    start: int  # offset of the line's first character
    line_end: int  # offset of the line's "\n" (or the end of the text)
    level: int


class _Splitter:
    """Greedy span-based splitter; appends to ``chunks`` in source order."""

    __slots__ = (
        "chunk_overlap",
        "chunk_size",
        "chunks",
        "last_end",
        "prefix",
        "separators",
        "tables",
        "text",
    )

    def __init__(self, text: str) -> None:
        self.text = text
        self.chunks: list[Chunk] = []
        self.last_end = 0
        self.chunk_size = DEFAULT_CHUNK_SIZE
        self.chunk_overlap = DEFAULT_CHUNK_OVERLAP
        self.separators = RECURSIVE_SEPARATORS
        self.prefix = ""
        self.tables: list[MarkdownTable] = []

    def configure(
        self, chunk_size: int, chunk_overlap: int, separators: tuple[str, ...], prefix: str
    ) -> None:
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.separators = separators
        self.prefix = prefix

    # -- emitting -----------------------------------------------------------------------

    def _emit(self, start: int, end: int, header: str = "") -> None:
        """Emit ``text[start:end]`` (``start`` is a non-whitespace character) right-stripped,
        after the prefix and ``header`` (a table's header rows)."""
        body = self.text[start:end].rstrip()
        end = start + len(body)
        if end <= self.last_end:
            # Entirely inside the previous chunk (an overlap followed by whitespace only).
            return
        self.last_end = end
        self.chunks.append(Chunk(self.prefix + header + body, start, end))

    def _table_at(self, pos: int) -> MarkdownTable | None:
        """The table among whose rows ``pos`` lies, if any."""
        i = bisect.bisect_right(self.tables, pos, key=lambda t: t.rows_start)
        if i and pos < self.tables[i - 1].rows_end:
            return self.tables[i - 1]
        return None

    def _header_for(self, pos: int) -> str:
        """The header rows a chunk opening at ``pos`` repeats: its table's, when ``pos`` opens
        one of the table's rows and the header takes at most half of the chunk; else
        nothing."""
        table = self._table_at(pos)
        if table is None or 2 * len(table.header) > self.chunk_size:
            return ""
        if self.text[self.text.rfind("\n", 0, pos) + 1 : pos].strip():
            return ""  # inside a row, not at its start
        return table.header

    def _emit_unsplittable(self, start: int, end: int) -> None:
        """Emit a piece with no separator left, whole; warn if it is above ``chunk_size``."""
        before = len(self.chunks)
        self._emit(start, end)
        if len(self.chunks) > before:
            size = len(self.chunks[-1].text)
            if size > self.chunk_size:
                logger.warning(
                    "Emitting a chunk of %d characters at offset %d, above chunk_size=%d: "
                    "it has no separator left to split at (a single line). The embedding "
                    "model may refuse it.",
                    size,
                    start,
                    self.chunk_size,
                )

    # -- the recursive engine -------------------------------------------------------------

    def split(self, start: int, end: int, level: int) -> None:
        """Split ``text[start:end]`` with ``separators[level:]``.

        Pieces at this level start at each occurrence of the separator (the separator
        belongs to the piece it precedes). A window starts at a non-whitespace
        character ``p`` and extends to the last piece boundary ``q <= p + chunk_size``;
        when there is none, the piece starting at ``p`` does not fit and is split at the
        next level (or, at the last level, emitted whole).
        """
        text = self.text
        chunk_size = self.chunk_size
        chunk_overlap = self.chunk_overlap
        sep = self.separators[level]
        sep_len = len(sep)
        last_level = level == len(self.separators) - 1
        search = _NON_SPACE.search
        pos = start
        while True:
            m = search(text, pos, end)
            if m is None:
                return
            pos = m.start()
            header = self._header_for(pos) if sep_len else ""
            limit = pos + chunk_size - len(header)
            if end <= limit:
                self._emit(pos, end, header)
                return
            if not sep_len:
                # Character level: a window of exactly chunk_size characters. The next
                # "piece" is one character, so the whole overlap fits.
                self._emit(pos, limit)
                pos = limit - chunk_overlap
                continue
            cut = text.rfind(sep, pos + 1, min(end, limit + sep_len))
            if cut == -1:
                # No boundary within chunk_size: the piece starting at pos is too big.
                piece_end = text.find(sep, pos + 1, end)
                if piece_end == -1:
                    piece_end = end
                if last_level:
                    self._emit_unsplittable(pos, piece_end)
                else:
                    self.split(pos, piece_end, level + 1)
                pos = piece_end
                continue
            self._emit(pos, cut, header)
            # Overlap: keep the longest run of trailing pieces that is at most
            # chunk_overlap and leaves room for the next piece under chunk_size.
            room = cut + chunk_size
            next_cut = text.find(sep, cut + 1, min(end, room + sep_len))
            if next_cut == -1:
                next_len = end - cut if end <= room else chunk_size + 1
            else:
                next_len = next_cut - cut
            budget = min(chunk_overlap, chunk_size - next_len)
            # `cut` itself is an occurrence, so this finds a boundary in [cut - budget, cut],
            # after the start of the chunk just emitted (a short one, under a table's
            # header, could otherwise reach back before it).
            lowest = max(cut - budget, pos + 1)
            pos = text.find(sep, lowest, cut + sep_len) if budget > 0 else cut
            if pos < cut and self._table_at(pos) is not None:
                pos = cut  # no overlap out of a table's rows: a row opens with the header

    # -- markdown -------------------------------------------------------------------------

    def split_markdown(self, chunk_size: int, chunk_overlap: int) -> None:
        text = self.text
        n = len(text)
        headings = markdown_headings(text)
        prefix_budget = chunk_size // 2

        def emit_section(path: tuple[MarkdownHeading, ...], body_start: int, body_end: int) -> None:
            prefix = "".join(h.line + "\n" for h in path)
            size = chunk_size - len(prefix)
            self.configure(size, min(chunk_overlap, size - 1), RECURSIVE_SEPARATORS, prefix)
            self.split(body_start, body_end, 0)

        def flush(
            pending: list[tuple[MarkdownHeading, tuple[MarkdownHeading, ...]]], carried: set[int]
        ) -> None:
            """Give a chunk of its own to each pending heading no later chunk carries."""
            to_flush: list[tuple[MarkdownHeading, tuple[MarkdownHeading, ...]]] = []
            for heading, path in reversed(pending):
                if heading.start in carried:
                    continue
                to_flush.append((heading, path))
                carried.update(h.start for h in path)
            for heading, path in reversed(to_flush):
                emit_section(path, heading.start, heading.line_end)
            pending.clear()

        # Text before the first heading: no prefix.
        emit_section((), 0, headings[0].start if headings else n)

        stack: list[MarkdownHeading] = []
        pending: list[tuple[MarkdownHeading, tuple[MarkdownHeading, ...]]] = []
        for i, heading in enumerate(headings):
            body_start = min(heading.line_end + 1, n)
            body_end = headings[i + 1].start if i + 1 < len(headings) else n
            while stack and stack[-1].level >= heading.level:
                stack.pop()
            ancestors = _fit_prefix(tuple(stack), prefix_budget)
            stack.append(heading)
            if _NON_SPACE.search(text, body_start, body_end) is None:
                pending.append((heading, ancestors))
                continue
            path = _fit_prefix((*ancestors, heading), prefix_budget)
            if not path:
                # Even the section's own heading takes more than half of chunk_size:
                # split it as part of the body instead.
                body_start = heading.start
            flush(pending, {h.start for h in path})
            emit_section(path, body_start, body_end)
        flush(pending, set())


def _fit_prefix(path: tuple[MarkdownHeading, ...], budget: int) -> tuple[MarkdownHeading, ...]:
    """The innermost headings of ``path`` whose prefix fits in ``budget`` characters."""
    total = 0
    k = len(path)
    while k and total + len(path[k - 1].line) + 1 <= budget:
        k -= 1
        total += len(path[k].line) + 1
    return path[k:]


def markdown_headings(text: str) -> list[MarkdownHeading]:
    """ATX headings of ``text`` in order, skipping lines inside fenced code blocks."""
    headings: list[MarkdownHeading] = []
    fence = ""  # the opening fence while inside a code block
    first = _MARKDOWN_FIRST_LINE.match(text)
    matches = _MARKDOWN_LINES.finditer(text)
    for m in itertools.chain((first,) if first else (), matches):
        marker = m.group("fence")
        if fence:
            # Only a closing fence (same character, at least as long, nothing after it)
            # matters inside a code block.
            if (
                marker
                and marker[0] == fence[0]
                and len(marker) >= len(fence)
                and not m.group("info").strip()
            ):
                fence = ""
            continue
        if marker:
            fence = marker
            continue
        start, end = m.span("line")
        headings.append(
            MarkdownHeading(text[start:end].strip(), start, end, len(m.group("hashes")))
        )
    return headings
