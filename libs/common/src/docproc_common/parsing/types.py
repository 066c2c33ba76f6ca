"""The values the parsing API takes and returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

MAX_PAGE_PIXELS = 64 * 2**20
"""The most pixels an image page may have to be decoded: a chat image or TIFF page
(``docproc_upload.chat.images``), an image in a parsed PDF."""


class FileType(StrEnum):
    IMAGE = "image"
    TIFF = "tiff"
    PDF = "pdf"
    DOCX = "docx"
    DOC = "doc"
    SPREADSHEET = "spreadsheet"
    DOCUMENT = "document"
    PRESENTATION = "presentation"
    EMAIL = "email"
    TEXT = "text"
    ARCHIVE = "archive"


@dataclass(frozen=True)
class Detected:
    """What an upload is: canonical MIME type, category, and lowercase extension (no dot)."""

    mime_type: str
    file_type: FileType
    extension: str


@dataclass(frozen=True)
class ArchiveLimits:
    """Ceilings for unpacking an archive or an office zip container, measured while reading."""

    max_entries: int = 5000
    max_bytes: int = 200 * 2**20
    max_ratio: int = 100
    max_member_bytes: int = 50 * 2**20


@dataclass(frozen=True)
class ParseLimits:
    """The budget parsers spend while reading: they stop, rather than cut afterwards."""

    max_chars: int = 500_000
    max_pdf_pages: int = 2000
    max_cells: int = 1_000_000
    soffice_timeout_s: float = 60
    archive: ArchiveLimits = field(default_factory=ArchiveLimits)


@dataclass(frozen=True)
class ParsedText:
    """Extracted text. ``text`` is None when there is none (images) or it is unavailable."""

    text: str | None
    truncated: bool = False
    pages: int | None = None
    note: str | None = None


@dataclass(frozen=True)
class ArchiveMember:
    """One entry of an archive: normalized path (``a/b``), bytes measured by reading, folder flag."""

    path: str
    size: int
    is_dir: bool
