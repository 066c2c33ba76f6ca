"""Rows of cells as tab-separated text, counted against the cell and character budgets."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from .budget import TextBudget

CELL_LIMIT_NOTE = "[workbook truncated: cell limit reached]"


def cell_text(value: object) -> str:
    """One cell as text: None empty, integral floats without ``.0``, whitespace flattened."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    return " ".join(str(value).split())


class SheetWriter:
    """Writes sheets and rows into a TextBudget while counting cells read."""

    def __init__(self, budget: TextBudget, max_cells: int) -> None:
        self.budget = budget
        self.cells_left = max_cells

    @property
    def stopped(self) -> bool:
        return self.budget.truncated

    def sheet(self, name: str) -> bool:
        prefix = "\n" if self.budget.text() else ""
        return self.budget.add(f"{prefix}## Sheet: {name}\n")

    def charge(self, cells: int) -> int:
        """Take up to ``cells`` from the cell budget (at least 1 per row); returns what was granted.

        When the budget cannot cover the request the workbook is marked truncated.
        """
        cost = max(cells, 1)
        if cost > self.cells_left:
            granted = self.cells_left
            self.cells_left = 0
            self.budget.stop(CELL_LIMIT_NOTE)
            return granted
        self.cells_left -= cost
        return cells

    def row(self, values: Sequence[str]) -> bool:
        """Add one row (trailing empty cells dropped, empty rows skipped); False: stop."""
        end = len(values)
        while end and not values[end - 1]:
            end -= 1
        if end and not self.budget.add("\t".join(values[:end]) + "\n"):
            return False
        return not self.stopped
