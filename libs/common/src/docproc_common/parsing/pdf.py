"""PDF text with PyMuPDF, page by page, spending the budget as it goes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pymupdf

from .budget import TextBudget, omitted_marker
from .errors import EncryptedDocument
from .types import ParsedText, ParseLimits


def _open(data: bytes) -> Any:
    doc: Any = pymupdf.open(stream=data, filetype="pdf")  # type: ignore[no-untyped-call]
    if doc.needs_pass and not doc.authenticate(""):
        doc.close()
        raise EncryptedDocument("The PDF is password-protected and cannot be read")
    return doc


def _pages(doc: Any, limits: ParseLimits) -> Iterator[str]:
    for index in range(min(doc.page_count, limits.max_pdf_pages)):
        page = doc.load_page(index)
        yield str(page.get_text()).replace("\x00", "")


def iter_pdf_pages(data: bytes, limits: ParseLimits) -> Iterator[str]:
    """Each page's text (NUL stripped), stopping after ``limits.max_pdf_pages`` pages.

    Raises EncryptedDocument for a password-protected PDF, and PyMuPDF's own error for
    bytes it cannot open.
    """
    doc = _open(data)
    try:
        yield from _pages(doc, limits)
    finally:
        doc.close()


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
    finally:
        doc.close()
