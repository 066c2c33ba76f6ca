"""Knowledge-base parsing throughput: pages/s for a 200-page text PDF, PyMuPDF vs LiteParse.

Measures, on one generated text PDF (dense prose, a text layer on every page):

* each parser called in this process (the bare library cost),
* the same through ``DocumentProcessor`` as the parser service runs it: an isolated
  child per document (fork server, ``RLIMIT_AS``, deadline) and the result piped back,
* LiteParse with the collection defaults (markdown, ``auto_ocr``: the text-layer check
  runs first and finds nothing to OCR here),
* the isolation overhead alone: a no-op child, and a 1-page PDF in-process vs isolated,
* reading the document's date from its metadata, the second isolated call of every
  PDF or office document's extract.

Chunking throughput is ``bench/chunking.py``'s (docs/benchmarks.md, "Chunking").

    uv run python bench/parse.py [--pages 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pymupdf
from docproc_common.ingestion import IngestionConfig
from docproc_common.isolation import child_cpu_seconds
from docproc_parser.engine import liteparse
from docproc_parser.engine.jobs import OWN_DATE
from docproc_parser.engine.pdf import extract_pdf
from docproc_parser.engine.processor import KB_MAX_CHARS, DocumentProcessor, parse_isolation

mu: Any = pymupdf

WORDS = (
    "the capybara is the largest living rodent native to south america it lives in dense "
    "forests near bodies of water and is highly social living in groups of ten to twenty "
    "individuals its diet consists of grasses and aquatic plants as well as fruit and tree bark"
).split()


def text_pdf(pages: int) -> bytes:
    doc = mu.open()
    for n in range(pages):
        words = [WORDS[(n * 7 + i) % len(WORDS)] for i in range(520)]
        body = f"Section {n + 1}\n\n" + "\n\n".join(
            " ".join(words[i : i + 65]).capitalize() + "." for i in range(0, len(words), 65)
        )
        doc.new_page().insert_textbox(mu.Rect(50, 50, 560, 800), body, fontsize=9)
    data: bytes = doc.tobytes(deflate=True)
    return data


async def timed(fn: Callable[[], Awaitable[Any]], repeat: int) -> tuple[float, float, Any]:
    """Median wall seconds, median CPU seconds of this process (threads included), result."""
    runs, cpu, result = [], [], None
    for _ in range(repeat):
        started, cpu_started = time.perf_counter(), time.process_time()
        result = await fn()
        runs.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
    return statistics.median(runs), statistics.median(cpu), result


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    data = text_pdf(args.pages)
    one = text_pdf(1)
    tmp = Path(tempfile.mkdtemp(prefix="docproc-bench-parse-"))
    path = tmp / "document.pdf"
    path.write_bytes(data)
    rows: list[tuple[str, str, float, float | None, int]] = []

    def in_process(fn: Callable[[], Any]) -> Callable[[], Awaitable[Any]]:
        async def run() -> Any:
            return fn()

        return run

    def lite(fmt: str, ocr: bool) -> Callable[[], Any]:
        options = liteparse.LiteParseOptions(fmt, ocr, "eng", 150, 10_000)
        return lambda: liteparse.parse_file(path, "pdf", options)

    def complexity() -> Any:
        from liteparse import LiteParse

        pages = LiteParse(quiet=True, ocr_enabled=False).is_complex(str(path))
        assert not any(p.needs_ocr for p in pages), "the benchmark PDF would be OCR'd"
        return pages

    cases: list[tuple[str, str, Callable[[], Awaitable[Any]]]] = [
        (
            "PyMuPDF",
            "in process (library only)",
            in_process(
                lambda: extract_pdf(
                    data,
                    max_pages=10_000,
                    max_chars=KB_MAX_CHARS,
                    describe_images=False,
                    max_images=0,
                ),
            ),
        ),
        ("LiteParse", "in process, text, no OCR", in_process(lite("text", False))),
        ("LiteParse", "in process, markdown, no OCR", in_process(lite("markdown", False))),
        ("LiteParse", "auto_ocr's text-layer check alone (is_complex)", in_process(complexity)),
    ]
    isolation = parse_isolation(2048, 1)
    await isolation.warm_up()

    async def keys(_id: Any, _kind: str) -> str | None:
        return None

    async with httpx.AsyncClient() as http:
        processor = DocumentProcessor(isolation, http)
        for label, config in (
            ("PyMuPDF", IngestionConfig(parser="pymupdf", max_pages=10_000)),
            ("LiteParse", IngestionConfig(parser="liteparse", max_pages=10_000)),
        ):
            cases.append(
                (
                    label,
                    "isolated child (as the parser service runs it"
                    + (", markdown, auto_ocr" if label == "LiteParse" else "")
                    + ")",
                    lambda c=config: processor.extract(data, "d.pdf", c, secrets=keys),  # type: ignore[misc]
                )
            )
        for parser_name, how, fn in cases:
            await fn()  # warm
            seconds, cpu, result = await timed(fn, args.repeat)
            text = getattr(result, "text", None)
            if text is None and hasattr(result, "pages"):
                text = "\n".join(p.text for p in result.pages)
            text = text or ""
            isolated = how.startswith("isolated")
            rows.append((parser_name, how, seconds, None if isolated else cpu, len(text)))

        overhead_noop, parent_cpu, _ = await timed(
            lambda: isolation.run(child_cpu_seconds, None, timeout_s=60), 20
        )
        child_cpu = statistics.median(
            [await isolation.run(child_cpu_seconds, None, timeout_s=60) for _ in range(20)]
        )
        one_in, _, _ = await timed(
            in_process(
                lambda: extract_pdf(
                    one, max_pages=10, max_chars=KB_MAX_CHARS, describe_images=False, max_images=0
                ),
            ),
            20,
        )
        one_iso, _, _ = await timed(
            lambda: processor.extract(one, "one.pdf", IngestionConfig(), secrets=keys), 20
        )
        # part of every extract of a PDF or office file: its own isolated call
        own_date, _, _ = await timed(
            lambda: isolation.run(OWN_DATE, (data, "pdf"), timeout_s=60), 20
        )
    isolation.close()

    machine = platform.processor() or platform.machine()
    print(
        f"{args.pages}-page text PDF, {len(data) / 2**20:.1f} MiB; {os.cpu_count()} cores ({machine}), "
        f"Python {platform.python_version()}, PyMuPDF {mu.VersionBind}, median of {args.repeat}\n"
    )
    print("| parser | how | wall s | pages/s | CPU s | pages/CPU-s | chars |")
    print("|---|---|---|---|---|---|---|")
    for name, how, seconds, cpu_s, chars in rows:
        per_cpu = f"{args.pages / cpu_s:,.0f}" if cpu_s else "–"
        cpu_text = f"{cpu_s:.2f}" if cpu_s is not None else "(child)"
        print(
            f"| {name} | {how} | {seconds:.2f} | {args.pages / seconds:,.0f} | {cpu_text} "
            f"| {per_cpu} | {chars:,} |"
        )
    print()
    print(
        f"- no-op isolated child, round trip: {overhead_noop * 1000:.1f} ms wall; CPU "
        f"{child_cpu * 1000:.1f} ms in the child, {parent_cpu * 1000:.1f} ms in the caller "
        "(medians of 20)"
    )
    print(
        f"- 1-page PDF: {one_in * 1000:.1f} ms in process, {one_iso * 1000:.1f} ms isolated "
        f"(median of 20)"
    )
    print(
        f"- the {args.pages}-page PDF's date from its metadata (its own isolated call, part of "
        f"each isolated extract above): {own_date * 1000:.1f} ms wall (median of 20)"
    )
    print(f"- load average after the run: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
