"""PDF text with PyMuPDF, page by page, spending the budget as it goes.

PyMuPDF is not thread-safe and parsing runs on a thread pool, so every call into it
here holds :data:`PYMUPDF_LOCK`, one page at a time (other code that uses PyMuPDF in
the same process should take the same lock). The lock is never held across a
``yield``: a slow consumer of :func:`iter_pdf_pages` does not block other parses.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pymupdf

from .budget import TextBudget, omitted_marker
from .errors import EncryptedDocument
from .types import ParsedText, ParseLimits

PYMUPDF_LOCK = threading.RLock()


def _open(data: bytes) -> Any:
    with PYMUPDF_LOCK:
        doc: Any = pymupdf.open(stream=data, filetype="pdf")  # type: ignore[no-untyped-call]
        if doc.needs_pass and not doc.authenticate(""):
            doc.close()
            raise EncryptedDocument("The PDF is password-protected and cannot be read")
        return doc


def _close(doc: Any) -> None:
    with PYMUPDF_LOCK:
        doc.close()


def _page_text(doc: Any, index: int) -> str:
    with PYMUPDF_LOCK:
        page = doc.load_page(index)
        try:
            return str(page.get_text()).replace("\x00", "")
        finally:
            del page


def _pages(doc: Any, limits: ParseLimits) -> Iterator[str]:
    for index in range(min(doc.page_count, limits.max_pdf_pages)):
        yield _page_text(doc, index)


def iter_pdf_pages(data: bytes, limits: ParseLimits) -> Iterator[str]:
    """Each page's text (NUL stripped), stopping after ``limits.max_pdf_pages`` pages.

    Raises EncryptedDocument for a password-protected PDF, and PyMuPDF's own error for
    bytes it cannot open.
    """
    doc = _open(data)
    try:
        yield from _pages(doc, limits)
    finally:
        _close(doc)


def parse_pdf(data: bytes, limits: ParseLimits) -> ParsedText:
    try:
        doc = _open(data)
    except EncryptedDocument as exc:
        return ParsedText(text=None, note=exc.message)
    except Exception:
        return ParsedText(text=None, note="The PDF could not be read")
    try:
        budget = TextBudget(limits.max_chars)
        page_count = doc.page_count
        for index, text in enumerate(_pages(doc, limits)):
            if not budget.add(("\n\n" if index else "") + text.strip("\n")):
                break
        if page_count > limits.max_pdf_pages and not budget.truncated:
            budget.stop(omitted_marker(f"page limit of {limits.max_pdf_pages} reached"))
        return budget.result(pages=page_count)
    except Exception:
        return ParsedText(text=None, note="The PDF could not be read")
    finally:
        _close(doc)
