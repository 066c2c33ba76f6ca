"""File detection, text extraction and archive checks for uploads (pure Python).

>>> detected = detect(data, "report.pdf", "application/pdf")
>>> parsed = parse(data, detected)
>>> preview(parsed.text)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .archives import check_archive, iter_archive_members, path_component
from .detect import ALLOWED_EXTENSIONS, ALLOWED_MIME_TYPES, detect
from .errors import (
    ArchiveDuplicate,
    ArchiveEncrypted,
    ArchiveLink,
    ArchiveMemberTooLarge,
    ArchiveNotArchive,
    ArchiveOverlap,
    ArchivePathEscape,
    ArchiveRatio,
    ArchiveRefused,
    ArchiveSpecialFile,
    ArchiveTooLarge,
    ArchiveTooManyEntries,
    ArchiveUnsupported,
    ContentMismatch,
    EncryptedDocument,
    ImageTooLarge,
    ParsingRefused,
    UnsafeDocument,
    UnsupportedType,
)
from .text import preview
from .types import (
    ArchiveLimits,
    ArchiveMember,
    Detected,
    FileType,
    ParsedText,
    ParseLimits,
)

if TYPE_CHECKING:
    from .dispatch import parse
    from .pdf import PYMUPDF_LOCK, iter_pdf_pages

#: Loaded on first use: they import PyMuPDF, the office libraries and Pillow, which a
#: process that only detects, checks and previews files (the API, the parse service
#: before its fork server) never needs. The parse children have them preloaded.
_LAZY = {
    "parse": ".dispatch",
    "PYMUPDF_LOCK": ".pdf",
    "iter_pdf_pages": ".pdf",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "ALLOWED_EXTENSIONS",
    "ALLOWED_MIME_TYPES",
    "ArchiveDuplicate",
    "ArchiveEncrypted",
    "ArchiveLimits",
    "ArchiveLink",
    "ArchiveMember",
    "ArchiveMemberTooLarge",
    "ArchiveNotArchive",
    "ArchiveOverlap",
    "ArchivePathEscape",
    "ArchiveRatio",
    "ArchiveRefused",
    "ArchiveSpecialFile",
    "ArchiveTooLarge",
    "ArchiveTooManyEntries",
    "ArchiveUnsupported",
    "ContentMismatch",
    "Detected",
    "EncryptedDocument",
    "FileType",
    "ImageTooLarge",
    "ParseLimits",
    "ParsedText",
    "PYMUPDF_LOCK",
    "ParsingRefused",
    "UnsafeDocument",
    "UnsupportedType",
    "check_archive",
    "detect",
    "iter_archive_members",
    "iter_pdf_pages",
    "parse",
    "path_component",
    "preview",
]
