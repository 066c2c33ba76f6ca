"""Small real documents for tests, built in memory: a PDF of text pages, a Word file of
paragraphs."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import docx
import pymupdf


def make_pdf(pages: Sequence[str]) -> bytes:
    document: Any = pymupdf.open()  # type: ignore[no-untyped-call]
    for text in pages:
        page = document.new_page()
        page.insert_text((72, 72), text)
    return bytes(document.tobytes())


def make_docx(paragraphs: Sequence[str]) -> bytes:
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()
