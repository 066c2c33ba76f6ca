"""docproc_common.parsing: detection and text extraction, on inputs generated here."""

from __future__ import annotations

import io

import docx
import pymupdf
import pytest
from docproc_common.parsing import (
    ContentMismatch,
    FileType,
    ParseLimits,
    UnsupportedType,
    detect,
    parse,
    preview,
)


def make_pdf(pages: list[str]) -> bytes:
    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page()
        page.insert_text((72, 72), text)
    return bytes(doc.tobytes())


def make_docx(paragraphs: list[str], table: list[list[str]] | None = None) -> bytes:
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_txt_and_md() -> None:
    detected = detect(b"hello world\nline 2", "a.txt", "text/plain")
    assert detected.file_type is FileType.TEXT
    parsed = parse(b"hello\x00 world\nline 2", detected)
    assert parsed.text == "hello world\nline 2"
    md = detect("# Título\n".encode(), "README.MD", None)
    assert (md.mime_type, md.extension) == ("text/markdown", "md")
    assert parse("# Título\n".encode(), md).text == "# Título\n"


def test_pdf_pages() -> None:
    data = make_pdf(["first page", "second page"])
    detected = detect(data, "r.pdf", "application/pdf")
    parsed = parse(data, detected)
    assert parsed.pages == 2
    assert parsed.text is not None
    assert "first page" in parsed.text
    assert "second page" in parsed.text


def test_docx_paragraphs_and_tables() -> None:
    data = make_docx(["Intro"], [["a", "b"], ["c", "d"]])
    detected = detect(data, "r.docx", None)
    assert detected.file_type is FileType.DOCX
    assert parse(data, detected).text == "Intro\na\tb\nc\td\n"


def test_budget_is_spent_inside_pdf() -> None:
    data = make_pdf([f"page {i} " + "x" * 50 for i in range(30)])
    parsed = parse(data, detect(data, "r.pdf", None), ParseLimits(max_chars=200))
    assert parsed.truncated
    assert parsed.text is not None
    assert parsed.text.endswith("[... the rest of the document was omitted: text limit reached]")


def test_spoofed_types() -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
    with pytest.raises(ContentMismatch):
        detect(png, "doc.pdf", "application/pdf")
    with pytest.raises(UnsupportedType):
        detect(b"MZ\x90\x00", "x.exe", "application/x-msdownload")


def test_preview() -> None:
    assert preview(None) is None
    assert preview("") is None
    assert preview("a\nb\nc\nd") == "a\nb\nc"
    assert preview("x" * 1000) == "x" * 240
