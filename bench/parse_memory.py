"""Peak memory of parsing ~10 MB uploads (xlsx, docx, PDF) with docproc_common.parsing.

Each case runs in a fresh subprocess so ``ru_maxrss`` (the process's peak resident set)
belongs to that one parse. The baseline is the peak after importing the parsers and
reading the file; the delta is what the parse itself added on top.

    uv run python bench/parse_memory.py            # generate (cached) files, run, print table
    uv run python bench/parse_memory.py --size-mb 10 --cache /tmp/docproc-parse-bench
"""

from __future__ import annotations

import argparse
import io
import json
import random
import resource
import string
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MODES = {
    "default limits": {},
    "unbounded": {"max_chars": 10**12, "max_pdf_pages": 10**9, "max_cells": 10**12},
}


def _words(rng: random.Random) -> list[str]:
    return ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(5000)]


def make_xlsx(target: int, rng: random.Random) -> bytes:
    import openpyxl

    words = _words(rng)
    rows = max(1000, target // 40)  # ~40 compressed bytes per 4-cell row
    workbook = openpyxl.Workbook(write_only=True)
    sheet = workbook.create_sheet("Data")
    for row in range(rows):
        sheet.append([row, rng.random(), rng.choice(words), rng.randint(0, 10**6)])
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def make_docx(target: int, rng: random.Random) -> bytes:
    import docx

    words = _words(rng)
    document = docx.Document()
    for _ in range(max(100, target // 210)):  # ~210 compressed bytes per 60-word paragraph
        document.add_paragraph(" ".join(rng.choices(words, k=60)))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_pdf(target: int, rng: random.Random) -> bytes:
    import pymupdf

    words = _words(rng)
    document: Any = pymupdf.open()  # type: ignore[no-untyped-call]
    rect = pymupdf.Rect(36, 36, 576, 800)  # type: ignore[no-untyped-call]
    for _ in range(max(10, target // 3400)):  # ~3.4 KB per page of 500 words
        page = document.new_page()
        page.insert_textbox(rect, " ".join(rng.choices(words, k=500)), fontsize=6)
    return bytes(document.tobytes(garbage=1, deflate=True))


MAKERS: dict[str, Callable[[int, random.Random], bytes]] = {
    "xlsx": make_xlsx,
    "docx": make_docx,
    "pdf": make_pdf,
}


def child(path: Path, mode: str) -> None:
    """Runs in the subprocess: parse one file and print JSON figures."""
    from docproc_common.parsing import ParseLimits, detect, parse

    data = path.read_bytes()
    limits = ParseLimits(**MODES[mode])  # type: ignore[arg-type]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    result = parse(data, detect(data, path.name, None), limits)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "baseline_kib": before,
                "peak_kib": after,
                "seconds": elapsed,
                "chars": len(result.text or ""),
                "truncated": result.truncated,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", type=float, default=10)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/docproc-parse-bench"))
    parser.add_argument("--child", nargs=2, metavar=("PATH", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), args.child[1])
        return
    target = int(args.size_mb * 2**20)
    args.cache.mkdir(parents=True, exist_ok=True)
    print(
        "| format | file | limits | text chars | truncated | parse s | baseline MiB | peak MiB | parse added MiB |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for fmt, make in MAKERS.items():
        path = args.cache / f"bench-{args.size_mb:g}mb.{fmt}"
        if not path.exists():
            path.write_bytes(make(target, random.Random(7)))
        size = path.stat().st_size / 2**20
        for mode in MODES:
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(path), mode],
                check=True,
                capture_output=True,
                text=True,
            )
            row = json.loads(out.stdout.strip().splitlines()[-1])
            base, peak = row["baseline_kib"] / 1024, row["peak_kib"] / 1024
            print(
                f"| {fmt} | {size:.1f} MiB | {mode} | {row['chars']:,} | {row['truncated']} | "
                f"{row['seconds']:.2f} | {base:.0f} | {peak:.0f} | {peak - base:.0f} |"
            )


if __name__ == "__main__":
    main()
