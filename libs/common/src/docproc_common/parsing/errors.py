"""Refusals raised while detecting, checking or parsing an uploaded file.

Each is an :class:`~docproc_common.errors.InvalidInput` (HTTP 400) with a stable
``rule`` naming the check that refused the file; the API puts it in
``details.rule``. Messages are English, safe to show, and name the offending
type or archive member.
"""

from __future__ import annotations

from typing import ClassVar

from docproc_common.errors import InvalidInput


def show_name(name: str, limit: int = 200) -> str:
    """A member name made safe for a message: control characters escaped, length capped."""
    shown = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in name[:limit])
    return shown + ("…" if len(name) > limit else "")


class ParsingRefused(InvalidInput):
    """Base of every refusal of this package."""

    rule: ClassVar[str] = "invalid_file"

    def __init__(self, message: str) -> None:
        super().__init__(message, details={"rule": self.rule})


class UnsupportedType(ParsingRefused):
    rule = "unsupported_type"


class ContentMismatch(ParsingRefused):
    rule = "content_mismatch"


class EncryptedDocument(ParsingRefused):
    rule = "encrypted_document"


class UnsafeDocument(ParsingRefused):
    """An office document whose XML declares a DTD or entities (XXE, billion laughs)."""

    rule = "unsafe_document"


class ImageTooLarge(ParsingRefused):
    rule = "image_too_large"


class ArchiveRefused(ParsingRefused):
    """An archive (or an office zip container) that is not safe to unpack."""

    rule = "archive_refused"


class ArchivePathEscape(ArchiveRefused):
    rule = "archive_path_escape"


class ArchiveLink(ArchiveRefused):
    rule = "archive_link"


class ArchiveSpecialFile(ArchiveRefused):
    rule = "archive_special_file"


class ArchiveDuplicate(ArchiveRefused):
    rule = "archive_duplicate"


class ArchiveEncrypted(ArchiveRefused):
    rule = "archive_encrypted"


class ArchiveNotArchive(ArchiveRefused):
    rule = "archive_not_archive"


class ArchiveUnsupported(ArchiveRefused):
    rule = "archive_unsupported_compression"


class ArchiveOverlap(ArchiveRefused):
    rule = "archive_overlap"


class ArchiveTooManyEntries(ArchiveRefused):
    rule = "archive_too_many_entries"


class ArchiveTooLarge(ArchiveRefused):
    rule = "archive_too_large"


class ArchiveRatio(ArchiveRefused):
    rule = "archive_ratio"


class ArchiveMemberTooLarge(ArchiveRefused):
    rule = "archive_member_too_large"
