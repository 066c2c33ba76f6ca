"""What goes to the parse child and what comes back: plain picklable values, no parser imports.

The service process builds these and reads the answers without loading PyMuPDF, the
office libraries or LiteParse (hundreds of MiB it would never use); only the fork server
(``forkserver_preload``) and its children import the parsers. A child entry point is
named by :class:`InChild` for the same reason.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Literal

from docproc_parser.engine.liteparse import LiteParseOptions

Route = Literal["builtin", "pymupdf", "liteparse"]


@dataclass(frozen=True, slots=True)
class ExtractedImage:
    digest: str
    data: bytes = field(repr=False)
    mime: str
    width: int
    height: int


@dataclass(frozen=True, slots=True)
class PageText:
    text: str
    #: Digests of the images this page shows, in the order of their first reference.
    images: tuple[str, ...] = ()


def cut_pages(texts: list[str] | tuple[str, ...], max_chars: int) -> tuple[list[PageText], bool]:
    """Pages in order while ``max_chars`` of their text last (the last one cut short), and
    whether any text was left out."""
    pages: list[PageText] = []
    left = max_chars
    for text in texts:
        if len(text) > left:
            pages.append(PageText(text[:left]))
            return pages, True
        pages.append(PageText(text))
        left -= len(text)
    return pages, False


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """One entry of a PDF's outline (its bookmarks): depth from 1, title, 1-based page."""

    level: int
    title: str
    page: int


@dataclass(frozen=True, slots=True)
class ParseJob:
    data: bytes = field(repr=False)
    filename: str
    extension: str
    route: Route
    max_pages: int
    max_chars: int
    describe_images: bool = False
    max_images: int = 50
    liteparse: LiteParseOptions | None = None


@dataclass(frozen=True, slots=True)
class WorkerOutput:
    pages: list[PageText]
    page_count: int | None
    truncated: bool
    images: dict[str, ExtractedImage] = field(default_factory=dict)
    images_skipped: int = 0
    ocr: bool = False
    missing_languages: tuple[str, ...] = ()
    outline: tuple[OutlineEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class InChild:
    """``worker.<function>``, called in the child, imported there (the fork server has
    ``docproc_parser.engine.worker`` loaded already, so it costs nothing)."""

    function: str

    def __call__(self, job: Any) -> Any:
        return getattr(importlib.import_module("docproc_parser.engine.worker"), self.function)(job)


RUN = InChild("run")
PROBE = InChild("probe")
OWN_DATE = InChild("own_date")
