"""Excel workbooks: ``.xlsx``/``.xlsm`` streamed with openpyxl, legacy ``.xls`` with xlrd.

Every sheet is named and its rows are tab-separated. Cells are counted as they are
read (padding openpyxl adds included, at least one per row), so a sheet declaring a
huge range costs nothing more than the cells actually stored.
"""

from __future__ import annotations

import io
from typing import Any

import xlrd
from openpyxl.reader.excel import ExcelReader
from openpyxl.styles.stylesheet import apply_stylesheet
from openpyxl.worksheet._read_only import ReadOnlyWorksheet

from .archives import check_container
from .budget import TextBudget
from .cells import SheetWriter, cell_text
from .types import ParsedText, ParseLimits

# openpyxl in read-only mode parses worksheets incrementally while the cell budget is
# spent; shared strings, styles and the workbook part are loaded whole.
_STREAMED_PARTS = ("xl/worksheets/",)


class _StreamedSheet(ReadOnlyWorksheet):  # type: ignore[misc]
    """A read-only worksheet that skips openpyxl's size probe.

    ``ReadOnlyWorksheet.__init__`` looks for ``<dimension>``; when a sheet has none,
    openpyxl's probe parses the whole sheet before the first row is read. The declared
    dimension is never trusted anyway, so rows are read as stored, under the budget.
    """

    def _get_size(self) -> None:
        return None


def _open_workbook(data: bytes) -> tuple[Any, list[tuple[str, str]]]:
    """openpyxl's reader without its worksheet construction: (reader, [(name, part)])."""
    reader: Any = ExcelReader(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
    try:
        reader.read_manifest()
        reader.read_strings()
        reader.read_workbook()
        apply_stylesheet(reader.archive, reader.wb)
        sheets = [
            (str(sheet.name), str(rel.target))
            for sheet, rel in reader.parser.find_sheets()
            if rel.target in reader.valid_files and "chartsheet" not in rel.Type
        ]
    except BaseException:
        reader.archive.close()
        raise
    return reader, sheets


def _read_so_far(budget: TextBudget, what: str) -> ParsedText | None:
    """After a workbook failed mid-read: its note when nothing was read (the result), else None
    and what was read marked as cut short."""
    if not budget.text():
        return ParsedText(text=None, note=f"The {what} could not be read")
    budget.stop("[workbook truncated: the rest could not be read]")
    return None


def parse_xlsx(data: bytes, limits: ParseLimits) -> ParsedText:
    check_container(data, limits.archive, "Excel workbook", streamed=_STREAMED_PARTS)
    try:
        reader, sheets = _open_workbook(data)
    except Exception:
        return ParsedText(text=None, note="The Excel workbook could not be read")
    budget = TextBudget(limits.max_chars)
    writer = SheetWriter(budget, limits.max_cells)
    try:
        for name, part in sheets:
            if writer.stopped or not writer.sheet(name):
                break
            sheet = _StreamedSheet(reader.wb, name, part, reader.shared_strings)
            for values in sheet.iter_rows(values_only=True):
                granted = writer.charge(len(values))
                if not writer.row([cell_text(v) for v in values[:granted]]):
                    break
    except Exception:
        if (unread := _read_so_far(budget, "Excel workbook")) is not None:
            return unread
    finally:
        reader.archive.close()
    return budget.result(pages=len(sheets))


def _xls_value(cell: Any, datemode: int) -> str:
    if cell.ctype == xlrd.XL_CELL_DATE:
        try:
            return str(xlrd.xldate_as_datetime(cell.value, datemode).isoformat())
        except (ValueError, OverflowError, xlrd.xldate.XLDateError):
            return cell_text(cell.value)
    if cell.ctype == xlrd.XL_CELL_BOOLEAN:
        return cell_text(bool(cell.value))
    if cell.ctype == xlrd.XL_CELL_ERROR:
        return str(xlrd.error_text_from_code.get(cell.value, "#ERR"))
    return cell_text(cell.value)


def parse_xls(data: bytes, limits: ParseLimits) -> ParsedText:
    try:
        book: Any = xlrd.open_workbook(
            file_contents=data, on_demand=True, ragged_rows=True, logfile=io.StringIO()
        )
    except Exception:
        return ParsedText(text=None, note="The Excel 97-2003 workbook could not be read")
    budget = TextBudget(limits.max_chars)
    writer = SheetWriter(budget, limits.max_cells)
    try:
        for index in range(book.nsheets):
            sheet = book.sheet_by_index(index)
            if not writer.sheet(sheet.name):
                break
            for rowx in range(sheet.nrows):
                cells = sheet.row(rowx)
                granted = writer.charge(len(cells))
                if not writer.row([_xls_value(c, book.datemode) for c in cells[:granted]]):
                    break
            book.unload_sheet(index)
            if writer.stopped:
                break
    except Exception:
        if (unread := _read_so_far(budget, "Excel 97-2003 workbook")) is not None:
            return unread
    finally:
        book.release_resources()
    return budget.result(pages=book.nsheets)
