"""Each chunk's citation (``docproc_parser.citations``): its pages, its offsets in the page
text (which slice the parsed text back to the chunk), and the headings above it."""

from __future__ import annotations

import random
from typing import Any

import pymupdf as mu
import pytest
from docproc_common.citations import Citation, citations_key, dump_citations, load_citations
from docproc_common.ingestion import IngestionConfig
from docproc_common.splitters import Chunk, ChunkingStrategy, split_text
from docproc_parser.citations import (
    Heading,
    cite,
    cite_document,
    heading_title,
    markdown_outline,
    outline_headings,
)
from docproc_parser.engine import worker
from docproc_parser.engine.jobs import OutlineEntry, PageText, ParseJob, cut_pages
from docproc_parser.engine.liteparse import LiteParseOptions
from docproc_parser.engine.processor import compose, extract_text, is_paged
from docproc_parser.handler import chunk_and_cite
from parser_samples import pdf


def paged(pages: list[str]) -> tuple[str, tuple[int, ...]]:
    """The parsed text of ``pages`` and where each begins, as the parser composes them."""
    return compose([PageText(p) for p in pages], {})


def page_text(text: str, starts: tuple[int, ...], page: int) -> str:
    """Page ``page`` (1-based) of the parsed text, without the blank line after it."""
    end = starts[page] if page < len(starts) else len(text)
    return text[starts[page - 1] : end].rstrip("\n")


def body(text: str, starts: tuple[int, ...], c: Citation) -> str:
    """What a citation's offsets slice out of the parsed text."""
    origin = starts[c.page_start - 1] if c.page_start is not None else 0
    return text[origin + c.char_start : origin + c.char_end]


def test_a_chunk_within_a_page_slices_its_page_text() -> None:
    text, starts = paged(["Alpha beta gamma.", "Delta epsilon zeta."])
    chunks = [Chunk("beta gamma.", 6, 17), Chunk("Delta epsilon", 19, 32)]
    first, second = cite(chunks, starts, paged=True)
    assert first == Citation(1, 1, 6, 17)
    assert second == Citation(2, 2, 0, 13)
    assert page_text(text, starts, 2)[second.char_start : second.char_end] == "Delta epsilon"
    assert not first.crosses_pages and not second.crosses_pages


def test_a_chunk_across_a_page_boundary_says_so_and_counts_from_its_first_page() -> None:
    text, starts = paged(["Alpha beta gamma.", "Delta epsilon zeta."])
    crossing = Chunk("gamma.\n\nDelta", 11, 24)
    assert text[11:24] == "gamma.\n\nDelta"
    (c,) = cite([crossing], starts, paged=True)
    assert c == Citation(1, 2, 11, 24)
    assert c.crosses_pages
    # past the first page's end: across the blank line joining the pages
    assert c.char_end > len(page_text(text, starts, 1))
    assert body(text, starts, c) == crossing.text


def test_an_empty_page_is_never_a_chunks_page() -> None:
    text, starts = paged(["", "First words.", "", "Last words."])
    assert starts == (0, 0, 12, 14)
    chunks = split_text(text, chunk_size=12, chunk_overlap=0)
    citations = cite(chunks, starts, paged=True)
    assert [(c.page_start, c.page_end) for c in citations] == [(2, 2), (4, 4)]
    crossing = cite([Chunk(text, 0, len(text))], starts, paged=True)[0]
    assert (crossing.page_start, crossing.page_end, crossing.char_start) == (2, 4, 0)


def test_without_pages_the_offsets_are_in_the_document_text() -> None:
    text = "First paragraph here.\n\nSecond paragraph, a longer one than the first."
    chunks = split_text(text, chunk_size=30, chunk_overlap=0)
    for piece, c in zip(chunks, cite(chunks, (0,), paged=False), strict=True):
        assert (c.page_start, c.page_end, c.crosses_pages) == (None, None, False)
        assert text[c.char_start : c.char_end] == piece.text
    # a parser that gave no page starts at all (LlamaParse)
    assert cite(chunks, (), paged=False)[0].char_start == 0


def test_overlapping_chunks_each_slice_their_own_text() -> None:
    sentences = [f"Sentence number {i} of page {{}}." for i in range(8)]
    text, starts = paged(["\n\n".join(s.format(p) for s in sentences) for p in (1, 2)])
    chunks = split_text(text, chunk_size=90, chunk_overlap=40)
    citations = cite(chunks, starts, paged=True)
    overlaps = sum(1 for a, b in zip(chunks, chunks[1:], strict=False) if b.start < a.end)
    assert overlaps > 3
    for piece, c in zip(chunks, citations, strict=True):
        assert body(text, starts, c) == piece.text
    assert [c.crosses_pages for c in citations].count(True) == 1


@pytest.mark.parametrize("seed", range(40))
def test_random_pages_and_settings_always_slice_back_to_the_chunk(seed: int) -> None:
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "\n", "\n\n", "epsilon", "zeta"]
    pages = [
        " ".join(rng.choice(words) for _ in range(rng.randrange(0, 80))).strip()
        for _ in range(rng.randrange(1, 6))
    ]
    text, starts = paged(pages)
    size = rng.randrange(10, 120)
    strategy = rng.choice(list(ChunkingStrategy))
    chunks = split_text(
        text, chunk_size=size, chunk_overlap=rng.randrange(0, size // 2 + 1), strategy=strategy
    )
    for piece, c in zip(chunks, cite(chunks, starts, paged=True), strict=True):
        assert c.page_start is not None and c.page_end is not None
        assert body(text, starts, c) == text[piece.start : piece.end]
        assert piece.text.endswith(text[piece.start : piece.end])
        assert page_text(text, starts, c.page_start)  # never an empty page
        assert c.crosses_pages == (c.page_end > c.page_start)
        inside = c.char_end <= len(page_text(text, starts, c.page_start))
        assert inside != c.crosses_pages


MARKDOWN = """Preamble before any heading.

# Guide

Intro text.

## Install

Install steps.

### On Linux

apt-get install it.

```sh
# not a heading: inside a fence
```

## Use ##

Usage text.

# Appendix
"""


def first_lines(
    text: str, chunks: list[Chunk], citations: list[Citation]
) -> dict[str, tuple[str, ...]]:
    """Each chunk's heading path, by the first line of its text in the document."""
    return {
        text[p.start : p.end].splitlines()[0]: c.heading_path
        for p, c in zip(chunks, citations, strict=True)
    }


def test_nested_markdown_headings_give_each_chunk_its_path() -> None:
    chunks = split_text(MARKDOWN, chunk_size=20, chunk_overlap=0)
    citations = cite(chunks, (0,), paged=False, headings=markdown_outline(MARKDOWN))
    assert first_lines(MARKDOWN, chunks, citations) == {
        "Preamble before any": (),
        "heading.": (),
        "# Guide": ("Guide",),  # a chunk that begins with its heading is under it
        "## Install": ("Guide", "Install"),
        "Install steps.": ("Guide", "Install"),
        "### On Linux": ("Guide", "Install", "On Linux"),
        "apt-get install it.": ("Guide", "Install", "On Linux"),
        "```sh": ("Guide", "Install", "On Linux"),
        "# not a heading:": ("Guide", "Install", "On Linux"),  # inside a fence
        "inside a fence": ("Guide", "Install", "On Linux"),
        "```": ("Guide", "Install", "On Linux"),
        "## Use ##": ("Guide", "Use"),  # a sibling closes "On Linux"
        "Usage text.": ("Guide", "Use"),
        "# Appendix": ("Appendix",),
    }


def test_a_chunk_that_opens_a_section_midway_keeps_the_path_at_its_start() -> None:
    chunks = split_text(MARKDOWN, chunk_size=40, chunk_overlap=0)
    citations = cite(chunks, (0,), paged=False, headings=markdown_outline(MARKDOWN))
    assert first_lines(MARKDOWN, chunks, citations)["Preamble before any heading."] == ()
    assert "# Guide" in chunks[0].text


def test_the_markdown_strategy_prefixes_headings_outside_the_offsets() -> None:
    """The ``markdown`` strategy's chunks begin with their heading lines; the offsets cover
    the text taken from the document, and the path names every heading above."""
    chunks = split_text(MARKDOWN, chunk_size=60, chunk_overlap=0, strategy="markdown")
    citations = cite(chunks, (0,), paged=False, headings=markdown_outline(MARKDOWN))
    for piece, c in zip(chunks, citations, strict=True):
        taken = MARKDOWN[c.char_start : c.char_end]
        assert piece.text.endswith(taken)
        prefix = piece.text.removesuffix(taken)
        assert [heading_title(line) for line in prefix.splitlines()] == list(
            c.heading_path[len(c.heading_path) - len(prefix.splitlines()) :]
        )
    linux = next(c for p, c in zip(chunks, citations, strict=True) if "apt-get" in p.text)
    assert linux.heading_path == ("Guide", "Install", "On Linux")


@pytest.mark.parametrize(
    ("line", "title"),
    [
        ("# Title", "Title"),
        ("###   Spaced   ", "Spaced"),
        ("## Closed ##", "Closed"),
        ("# C#", "C#"),
        ("# #", ""),
        ("#", ""),
        ("## Tabbed\t###", "Tabbed"),
    ],
)
def test_a_heading_line_gives_its_title(line: str, title: str) -> None:
    assert heading_title(line) == title


def test_an_untitled_heading_closes_its_section_and_is_not_named() -> None:
    text = "# A\n\none\n\n## \n\ntwo\n\n## B\n\nthree"
    chunks = split_text(text, chunk_size=5, chunk_overlap=0)
    cited = dict(
        zip(
            (text[c.start : c.end] for c in chunks),
            (
                c.heading_path
                for c in cite(chunks, (0,), paged=False, headings=markdown_outline(text))
            ),
            strict=True,
        )
    )
    assert cited["one"] == ("A",) and cited["two"] == ("A",) and cited["three"] == ("A", "B")


def test_a_pdf_outline_is_placed_where_its_titles_appear() -> None:
    text, starts = paged(["Cover page.", "Intro words. Scope here. Methods follow.", "Results."])
    outline = [
        OutlineEntry(1, "Intro", 2),
        OutlineEntry(2, "Scope", 2),
        OutlineEntry(1, "Missing title", 3),  # not in the text: the page's start
        OutlineEntry(1, "Beyond", 9),  # a page that was not read
    ]
    headings = outline_headings(text, starts, outline)
    assert headings == [
        Heading(starts[1], 1, "Intro"),
        Heading(starts[1] + text[starts[1] :].index("Scope"), 2, "Scope"),
        Heading(starts[2], 1, "Missing title"),
    ]
    chunks = [
        Chunk("Cover page.", 0, 11),
        Chunk("Intro words.", starts[1], starts[1] + 12),
        Chunk("Methods follow.", text.index("Methods"), text.index("Methods") + 15),
        Chunk("Results.", starts[2], starts[2] + 8),
    ]
    assert [c.heading_path for c in cite(chunks, starts, paged=True, headings=headings)] == [
        (),
        ("Intro",),
        ("Intro", "Scope"),
        ("Missing title",),
    ]


def test_outline_entries_stay_in_order_when_a_title_repeats_earlier_on_the_page() -> None:
    text, starts = paged(["Notes: see Summary below. Body. Summary of it all."])
    headings = outline_headings(
        text, starts, [OutlineEntry(1, "Body", 1), OutlineEntry(1, "Summary", 1)]
    )
    assert [h.start for h in headings] == [text.index("Body"), text.rindex("Summary")]


def test_a_pdf_names_its_pages_offsets_and_outline() -> None:
    first = "Penguins live in Antarctica and swim very well. " * 12
    data = pdf(
        [first, "Capybaras graze.", "Capybaras swim."],
        outline=[(1, "Penguins", 1), (1, "Capybaras", 2)],
    )
    doc = extract_text(data, "animals.pdf", "pymupdf")
    assert doc.paged and len(doc.page_starts) == 3 and not doc.markdown
    pieces, citations = chunk_and_cite(doc, IngestionConfig(chunk_size=300, chunk_overlap=60))
    pages = [page_text(doc.text, doc.page_starts, n) for n in (1, 2, 3)]
    assert pages[0].startswith("Penguins") and pages[1] == "Capybaras graze."
    for piece, c in zip(pieces, citations, strict=True):
        assert c.page_start is not None
        assert body(doc.text, doc.page_starts, c) == piece.text
        if not c.crosses_pages:
            assert pages[c.page_start - 1][c.char_start : c.char_end] == piece.text
    assert [(c.page_start, c.page_end) for c in citations] == [(1, 1)] * (len(pieces) - 1) + [
        (2, 3)
    ]
    assert citations[-1].crosses_pages and pieces[-1].text == "Capybaras graze.\n\nCapybaras swim."
    assert [c.heading_path for c in citations] == [("Penguins",)] * (len(pieces) - 1) + [
        ("Capybaras",)
    ]


def test_a_markdown_file_names_its_headings_and_a_text_file_none() -> None:
    md = extract_text(MARKDOWN.encode(), "guide.md", "pymupdf")
    txt = extract_text(MARKDOWN.encode(), "guide.txt", "pymupdf")
    config = IngestionConfig(chunk_size=40, chunk_overlap=0)
    assert md.markdown and not md.paged and not txt.markdown
    _, cited = chunk_and_cite(md, config)
    assert ("Guide", "Install", "On Linux") in {c.heading_path for c in cited}
    assert all(c.page_start is None for c in cited)
    _, plain = chunk_and_cite(txt, config)
    assert {c.heading_path for c in plain} == {()}
    # ...unless the collection chunks it as markdown: then its headings are its structure
    as_markdown = cite_document(
        txt, split_text(txt.text, chunk_size=40, chunk_overlap=0), ChunkingStrategy.MARKDOWN
    )
    assert ("Guide", "Install", "On Linux") in {c.heading_path for c in as_markdown}


def test_a_long_table_is_cited_by_its_rows_and_each_chunk_names_its_columns() -> None:
    """A markdown file's table longer than a chunk: every chunk on its rows opens with the
    header row (what the rows are), and its citation slices the rows themselves."""
    header = "| Error code | Condition name |\n|---|---|\n"
    table = header + "".join(f"| 22{i:03d} | condition_{i} |\n" for i in range(80))
    doc = extract_text(f"# Error codes\n\n{table}".encode(), "codes.md", "pymupdf")
    chunks, cited = chunk_and_cite(doc, IngestionConfig(chunk_size=300, chunk_overlap=50))
    rows = [(p, c) for p, c in zip(chunks, cited, strict=True) if "condition_" in p.text]
    assert len(rows) > 4
    for piece, c in rows[1:]:
        taken = doc.text[c.char_start : c.char_end]
        assert piece.text == header + taken and taken.startswith("| 22")
        assert c.heading_path == ("Error codes",)


def test_citations_travel_next_to_the_chunk_set() -> None:
    cited = [Citation(1, 2, 5, 90, ("A", "B")), Citation(None, None, 0, 4)]
    key = citations_key("rag/c/chunks/doc/attempt.json")
    assert key == "rag/c/chunks/doc/attempt.citations.json"
    assert load_citations(dump_citations(cited), 2) == cited
    with pytest.raises(ValueError, match="3 chunks"):
        load_citations(dump_citations(cited), 3)
    with pytest.raises(ValueError, match="schema_version"):
        load_citations(b'{"schema_version": 2, "citations": []}', 0)


@pytest.mark.parametrize("output_format", ["markdown", "text"])
def test_a_pdf_read_by_liteparse_names_its_pages(output_format: str) -> None:
    first = "Penguins live in Antarctica and swim very well. " * 12
    data = pdf([first, "", "Capybaras graze by the river."])
    options = LiteParseOptions(
        output_format, auto_ocr=False, ocr_language="eng", dpi=150, max_pages=10
    )
    out = worker.run(ParseJob(data, "a.pdf", "pdf", "liteparse", 10, 100_000, liteparse=options))
    text, starts = compose(out.pages, {})
    assert len(starts) == 3 and page_text(text, starts, 2) == ""
    assert page_text(text, starts, 3) == "Capybaras graze by the river."
    pieces = split_text(text, chunk_size=300, chunk_overlap=60)
    citations = cite(pieces, starts, paged=True)
    assert {c.page_start for c in citations} == {1, 3}
    for piece, c in zip(pieces, citations, strict=True):
        assert body(text, starts, c) == piece.text
    assert citations[-1].page_end == 3 and "Capybaras" in pieces[-1].text


def test_a_page_liteparse_markdown_empties_is_read_as_its_text() -> None:
    """LiteParse's markdown drops what it takes for running headers: lines at the same
    places on every page ("Page 1 ...", "Page 2 ...") left both pages empty. Each page
    comes back as its text instead."""
    doc: Any = mu.open()
    for n in (1, 2):
        page = doc.new_page()
        for i, line in enumerate(["heading line", "second line with words", "third line ends"]):
            page.insert_text((72, 72 + 20 * i), f"Page {n} {line}", fontsize=12)
    options = LiteParseOptions(
        "markdown", auto_ocr=False, ocr_language="eng", dpi=150, max_pages=10
    )
    job = ParseJob(doc.tobytes(), "a.pdf", "pdf", "liteparse", 10, 100_000, liteparse=options)
    out = worker.run(job)
    text, starts = compose(out.pages, {})
    assert page_text(text, starts, 1).startswith("Page 1 heading line")
    assert page_text(text, starts, 2).endswith("Page 2 third line ends")


def test_a_liteparse_pdf_is_cited_by_page_and_an_office_file_is_not() -> None:
    doc = extract_text(pdf(["Penguins swim.", "Capybaras graze."]), "a.pdf", "liteparse")
    assert doc.paged and doc.markdown and len(doc.page_starts) == 2
    _, citations = chunk_and_cite(doc, IngestionConfig(chunk_size=300, chunk_overlap=0))
    assert [(c.page_start, c.page_end) for c in citations] == [(1, 2)]
    # An office file's pages are its converter's layout, not the document's own.
    assert not any(is_paged(ext) for ext in ("docx", "xlsx", "pptx", "png"))


def test_a_long_document_is_cut_on_its_pages() -> None:
    pages, truncated = cut_pages(["abcd", "", "efgh", "ijkl"], 6)
    assert [p.text for p in pages] == ["abcd", "", "ef"] and truncated
    pages, truncated = cut_pages(["abcd", "efgh"], 8)
    assert [p.text for p in pages] == ["abcd", "efgh"] and not truncated
