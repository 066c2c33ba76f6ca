"""Excel workbooks: ``.xlsx``/``.xlsm`` streamed with openpyxl, legacy ``.xls`` with xlrd.

Every sheet is named and its rows are tab-separated. Cells are counted as they are
read (padding openpyxl adds included, at least one per row), so a sheet declaring a
huge range costs nothing more than the cells actually stored.
"""

from __future__ import annotations

import io
from typing import Any

import openpyxl
import xlrd

from .archives import check_container
from .budget import TextBudget
from .cells import SheetWriter, cell_text
from .types import ParsedText, ParseLimits


def parse_xlsx(data: bytes, limits: ParseLimits) -> ParsedText:
    check_container(data, limits.archive, "Excel workbook")
    try:
        workbook: Any = openpyxl.load_workbook(
            io.BytesIO(data), read_only=True, data_only=True, keep_links=False
        )
    except Exception:
        return ParsedText(text=None, note="The Excel workbook could not be read")
    budget = TextBudget(limits.max_chars)
    writer = SheetWriter(budget, limits.max_cells)
    try:
        for sheet in workbook.worksheets:
            if writer.stopped or not writer.sheet(sheet.title):
                break
            if not hasattr(sheet, "iter_rows"):  # chartsheets hold no cells
                continue
            sheet.reset_dimensions()  # never trust the declared <dimension>
            for values in sheet.iter_rows(values_only=True):
                granted = writer.charge(len(values))
                if not writer.row([cell_text(v) for v in values[:granted]]):
                    break
    except Exception:
        if not budget.text():
            return ParsedText(text=None, note="The Excel workbook could not be read")
        budget.stop("[workbook truncated: the rest could not be read]")
    finally:
        workbook.close()
    return budget.result(pages=len(workbook.sheetnames))


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
        if not budget.text():
            return ParsedText(text=None, note="The Excel 97-2003 workbook could not be read")
        budget.stop("[workbook truncated: the rest could not be read]")
    finally:
        book.release_resources()
    return budget.result(pages=book.nsheets)
