"""OpenDocument text (``.odt``), presentations (``.odp``) and spreadsheets (``.ods``) via odfpy.

The zip container passes :func:`~.archives.check_container` first; odfpy parses its
XML with defusedxml and external entities off.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from odf import teletype
from odf.namespaces import PRESENTATIONNS, TABLENS, TEXTNS
from odf.opendocument import load

from .archives import check_container
from .budget import TextBudget
from .cells import SheetWriter
from .types import ParsedText, ParseLimits

_PARAGRAPHS = ((TEXTNS, "p"), (TEXTNS, "h"))
_MAX_REPEAT = 1 << 31


def _load(data: bytes, limits: ParseLimits, what: str) -> Any:
    check_container(data, limits.archive, what)
    try:
        return load(io.BytesIO(data))
    except Exception:
        return None


def _children(node: Any) -> list[Any]:
    return [child for child in node.childNodes if getattr(child, "qname", None) is not None]


def _paragraphs(node: Any) -> Iterator[str]:
    """Text of every paragraph and heading under ``node``, in document order."""
    stack = list(reversed(_children(node)))
    while stack:
        element = stack.pop()
        if element.qname in _PARAGRAPHS:
            yield teletype.extractText(element)
        else:
            stack.extend(reversed(_children(element)))


def parse_odt(data: bytes, limits: ParseLimits) -> ParsedText:
    document = _load(data, limits, "OpenDocument text document")
    if document is None:
        return ParsedText(text=None, note="The OpenDocument text document could not be read")
    budget = TextBudget(limits.max_chars)
    for paragraph in _paragraphs(document.text):
        if not budget.add(paragraph + "\n"):
            break
    return budget.result()


def parse_odp(data: bytes, limits: ParseLimits) -> ParsedText:
    document = _load(data, limits, "OpenDocument presentation")
    if document is None:
        return ParsedText(text=None, note="The OpenDocument presentation could not be read")
    budget = TextBudget(limits.max_chars)
    pages = [p for p in _children(document.presentation) if p.qname[1] == "page"]
    for number, page in enumerate(pages, start=1):
        parts = [f"## Slide {number}"]
        for child in _children(page):
            texts = [t for t in _paragraphs(child) if t.strip()]
            if child.qname == (PRESENTATIONNS, "notes"):
                if texts:
                    parts.append("Notes: " + "\n".join(texts))
            elif child.qname in _PARAGRAPHS:
                parts.append(teletype.extractText(child))
            else:
                parts.extend(texts)
        if not budget.add("\n".join(parts) + "\n\n"):
            break
    return budget.result(pages=len(pages))


def _repeat(element: Any, attribute: str) -> int:
    try:
        return max(1, min(int(element.attributes.get((TABLENS, attribute)) or 1), _MAX_REPEAT))
    except ValueError:
        return 1


def _rows(table: Any) -> Iterator[Any]:
    stack = list(reversed(_children(table)))
    while stack:
        element = stack.pop()
        if element.qname == (TABLENS, "table-row"):
            yield element
        elif element.qname[0] == TABLENS and element.qname[1] != "table":
            stack.extend(reversed(_children(element)))


def _cell_text(cell: Any) -> str:
    return " ".join(" ".join(_paragraphs(cell)).split())


def _row_cells(row: Any, writer: SheetWriter) -> list[str]:
    """The row's cells, runs of empty cells expanded only when a value follows them."""
    cells: list[str] = []
    pending_empty = 0
    for cell in _children(row):
        if cell.qname[0] != TABLENS or not cell.qname[1].endswith("table-cell"):
            continue
        repeat = _repeat(cell, "number-columns-repeated")
        text = _cell_text(cell)
        if not text:
            pending_empty += repeat
            continue
        wanted = pending_empty + repeat
        granted = writer.charge(wanted)
        cells.extend([""] * min(pending_empty, granted))
        cells.extend([text] * max(0, granted - pending_empty))
        pending_empty = 0
        if granted < wanted:
            return cells
    if not cells:
        writer.charge(1)
    return cells


def parse_ods(data: bytes, limits: ParseLimits) -> ParsedText:
    document = _load(data, limits, "OpenDocument spreadsheet")
    if document is None:
        return ParsedText(text=None, note="The OpenDocument spreadsheet could not be read")
    budget = TextBudget(limits.max_chars)
    writer = SheetWriter(budget, limits.max_cells)
    tables = [t for t in _children(document.spreadsheet) if t.qname == (TABLENS, "table")]
    for table in tables:
        if writer.stopped or not writer.sheet(str(table.attributes.get((TABLENS, "name")) or "")):
            break
        for row in _rows(table):
            cells = _row_cells(row, writer)
            if any(cells):
                for index in range(_repeat(row, "number-rows-repeated")):
                    if index and writer.charge(len(cells)) < len(cells):
                        break
                    if not writer.row(cells):
                        break
            if writer.stopped:
                break
    return budget.result(pages=len(tables))
