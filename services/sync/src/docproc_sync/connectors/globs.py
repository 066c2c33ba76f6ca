"""A git source's ``include`` globs, matched without a regex and without backtracking.

They were compiled to regexes (``**`` -> ``.*``), and a pattern such as
``'**a' * 10 + '**b'`` against a path of 80 ``a`` took ~10^12 steps inside ``_sre``,
which never releases the GIL: the sync process (or all of ``docproc dev``) stopped
answering. Here the work is bounded by the sizes, whatever the pattern:

- a pattern is split at ``/``, and ``**`` is a whole segment: zero or more folders, or,
  as the last segment, everything below (``docs/**``). ``validate_config`` refuses a
  ``**`` inside a segment; should one reach here it is a ``*``;
- one segment (``*`` any run of characters, ``?`` one) is matched by its literal pieces
  between the stars, each placed at its leftmost fit (which is enough: a later fit never
  leaves more room): at most the name's length times the pattern's length, and a piece
  without ``?`` is one ``str.find``;
- ``**`` is followed as the set of pattern positions a path can be at after each of its
  segments (an automaton, not a search that tries one choice and backs out): at most
  pattern segments x path segments segment matches.
"""

from __future__ import annotations

from dataclasses import dataclass

ANY_FOLDERS = "**"


def _fits(piece: str, name: str, at: int) -> bool:
    """``piece`` (literals and ``?``) matches ``name`` at offset ``at``."""
    if at < 0 or at + len(piece) > len(name):
        return False
    return all(p == "?" or p == c for p, c in zip(piece, name[at : at + len(piece)], strict=True))


def _find(piece: str, name: str, start: int, end: int) -> int:
    """The leftmost offset in ``[start, end - len(piece)]`` where ``piece`` fits, or -1."""
    if "?" not in piece:
        return name.find(piece, start, end)
    for at in range(start, end - len(piece) + 1):
        if _fits(piece, name, at):
            return at
    return -1


def segment_matches(pattern: str, name: str) -> bool:
    """One path segment against one pattern segment (``*`` and ``?``; no ``/`` in either)."""
    pieces = pattern.split("*")
    if len(pieces) == 1:
        return len(name) == len(pattern) and _fits(pattern, name, 0)
    first, *middle, last = pieces
    end = len(name) - len(last)
    if end < len(first) or not _fits(first, name, 0) or not _fits(last, name, end):
        return False
    at = len(first)
    for piece in middle:
        if piece:
            found = _find(piece, name, at, end)
            if found < 0:
                return False
            at = found + len(piece)
    return True


@dataclass(frozen=True, slots=True)
class Glob:
    """One include pattern, split once; ``matches`` is called for every file of the tree."""

    segments: tuple[str, ...]

    @classmethod
    def compile(cls, pattern: str) -> Glob:
        return cls(tuple(s if s == ANY_FOLDERS else _one_star(s) for s in pattern.split("/")))

    def matches(self, path: str) -> bool:
        segments, last = self.segments, len(self.segments)
        states = self._closure({0})
        for name in path.split("/"):
            after: set[int] = set()
            for i in states:
                if i == last:
                    continue
                if segments[i] == ANY_FOLDERS:
                    after.add(i)  # the folder is one of those ``**`` stands for
                    after.add(i + 1)  # ... and the last of them
                elif segment_matches(segments[i], name):
                    after.add(i + 1)
            if not after:
                return False
            states = self._closure(after)
        return last in states

    def _closure(self, states: set[int]) -> set[int]:
        """``states`` and the positions past each ``**`` that may stand for no folder (not a
        final one: ``docs/**`` is what is under ``docs``, not ``docs`` itself)."""
        out, todo = set(states), list(states)
        while todo:
            i = todo.pop()
            if i < len(self.segments) - 1 and self.segments[i] == ANY_FOLDERS and i + 1 not in out:
                out.add(i + 1)
                todo.append(i + 1)
        return out


def _one_star(segment: str) -> str:
    """Runs of ``*`` as one ``*`` (they mean the same within a segment)."""
    while "**" in segment:
        segment = segment.replace("**", "*")
    return segment
