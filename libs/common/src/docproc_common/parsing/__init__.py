"""File detection, text extraction and archive checks for uploads (pure Python).

>>> detected = detect(data, "report.pdf", "application/pdf")
>>> parsed = parse(data, detected)
>>> preview(parsed.text)
"""

from __future__ import annotations

from .archives import check_archive, iter_archive_members
from .detect import ALLOWED_EXTENSIONS, ALLOWED_MIME_TYPES, detect
from .dispatch import parse, preview
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
from .images import tiff_to_png_pages
from .pdf import PYMUPDF_LOCK, iter_pdf_pages
from .types import (
    ArchiveLimits,
    ArchiveMember,
    Detected,
    FileType,
    ParsedText,
    ParseLimits,
)

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
    "preview",
    "tiff_to_png_pages",
]
