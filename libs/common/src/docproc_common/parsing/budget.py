"""The character budget parsers spend as they read."""

from __future__ import annotations

from .types import ParsedText

TEXT_LIMIT_MARKER = "[... the rest of the document was omitted: text limit reached]"


def omitted_marker(reason: str) -> str:
    return f"[... the rest of the document was omitted: {reason}]"


class TextBudget:
    """Collects text up to ``max_chars``; :meth:`add` says when the parser should stop."""

    def __init__(self, max_chars: int) -> None:
        self._parts: list[str] = []
        self._left = max(0, max_chars)
        self.truncated = False
        self._stop_line: str | None = None

    @property
    def exhausted(self) -> bool:
        return self.truncated

    def add(self, text: str) -> bool:
        """Add text (NUL stripped). False once the budget is spent: stop reading."""
        if self.truncated:
            return False
        text = text.replace("\x00", "")
        if not text:
            return True
        if len(text) > self._left:
            if self._left:
                self._parts.append(text[: self._left])
            self._left = 0
            self.truncated = True
            self._stop_line = TEXT_LIMIT_MARKER
            return False
        self._parts.append(text)
        self._left -= len(text)
        return True

    def stop(self, line: str) -> None:
        """Record that another limit (pages, cells) stopped the parser; ``line`` ends the text."""
        if not self.truncated:
            self.truncated = True
            self._stop_line = line

    def text(self) -> str:
        body = "".join(self._parts)
        if self._stop_line is None:
            return body
        body = body.rstrip("\n")
        return f"{body}\n{self._stop_line}" if body else self._stop_line

    def result(self, pages: int | None = None, note: str | None = None) -> ParsedText:
        return ParsedText(text=self.text(), truncated=self.truncated, pages=pages, note=note)
