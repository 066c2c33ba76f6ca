"""The page map the parser records: how many chunks begin on each page, and which pages hold text."""

from __future__ import annotations

from docproc_common.ingestion import IngestionConfig
from docproc_common.splitters import Chunk
from docproc_parser.engine.processor import extract_text
from docproc_parser.handler import chunk, page_map
from parser_samples import pdf


def test_chunks_are_counted_on_the_page_they_begin_on() -> None:
    text = "aaaa\n\nbbbb\n\n"
    starts = (0, 6, 12)  # the third page is empty
    chunks = [Chunk("aaaa", 0, 4), Chunk("aa\n\nbb", 2, 8), Chunk("bbbb", 6, 10)]
    assert page_map(text, starts, chunks) == [
        {"chunks": 2, "has_text": True},
        {"chunks": 1, "has_text": True},
        {"chunks": 0, "has_text": False},
    ]


def test_no_pages_no_map() -> None:
    assert page_map("text", (), [Chunk("text", 0, 4)]) is None


def test_a_pdf_is_mapped_page_by_page() -> None:
    body = "Penguins live in Antarctica and swim very well. " * 40
    doc = extract_text(pdf([body, "", "Capybaras live in South America."]), "a.pdf", "pymupdf")
    pieces = chunk(doc.text, IngestionConfig(chunk_size=400, chunk_overlap=40))
    mapped = page_map(doc.text, doc.page_starts, pieces)
    assert mapped is not None and [p["has_text"] for p in mapped] == [True, False, True]
    first, empty, last = (int(str(p["chunks"])) for p in mapped)
    assert first > 1 and empty == 0 and last == 1
    assert first + last == len(pieces)
    assert "Capybaras" in pieces[-1].text and "Capybaras" not in pieces[first - 1].text
