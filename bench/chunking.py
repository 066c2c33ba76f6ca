"""Chunking throughput: docproc's three strategies and LangChain's recursive splitter.

Generates ~50 MB of prose-like text (markdown headings, hard-wrapped paragraphs, long
single-line paragraphs, lists, the odd code block), then times
``docproc_common.splitters.split_text`` with each strategy and, in the same run and on
the same text, LangChain's ``RecursiveCharacterTextSplitter`` with the same settings
(chunk_size 2500, chunk_overlap 200). LangChain is not a project dependency; bring it in
for the one run:

    uv run --with langchain-text-splitters python bench/chunking.py
    uv run --with langchain-text-splitters python bench/chunking.py --size-mb 50 --repeat 3
"""

from __future__ import annotations

import argparse
import functools
import logging
import platform
import random
import statistics
import string
import sys
import time
from collections.abc import Callable
from typing import TypeVar

from docproc_common.splitters import ChunkingStrategy, split_text

CHUNK_SIZE = 2500
CHUNK_OVERLAP = 200
T = TypeVar("T")

LANGCHAIN_HINT = "uv run --with langchain-text-splitters python bench/chunking.py"


def make_text(size: int, seed: int = 158) -> str:
    """About ``size`` characters of markdown-flavoured prose (ASCII, so bytes == chars)."""
    rng = random.Random(seed)
    vocabulary = [
        "".join(rng.choices(string.ascii_lowercase, k=rng.choice((1, 2, 3, 3, 4, 5, 6, 7, 8, 9))))
        for _ in range(20_000)
    ]

    def sentence() -> str:
        words = rng.choices(vocabulary, k=rng.randint(6, 24))
        return " ".join(words).capitalize() + rng.choice((".", ".", ".", "?", "!", ":"))

    def wrapped(paragraph: str, width: int) -> str:
        lines: list[str] = []
        start = 0
        while len(paragraph) - start > width:
            cut = paragraph.rfind(" ", start, start + width)
            if cut <= start:
                cut = start + width
            lines.append(paragraph[start:cut])
            start = cut + 1
        lines.append(paragraph[start:])
        return "\n".join(lines)

    parts: list[str] = []
    total = 0
    section = 0
    while total < size:
        section += 1
        level = 1 if section % 20 == 1 else rng.choice((2, 2, 3))
        block = ["#" * level + f" Section {section}: " + sentence()[:-1]]
        for _ in range(rng.randint(2, 12)):
            kind = rng.random()
            paragraph = " ".join(sentence() for _ in range(rng.randint(1, 12)))
            if kind < 0.55:  # hard-wrapped paragraph (e.g. text extracted from a PDF)
                block.append(wrapped(paragraph, rng.randint(60, 100)))
            elif kind < 0.85:  # one line per paragraph, sometimes longer than a chunk
                if rng.random() < 0.2:
                    paragraph = " ".join(sentence() for _ in range(rng.randint(30, 60)))
                block.append(paragraph)
            elif kind < 0.95:
                block.append("\n".join(f"- {sentence()}" for _ in range(rng.randint(2, 8))))
            else:
                code = "\n".join(
                    f"    {rng.choice(vocabulary)} = {rng.randint(0, 999)}  # {sentence()}"
                    for _ in range(rng.randint(3, 15))
                )
                block.append(f"```python\n{code}\n```")
        text = "\n\n".join(block) + "\n\n"
        parts.append(text)
        total += len(text)
    return "".join(parts)[:size]


def best_time(fn: Callable[[], list[T]], repeat: int) -> tuple[float, list[T]]:
    times: list[float] = []
    result: list[T] = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", type=float, default=50.0)
    parser.add_argument("--repeat", type=int, default=3, help="runs per splitter; best kept")
    args = parser.parse_args()

    # The fixed strategy warns for every line above chunk_size; that is expected here.
    logging.getLogger("docproc_common.splitters").setLevel(logging.ERROR)

    size = int(args.size_mb * 1_000_000)
    start = time.perf_counter()
    text = make_text(size)
    megabytes = len(text.encode()) / 1_000_000
    print(
        f"text: {megabytes:.1f} MB, {text.count(chr(10)):,} lines, "
        f"{text.count(chr(10) * 2):,} blank lines, "
        f"{sum(1 for line in text.split(chr(10)) if line.startswith('#')):,} headings "
        f"(generated in {time.perf_counter() - start:.1f} s)"
    )
    print(
        f"python {platform.python_version()}, chunk_size={CHUNK_SIZE}, "
        f"chunk_overlap={CHUNK_OVERLAP}, best of {args.repeat}\n"
    )

    rows: list[tuple[str, float, list[int]]] = []
    for strategy in ChunkingStrategy:
        seconds, chunks = best_time(
            functools.partial(
                split_text,
                text,
                chunk_size=CHUNK_SIZE,
                chunk_overlap=CHUNK_OVERLAP,
                strategy=strategy,
            ),
            args.repeat,
        )
        rows.append((f"docproc {strategy.value}", seconds, [len(c.text) for c in chunks]))

    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter
    except ImportError:
        langchain_seconds = None
        print(f"LangChain is not installed; to compare, run:\n    {LANGCHAIN_HINT}\n")
    else:
        import importlib.metadata

        version = importlib.metadata.version("langchain-text-splitters")
        splitter = RecursiveCharacterTextSplitter(
            chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP
        )
        langchain_seconds, pieces = best_time(lambda: splitter.split_text(text), args.repeat)
        ours_recursive = {
            c.text for c in split_text(text, chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP)
        }
        same = sum(1 for p in pieces if p in ours_recursive)
        print(
            f"LangChain chunks identical to a docproc recursive chunk: {same:,} of "
            f"{len(pieces):,} ({same / len(pieces):.1%})\n"
        )
        rows.append(
            (
                f"langchain {version} recursive",
                langchain_seconds,
                [len(p) for p in pieces],
            )
        )

    print("| splitter | seconds | MB/s | chunks | mean chars | max chars |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, seconds, lengths in rows:
        print(
            f"| {name} | {seconds:.2f} | {megabytes / seconds:.1f} | {len(lengths):,} "
            f"| {statistics.fmean(lengths):.0f} | {max(lengths):,} |"
        )
    if langchain_seconds is not None:
        ours = rows[0][1]
        print(
            f"\ndocproc recursive vs LangChain recursive: {langchain_seconds / ours:.1f}x "
            f"the throughput ({megabytes / ours:.1f} vs {megabytes / langchain_seconds:.1f} MB/s)"
        )
        if ours > langchain_seconds:
            print("WARNING: docproc's recursive splitter is slower than LangChain's")
            sys.exit(1)


if __name__ == "__main__":
    main()
