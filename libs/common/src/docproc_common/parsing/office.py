"""Word (.docx) and PowerPoint (.pptx) text, after the zip container passed its checks.

python-docx and python-pptx parse XML with lxml and ``resolve_entities=False``; on top
of that :func:`~.archives.check_container` refuses any part declaring a DTD or entities.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import docx
import pptx
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph
from pptx.shapes.group import GroupShape

from .archives import check_container
from .budget import TextBudget
from .types import ParsedText, ParseLimits


def _cell_texts(cells: Iterable[Any]) -> list[str]:
    seen: set[int] = set()
    texts: list[str] = []
    for cell in cells:
        key = id(getattr(cell, "_tc", cell))
        if key in seen:  # a merged cell appears once per grid column it spans
            continue
        seen.add(key)
        texts.append(" ".join(str(cell.text).split()))
    return texts


def _cells_line(cells: Iterable[Any]) -> str:
    return "\t".join(_cell_texts(cells))


def _pipe_row(texts: list[str]) -> str:
    return "| " + " | ".join(t.replace("|", "\\|") for t in texts) + " |"


def _marked_header(row: Any) -> bool:
    """Whether Word marks ``row`` as the table's header row ("Repeat as header row at the
    top of each page", ``w:tblHeader``; what accessible documents set)."""
    properties = row._tr.trPr
    return properties is not None and properties.find(qn("w:tblHeader")) is not None


def _docx_table(table: Table) -> Iterator[str]:
    """A table whose first row Word marks as its header, as a markdown pipe table between
    blank lines (so the chunking repeats the header in the chunks that continue it,
    docs/parsing.md "Tables"); any other table as a tab-separated line a row."""
    rows = list(table.rows)
    if len(rows) < 2 or not _marked_header(rows[0]):
        yield from (_cells_line(row.cells) for row in rows)
        return
    header = _cell_texts(rows[0].cells)
    yield ""
    yield _pipe_row(header)
    yield "|" + "---|" * len(header)
    yield from (_pipe_row(_cell_texts(row.cells)) for row in rows[1:])
    yield ""


def _docx_blocks(document: Any) -> Iterator[str]:
    body = document.element.body
    for child in body.iterchildren():
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "p":
            yield Paragraph(child, document).text
        elif tag == "tbl":
            yield from _docx_table(Table(child, document))


def _open(data: bytes, limits: ParseLimits, what: str, load: Callable[[io.BytesIO], Any]) -> Any:
    """``load`` over a checked container, or None when the library cannot read it."""
    check_container(data, limits.archive, what)
    try:
        return load(io.BytesIO(data))
    except Exception:
        return None


def parse_docx(data: bytes, limits: ParseLimits) -> ParsedText:
    document = _open(data, limits, "Word document", docx.Document)
    if document is None:
        return ParsedText(text=None, note="The Word document could not be read")
    budget = TextBudget(limits.max_chars)
    for block in _docx_blocks(document):
        if not budget.add(block + "\n"):
            break
    return budget.result()


def _shape_texts(shapes: Iterable[Any]) -> Iterator[str]:
    for shape in shapes:
        if isinstance(shape, GroupShape):
            yield from _shape_texts(shape.shapes)
            continue
        if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            text = shape.text_frame.text
            if text.strip():
                yield text
        if getattr(shape, "has_table", False) and shape.has_table:
            for row in shape.table.rows:
                yield _cells_line(row.cells)


def parse_pptx(data: bytes, limits: ParseLimits) -> ParsedText:
    presentation = _open(data, limits, "PowerPoint presentation", pptx.Presentation)
    if presentation is None:
        return ParsedText(text=None, note="The PowerPoint presentation could not be read")
    budget = TextBudget(limits.max_chars)
    slides = list(presentation.slides)
    for number, slide in enumerate(slides, start=1):
        parts = [f"## Slide {number}", *_shape_texts(slide.shapes)]
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            if notes is not None and notes.text.strip():
                parts.append(f"Notes: {notes.text}")
        if not budget.add("\n".join(parts) + "\n\n"):
            break
    return budget.result(pages=len(slides))
