"""The three chunking strategies: example tests per rule, then properties over random texts."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from docproc_common.splitters import (
    SPLITTER_VERSION,
    Chunk,
    ChunkingStrategy,
    markdown_tables,
    split_text,
)
from hypothesis import given, settings
from hypothesis import strategies as st

LOGGER = "docproc_common.splitters"


def texts(chunks: list[Chunk]) -> list[str]:
    return [c.text for c in chunks]


# -- settings -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chunk_size", "chunk_overlap"),
    [(0, 0), (-5, 0), (10, -1), (10, 10), (10, 11), (1, 1)],
)
def test_rejects_invalid_settings(chunk_size: int, chunk_overlap: int) -> None:
    with pytest.raises(ValueError, match="chunk_"):
        split_text("text", chunk_size=chunk_size, chunk_overlap=chunk_overlap)


# What each strategy cuts from one sample, at the current SPLITTER_VERSION. A change that
# moves a chunk boundary fails here: bump SPLITTER_VERSION (so rag-ingest re-chunks the
# operator's files cut by the earlier splitter) and record the new digests under it.
_VERSION_SAMPLE = (
    "# Guide\n\nIntro paragraph about otters and rivers.\n\n## Habits\n\n"
    + "Otters hold hands while they sleep so they do not drift apart. " * 6
    + "\n\n```\n# not a heading\n```\n\n### Food\n\nFish, crabs,\nclams and urchins.\n"
    + "averyveryverylongwordwithoutanyspace" * 4
    + "\n\n| Otter | Weight (kg) |\n|---|---:|\n"
    + "".join(f"| otter {i} | {10 + i} |\n" for i in range(12))
)
_CUTS = {
    1: {
        ChunkingStrategy.RECURSIVE: "ee966e6a2064fdd7",
        ChunkingStrategy.MARKDOWN: "f872f7978a280898",
        ChunkingStrategy.FIXED: "326f188e939a66fe",
    },
    2: {  # a table's rows open with its header; the sample gained a table
        ChunkingStrategy.RECURSIVE: "f48936de13108cfb",
        ChunkingStrategy.MARKDOWN: "fb345beac7342947",
        ChunkingStrategy.FIXED: "7143297cd98d84ff",
    },
}


@pytest.mark.parametrize("strategy", list(ChunkingStrategy))
def test_a_changed_cut_bumps_the_splitter_version(strategy: ChunkingStrategy) -> None:
    chunks = split_text(_VERSION_SAMPLE, chunk_size=120, chunk_overlap=30, strategy=strategy)
    cut = json.dumps([[c.text, c.start, c.end] for c in chunks]).encode()
    assert hashlib.sha256(cut).hexdigest()[:16] == _CUTS[SPLITTER_VERSION][strategy], (
        "the splitter cuts this text differently: bump SPLITTER_VERSION and record the digest"
    )


def test_rejects_unknown_strategy() -> None:
    with pytest.raises(ValueError, match="semantic"):
        split_text("text", strategy="semantic")  # type: ignore[arg-type]


def test_accepts_the_strategy_as_a_plain_string() -> None:
    assert split_text("a\nb", chunk_size=2, chunk_overlap=0, strategy="fixed") == split_text(  # type: ignore[arg-type]
        "a\nb", chunk_size=2, chunk_overlap=0, strategy=ChunkingStrategy.FIXED
    )


def test_defaults_are_2500_200_recursive() -> None:
    words = " ".join(f"w{i:04d}" for i in range(2000))  # 11999 characters, one line
    chunks = split_text(words)
    assert chunks == split_text(
        words, chunk_size=2500, chunk_overlap=200, strategy=ChunkingStrategy.RECURSIVE
    )
    assert max(len(c.text) for c in chunks) <= 2500
    assert max(len(c.text) for c in chunks) > 2400
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        assert 0 < prev.end - nxt.start <= 200


@pytest.mark.parametrize("strategy", list(ChunkingStrategy))
@pytest.mark.parametrize("text", ["", "   ", "\n\n\n", " \t\n \n\n  \u3000"])
def test_whitespace_only_text_has_no_chunks(strategy: ChunkingStrategy, text: str) -> None:
    assert split_text(text, chunk_size=2, chunk_overlap=1, strategy=strategy) == []


@pytest.mark.parametrize("strategy", list(ChunkingStrategy))
def test_short_text_is_one_stripped_chunk(strategy: ChunkingStrategy) -> None:
    text = "\n\n  Hello\nworld.  \n"
    assert split_text(text, strategy=strategy) == [Chunk("Hello\nworld.", 4, 16)]


# -- recursive ----------------------------------------------------------------------------


def test_recursive_splits_by_paragraph_first() -> None:
    text = "aaa\nbbb\n\nccc\nddd"
    # Both paragraphs fit (7 characters each) but not together: the cut is the blank line,
    # not the line breaks inside the paragraphs.
    chunks = split_text(text, chunk_size=12, chunk_overlap=0)
    assert texts(chunks) == ["aaa\nbbb", "ccc\nddd"]
    assert [(c.start, c.end) for c in chunks] == [(0, 7), (9, 16)]


def test_recursive_merges_small_paragraphs_up_to_chunk_size() -> None:
    text = "p1\n\np2\n\np3\n\np4\n\np5"
    assert texts(split_text(text, chunk_size=10, chunk_overlap=0)) == ["p1\n\np2\n\np3", "p4\n\np5"]


def test_recursive_splits_an_oversized_paragraph_by_line() -> None:
    text = "intro\n\nline one\nline two\nline three\n\noutro"
    chunks = split_text(text, chunk_size=20, chunk_overlap=0)
    assert texts(chunks) == ["intro", "line one\nline two", "line three", "outro"]


def test_recursive_splits_an_oversized_line_by_word() -> None:
    text = "alpha beta gamma delta epsilon\nzeta"
    chunks = split_text(text, chunk_size=12, chunk_overlap=0)
    assert texts(chunks) == ["alpha beta", "gamma delta", "epsilon", "zeta"]


def test_recursive_splits_an_oversized_word_by_character() -> None:
    text = "ab " + "x" * 25 + " cd"
    chunks = split_text(text, chunk_size=10, chunk_overlap=3)
    assert texts(chunks) == ["ab", "xxxxxxxxxx", "xxxxxxxxxx", "xxxxxxxxxx", "xxxx", "cd"]
    xs = chunks[1:5]
    assert [(c.start, c.end) for c in xs] == [(3, 13), (10, 20), (17, 27), (24, 28)]


def test_recursive_never_exceeds_chunk_size() -> None:
    text = ("word " * 50 + "\n") * 20 + "y" * 5000 + "\n\n" + "z " * 3000
    for chunk in split_text(text, chunk_size=97, chunk_overlap=30):
        assert len(chunk.text) <= 97


def test_recursive_never_warns(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        split_text("x" * 10_000, chunk_size=100, chunk_overlap=10)
    assert caplog.records == []


# -- overlap ------------------------------------------------------------------------------


def test_overlap_repeats_whole_pieces_up_to_the_setting() -> None:
    text = "aa bb cc dd ee ff gg"
    chunks = split_text(text, chunk_size=8, chunk_overlap=3)
    assert texts(chunks) == ["aa bb cc", "cc dd ee", "ee ff gg"]
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        assert prev.end - nxt.start == 2


def test_overlap_is_a_ceiling_often_less_than_the_setting() -> None:
    text = "aaaa bbbb cccc dddd"
    chunks = split_text(text, chunk_size=10, chunk_overlap=8)
    # After "aaaa bbbb" only " bbbb" can be repeated: with " cccc" it fills chunk_size.
    assert texts(chunks) == ["aaaa bbbb", "bbbb cccc", "cccc dddd"]
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        assert prev.end - nxt.start == 4 < 8


def test_overlap_is_a_ceiling_sometimes_nothing() -> None:
    # The next paragraph (9 characters with its separator) leaves no room to repeat any
    # whole piece of the previous chunk under chunk_size.
    chunks = split_text("aaa\nbbb\n\nccc\nddd", chunk_size=12, chunk_overlap=5)
    assert texts(chunks) == ["aaa\nbbb", "ccc\nddd"]
    assert chunks[0].end <= chunks[1].start


def test_overlap_never_reaches_into_a_piece_split_at_a_finer_level() -> None:
    text = "short one\n\n" + "w " * 30 + "\n\nshort two"
    chunks = split_text(text, chunk_size=20, chunk_overlap=10)
    assert chunks[0].text == "short one"
    assert chunks[-1].text == "short two"
    assert chunks[1].start > chunks[0].end
    assert chunks[-1].start > chunks[-2].end


# -- fixed --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "size", "expected"),
    [
        pytest.param(
            "line one\nline two\nline three\nline four",
            20,
            ["line one\nline two", "line three\nline four"],
            id="merges_whole_lines",
        ),
        pytest.param(
            "one two three\n\nfour",
            10,
            ["one two three", "four"],
            id="ignores_paragraphs_and_words",
        ),
    ],
)
def test_fixed(text: str, size: int, expected: list[str]) -> None:
    chunks = split_text(text, chunk_size=size, chunk_overlap=0, strategy=ChunkingStrategy.FIXED)
    assert texts(chunks) == expected


def test_fixed_emits_a_long_line_whole_and_warns(caplog: pytest.LogCaptureFixture) -> None:
    long_line = "x " * 2048  # a 4 KB line, with spaces but no line end
    text = f"before\n{long_line}\nafter"
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        chunks = split_text(
            text, chunk_size=2500, chunk_overlap=200, strategy=ChunkingStrategy.FIXED
        )
    assert texts(chunks) == ["before", long_line.rstrip(), "after"]
    assert len(chunks[1].text) == 4095 > 2500
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    message = caplog.records[0].getMessage()
    assert "4095" in message
    assert "2500" in message


def test_fixed_line_of_exactly_chunk_size_passes_silently(
    caplog: pytest.LogCaptureFixture,
) -> None:
    line = "y" * 100
    text = f"a\n{line}\nb\n{line}"
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        chunks = split_text(text, chunk_size=100, chunk_overlap=10, strategy="fixed")  # type: ignore[arg-type]
    assert texts(chunks) == ["a", line, "b", line]
    assert caplog.records == []


def test_fixed_warns_once_per_line_above_chunk_size(caplog: pytest.LogCaptureFixture) -> None:
    text = "\n".join(["z" * 101, "z" * 100, "z" * 150, "ok"])
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        chunks = split_text(text, chunk_size=100, chunk_overlap=0, strategy=ChunkingStrategy.FIXED)
    assert [len(c.text) for c in chunks] == [101, 100, 150, 2]
    assert len(caplog.records) == 2


# -- markdown -----------------------------------------------------------------------------


def test_markdown_splits_at_headings_and_keeps_the_heading_path() -> None:
    text = "# Title\nintro\n## One\nfirst\n## Two\nsecond\n# Other\nthird"
    chunks = split_text(text, chunk_size=100, chunk_overlap=10, strategy=ChunkingStrategy.MARKDOWN)
    assert texts(chunks) == [
        "# Title\nintro",
        "# Title\n## One\nfirst",
        "# Title\n## Two\nsecond",
        "# Other\nthird",
    ]
    for chunk in chunks:
        assert chunk.text.endswith(text[chunk.start : chunk.end])


def test_markdown_preamble_has_no_prefix() -> None:
    text = "preamble text\n# Heading\nbody"
    chunks = split_text(text, strategy=ChunkingStrategy.MARKDOWN)
    assert texts(chunks) == ["preamble text", "# Heading\nbody"]


def test_markdown_bounds_a_50kb_section() -> None:
    section = "\n\n".join(
        " ".join(f"word{i}" for i in range(p * 40, p * 40 + 40)) for p in range(200)
    )
    assert len(section) > 50_000
    text = f"# Guide\n## Install\n{section}\n## Next\nend"
    chunks = split_text(text, chunk_size=2500, chunk_overlap=200, strategy="markdown")  # type: ignore[arg-type]
    body_chunks = [c for c in chunks if c.text.startswith("# Guide\n## Install\n")]
    assert len(body_chunks) > 20
    assert all(len(c.text) <= 2500 for c in chunks)
    assert chunks[-1].text == "# Guide\n## Next\nend"
    # Each chunk of the section carries the heading path and a slice of the section.
    prefix = "# Guide\n## Install\n"
    for chunk in body_chunks:
        assert chunk.text == prefix + text[chunk.start : chunk.end]


def test_markdown_overlap_inside_a_section() -> None:
    text = "# H\n" + " ".join(["word"] * 40)
    chunks = split_text(text, chunk_size=30, chunk_overlap=10, strategy=ChunkingStrategy.MARKDOWN)
    assert len(chunks) > 2
    assert all(c.text.startswith("# H\nword") and len(c.text) <= 30 for c in chunks)
    assert all(0 < p.end - n.start <= 10 for p, n in zip(chunks, chunks[1:], strict=False))


def test_markdown_headings_without_text_are_carried_or_get_their_own_chunk() -> None:
    text = "# A\n## B\n## C\ntext c\n### D\n"
    chunks = split_text(text, chunk_size=100, chunk_overlap=0, strategy=ChunkingStrategy.MARKDOWN)
    # "# A" is carried by the prefixes; "## B" (followed by a sibling) and "### D" (at the
    # end) are carried by no chunk, so they get one of their own.
    assert texts(chunks) == ["# A\n## B", "# A\n## C\ntext c", "# A\n## C\n### D"]


def test_markdown_a_heading_chunk_of_its_own_carries_its_ancestors() -> None:
    text = "# A\n## B\n# C\ntext"
    chunks = split_text(text, chunk_size=100, chunk_overlap=0, strategy=ChunkingStrategy.MARKDOWN)
    # "# A" is carried by the chunk of "## B": it gets no chunk of its own.
    assert texts(chunks) == ["# A\n## B", "# C\ntext"]


def test_markdown_a_fence_with_an_info_string_does_not_close_a_code_block() -> None:
    text = "# Real\n```\ncode\n```python\n# still code\n```\n# Next\nafter"
    chunks = split_text(text, chunk_size=1000, chunk_overlap=0, strategy=ChunkingStrategy.MARKDOWN)
    assert texts(chunks) == [text[: text.index("\n# Next")], "# Next\nafter"]


def test_markdown_ignores_hashes_in_code_blocks_and_non_headings() -> None:
    text = (
        "# Real\nbefore\n```python\n# a comment\nx = 1\n```\n"
        "#hashtag is not a heading\n####### nor seven hashes\n~~~\n## inside tilde\n~~~\nafter"
    )
    chunks = split_text(text, chunk_size=1000, chunk_overlap=0, strategy=ChunkingStrategy.MARKDOWN)
    assert len(chunks) == 1
    assert chunks[0].text == text


def test_markdown_heading_prefix_counts_within_chunk_size() -> None:
    text = "# Chapter\n## Section\n" + "abc " * 100
    chunks = split_text(text, chunk_size=50, chunk_overlap=0, strategy=ChunkingStrategy.MARKDOWN)
    # The 21-character prefix leaves 29 characters for the body: seven "abc" per chunk.
    assert all(c.text == "# Chapter\n## Section\n" + " ".join(["abc"] * 7) for c in chunks[:-1])
    assert len(chunks) == 15


def test_markdown_drops_outer_headings_when_the_path_takes_over_half() -> None:
    text = "# A very long top level title\n## Short\n" + "abc " * 30
    chunks = split_text(text, chunk_size=40, chunk_overlap=0, strategy=ChunkingStrategy.MARKDOWN)
    # The title no longer fits in the prefix of "## Short", so it gets a chunk of its own.
    assert chunks[0].text == "# A very long top level title"
    assert all(c.text.startswith("## Short\nabc") and len(c.text) <= 40 for c in chunks[1:])


def test_markdown_splits_an_overlong_heading_as_body() -> None:
    heading = "# " + "long " * 10
    text = heading + "\nbody text"
    chunks = split_text(text, chunk_size=20, chunk_overlap=0, strategy=ChunkingStrategy.MARKDOWN)
    assert all(len(c.text) <= 20 for c in chunks)
    assert chunks[0].text.startswith("# long")
    assert chunks[0].start == 0
    assert chunks[-1].text == "body text"


def test_markdown_without_headings_is_recursive() -> None:
    text = "para one\nline\n\npara two is longer than the rest of it\n\nthree"
    for size in (5, 10, 17, 40):
        assert split_text(
            text, chunk_size=size, chunk_overlap=2, strategy=ChunkingStrategy.MARKDOWN
        ) == split_text(text, chunk_size=size, chunk_overlap=2)


# -- properties ---------------------------------------------------------------------------


@contextmanager
def captured_warnings() -> Iterator[list[logging.LogRecord]]:
    """Warnings of the splitter's logger (caplog is function-scoped, hypothesis is not)."""
    records: list[logging.LogRecord] = []

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger(LOGGER)
    handler = Handler(logging.WARNING)
    logger.addHandler(handler)
    try:
        yield records
    finally:
        logger.removeHandler(handler)


TOKENS = [
    "a",
    "bb",
    "word",
    "longerword",
    "x" * 40,
    " ",
    "  ",
    "\t",
    "\n",
    "\n\n",
    "\n\n\n",
    " \n",
    "\u00a0",
    "\u3000",
    "é",
    "# ",
    "## ",
    "### ",
    "#",
    "```",
    "~~~",
    "`",
    "\r\n",
    "| a | b |",
    "|---|---|",
    "|",
    "-",
]

text_strategy = st.one_of(
    st.lists(st.sampled_from(TOKENS), max_size=120).map("".join),
    st.text(alphabet=st.sampled_from("ab #\n\t`é\u2028\x1f"), max_size=300),
    st.text(max_size=200),
)


def heading_lines(text: str) -> set[str]:
    """Every line of ``text`` that could be a heading, stripped."""
    return {line.strip() for line in text.split("\n") if line.lstrip(" ").startswith("#")}


def prefix_of(chunk: Chunk, source: str) -> str:
    body = source[chunk.start : chunk.end]
    assert chunk.text.endswith(body)
    return chunk.text[: len(chunk.text) - len(body)]


@settings(max_examples=200, deadline=None)
@given(
    text=text_strategy,
    chunk_size=st.integers(min_value=1, max_value=120),
    overlap_fraction=st.floats(min_value=0, max_value=1, exclude_max=True),
    strategy=st.sampled_from(list(ChunkingStrategy)),
)
def test_properties(
    text: str, chunk_size: int, overlap_fraction: float, strategy: ChunkingStrategy
) -> None:
    chunk_overlap = int(chunk_size * overlap_fraction)
    with captured_warnings() as warnings:
        chunks = split_text(
            text, chunk_size=chunk_size, chunk_overlap=chunk_overlap, strategy=strategy
        )

    # Every chunk is non-empty, stripped, and is `prefix + text[start:end]`, where the
    # prefix is, for markdown, heading lines of the source that come before the chunk, one
    # per line, then (any strategy) the header rows of the table whose rows it opens in.
    headings = heading_lines(text)
    tables = markdown_tables(text)
    prefix_lines: set[str] = set()
    for chunk in chunks:
        assert chunk.text.strip(), chunk
        assert chunk.text == chunk.text.strip()
        assert 0 <= chunk.start < chunk.end <= len(text)
        prefix = prefix_of(chunk, text)
        opened = [t for t in tables if t.rows_start <= chunk.start < t.rows_end]
        if opened and prefix.endswith(opened[0].header):
            prefix = prefix[: len(prefix) - len(opened[0].header)]
        if strategy is not ChunkingStrategy.MARKDOWN:
            assert prefix == ""
            continue
        if prefix:
            assert prefix.endswith("\n")
            lines = prefix[:-1].split("\n")
            assert all(line in headings for line in lines), (prefix, headings)
            assert all(line in heading_lines(text[: chunk.start]) for line in lines)
            prefix_lines.update(lines)

    # (1) Size: recursive and markdown never exceed chunk_size (the markdown prefix
    # included). fixed does only for a single line, which has no separator left, and then
    # it warns, once per such chunk.
    oversized = [c for c in chunks if len(c.text) > chunk_size]
    if strategy is ChunkingStrategy.FIXED:
        assert all("\n" not in c.text for c in oversized)
        assert len(warnings) == len(oversized)
    else:
        assert oversized == []
        assert warnings == []

    # (2) Order and coverage: spans are non-decreasing and together cover every
    # non-whitespace character; for markdown, a character outside every span is on a
    # heading line that some chunk carries in its prefix.
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        assert prev.start <= nxt.start
        assert prev.end < nxt.end  # no chunk lies entirely inside the previous one
    delta = [0] * (len(text) + 1)
    for chunk in chunks:
        delta[chunk.start] += 1
        delta[chunk.end] -= 1
    depth = 0
    line_start = 0
    for i, char in enumerate(text):
        depth += delta[i]
        if char == "\n":
            line_start = i + 1
        if depth or char.isspace():
            continue
        assert strategy is ChunkingStrategy.MARKDOWN, (i, char)
        line_end = text.find("\n", i)
        line = text[line_start : line_end if line_end != -1 else len(text)].strip()
        assert line in prefix_lines, (i, line)

    # (3) Overlap: consecutive chunks share at most chunk_overlap characters.
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        assert prev.end - nxt.start <= chunk_overlap


@settings(max_examples=200, deadline=None)
@given(
    text=text_strategy,
    chunk_size=st.integers(min_value=1, max_value=60),
    overlap_fraction=st.floats(min_value=0, max_value=1, exclude_max=True),
)
def test_markdown_without_headings_equals_recursive(
    text: str, chunk_size: int, overlap_fraction: float
) -> None:
    text = text.replace("#", "")
    chunk_overlap = int(chunk_size * overlap_fraction)
    assert split_text(
        text,
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        strategy=ChunkingStrategy.MARKDOWN,
    ) == split_text(text, chunk_size=chunk_size, chunk_overlap=chunk_overlap)


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.text(alphabet="ab \t", max_size=30), max_size=30),
    chunk_size=st.integers(min_value=1, max_value=40),
)
def test_fixed_only_cuts_at_line_ends(lines: list[str], chunk_size: int) -> None:
    text = "\n".join(lines)
    chunks = split_text(text, chunk_size=chunk_size, chunk_overlap=0, strategy="fixed")  # type: ignore[arg-type]
    for chunk in chunks:
        # A chunk starts at the beginning of a line (after its leading blanks) and ends at
        # the end of a line (before its trailing blanks).
        assert text[: chunk.start].rstrip(" \t") in ("",) or text[: chunk.start].rstrip(
            " \t"
        ).endswith("\n")
        rest = text[chunk.end :].lstrip(" \t")
        assert rest == "" or rest.startswith("\n")


# -- tables -------------------------------------------------------------------------------

TABLE_HEADER = "| Error code | Condition name |\n|---|:---|\n"
TABLE = TABLE_HEADER + "".join(f"| 22{i:03d} | condition_{i} |\n" for i in range(60))


@pytest.mark.parametrize("strategy", list(ChunkingStrategy))
def test_every_chunk_of_a_long_table_opens_with_its_header(strategy: ChunkingStrategy) -> None:
    text = "Intro paragraph.\n\n" + TABLE + "\nA closing paragraph.\n"
    chunks = split_text(text, chunk_size=200, chunk_overlap=50, strategy=strategy)
    rows = [c for c in chunks if "condition_" in c.text]
    assert len(rows) > 3
    assert TABLE_HEADER in rows[0].text
    for chunk in rows[1:]:
        assert chunk.text.startswith(TABLE_HEADER), chunk.text
    assert all(len(c.text) <= 200 for c in chunks)
    # each row is in exactly one chunk: the header says what they are, no row repeats
    for i in range(60):
        assert sum(f"| 22{i:03d} |" in c.text for c in chunks) == 1, i
    # the offsets are the rows' own, after the header the chunk repeats
    for chunk in rows[1:]:
        assert chunk.text == TABLE_HEADER + text[chunk.start : chunk.end]


def test_the_header_follows_the_heading_path() -> None:
    text = "# Catalog\n## Errors\n\n" + TABLE
    chunks = split_text(text, chunk_size=200, chunk_overlap=0, strategy=ChunkingStrategy.MARKDOWN)
    assert len(chunks) > 3
    for chunk in chunks[1:]:
        assert chunk.text.startswith("# Catalog\n## Errors\n" + TABLE_HEADER), chunk.text
        assert len(chunk.text) <= 200


def test_a_header_over_half_the_chunk_is_not_repeated() -> None:
    half = 2 * len(TABLE_HEADER)
    chunks = split_text(TABLE, chunk_size=half, chunk_overlap=0)
    assert all(c.text.startswith(TABLE_HEADER) for c in chunks)
    chunks = split_text(TABLE, chunk_size=half - 1, chunk_overlap=0)
    assert chunks[0].text.startswith(TABLE_HEADER)
    assert not any(c.text.startswith(TABLE_HEADER) for c in chunks[1:])


def test_a_table_that_fits_and_lines_that_are_no_table_cut_as_before() -> None:
    short = "Before.\n\n" + TABLE_HEADER + "| 1 | a |\n| 2 | b |\n\nAfter.\n"
    assert [c.text for c in split_text(short, chunk_size=200, chunk_overlap=0)] == [short.strip()]
    pipes = "".join(f"a | b | line {i}\n" for i in range(40))  # no delimiter row
    no_header = "|---|---|\n" + pipes  # a delimiter row with no header above it
    for text in (pipes, no_header):
        assert markdown_tables(text) == []
        chunks = split_text(text, chunk_size=100, chunk_overlap=20)
        assert all(c.text == text[c.start : c.end] for c in chunks)


def test_markdown_tables_finds_each_table_and_its_rows() -> None:
    text = "x\n" + TABLE + "\nnot a row\n| A |\n| --- |\n| 1 |\n|2|\n"
    first, second = markdown_tables(text)
    assert first.header == TABLE_HEADER
    assert text[first.rows_start : first.rows_end] == TABLE[len(TABLE_HEADER) :]
    assert second.header == "| A |\n| --- |\n"
    assert text[second.rows_start : second.rows_end] == "| 1 |\n|2|\n"
