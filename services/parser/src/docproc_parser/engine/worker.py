"""What runs inside the isolated parse child: one document in, its text (and images) out.

The fork server imports this module once (through ``forkserver_preload``); every child is a
fork of it, so PyMuPDF, the office parsers and LiteParse are already loaded.

Every function here takes and returns plain picklable values (``kbparsers.jobs``): the
job goes to the child and the result comes back through a pipe. The service names these
functions with ``jobs.InChild`` rather than importing this module.
"""

from __future__ import annotations

import sys

# PyMuPDF >= 1.26 imports its optional ONNX layout model on import when the package is
# installed; nothing here uses page.get_layout(), and the model would double the child's
# address space before the document is even opened. Only the fork server imports this
# module (service processes do not import PyMuPDF at all: tests/test_service_imports.py).
if "pymupdf" not in sys.modules:
    sys.modules.setdefault("pymupdf.layout", None)  # type: ignore[arg-type]

import logging  # noqa: E402
import tempfile  # noqa: E402
from datetime import date  # noqa: E402
from pathlib import Path  # noqa: E402

from docproc_common.faultpoints import crash_point  # noqa: E402
from docproc_common.parsing import ParseLimits, ParsingRefused, detect, parse  # noqa: E402
from docproc_common.parsing.errors import EncryptedDocument  # noqa: E402

from docproc_parser.engine import dates, errors  # noqa: E402
from docproc_parser.engine.jobs import PageText, ParseJob, WorkerOutput, cut_pages  # noqa: E402
from docproc_parser.engine.liteparse import parse_file  # noqa: E402
from docproc_parser.engine.pdf import extract_pdf, probe_pdf  # noqa: E402

log = logging.getLogger(__name__)


def run(job: ParseJob) -> WorkerOutput:
    crash_point("parser.child", job.filename)
    if job.route == "builtin":
        return _builtin(job)
    if job.route == "pymupdf":
        pdf = extract_pdf(
            job.data,
            max_pages=job.max_pages,
            max_chars=job.max_chars,
            describe_images=job.describe_images,
            max_images=job.max_images,
        )
        return WorkerOutput(
            pdf.pages,
            pdf.page_count,
            pdf.truncated,
            pdf.images,
            pdf.images_skipped,
            outline=pdf.outline,
        )
    return _liteparse(job)


def own_date(document: tuple[bytes, str]) -> date | None:
    """(data, extension) -> the date its metadata gives it, or None (``dates.own_date``)."""
    data, extension = document
    return dates.own_date(data, extension)


def probe(data: bytes) -> int:
    """A PDF's page count, refusing damaged and password-protected files (before paying a cloud parser)."""
    return probe_pdf(data)


def _builtin(job: ParseJob) -> WorkerOutput:
    """``.txt``, ``.md`` and ``.docx``: the shared parsing library, with its content checks."""
    try:
        detected = detect(job.data, job.filename, None)
        parsed = parse(job.data, detected, ParseLimits(max_chars=job.max_chars))
    except EncryptedDocument as exc:
        raise errors.encrypted() from exc
    except ParsingRefused as exc:
        reason = exc.message[:1].lower() + exc.message[1:].rstrip(".")
        raise errors.DocumentUnreadable(
            type(exc).__name__, f"{reason}; check the file, then retry the upload"
        ) from exc
    if parsed.text is None:
        raise errors.DocumentUnreadable(
            "UnreadableDocument",
            f"{(parsed.note or 'the file could not be read').rstrip('.')}; {errors.GENERIC_ADVICE}",
        )
    return WorkerOutput([PageText(parsed.text)], parsed.pages, parsed.truncated)


def _liteparse(job: ParseJob) -> WorkerOutput:
    assert job.liteparse is not None
    if job.extension == "pdf":
        probe_pdf(job.data)  # damaged / password-protected: the same refusal as PyMuPDF's
    with tempfile.TemporaryDirectory(prefix="docproc-liteparse-") as tmp:
        path = Path(tmp) / f"document.{job.extension}"  # LiteParse routes by the extension
        path.write_bytes(job.data)
        result = parse_file(path, job.extension, job.liteparse)
    pages, truncated = cut_pages(result.pages, job.max_chars)
    if result.page_count is not None and result.page_count > job.max_pages:
        truncated = True
    return WorkerOutput(
        pages,
        result.page_count,
        truncated,
        ocr=result.ocr,
        missing_languages=result.missing_languages,
    )
