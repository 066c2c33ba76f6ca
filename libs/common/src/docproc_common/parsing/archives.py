"""Checking and unpacking ``.zip`` and ``.tar.gz`` archives, and guarding office zip containers.

Every size is measured by reading: members are decompressed in bounded chunks and
reading stops as soon as a limit is passed, so headers that lie cost nothing.
Nothing is yielded by :func:`iter_archive_members` until the whole archive has
passed :func:`check_archive`.
"""

from __future__ import annotations

import gzip
import io
import re
import stat
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from typing import IO, Protocol

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
    UnsafeDocument,
    show_name,
)
from .types import ArchiveLimits, ArchiveMember, Detected

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

    def grow(self, name: str, member_size: int, added: int, whole: bool = True) -> None:
        """Count ``added`` bytes; ``whole`` members (held in memory at once) face the member cap."""
        self.total += added
        if whole and member_size > self.limits.max_member_bytes:
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
    stream: IO[bytes],
    name: str,
    meter: _Meter,
    keep: bool,
    scan_dtd: bool = False,
    whole: bool = True,
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
        meter.grow(name, size, len(chunk), whole)
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


def path_component(part: str) -> str:
    """One component of a member's path as it is written: without the whitespace around it.

    The one normalisation the check and the writer share (``_normalize_path`` refuses what
    this turns into ``..``; upload's ``chat.attachments.member_path`` writes what it
    returns): a check of the raw component let ``" .."``, ``".. "``, a no-break space or
    U+3000 before ``..`` pass, and the writer, trimming, then met ``..``.
    """
    return part.strip()


def _normalize_path(raw: str, what: str) -> tuple[str, ...]:
    shown = show_name(raw)
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in raw):
        raise ArchivePathEscape(f"The {what} member '{shown}' has a control character in its path")
    if any(0xD800 <= ord(c) <= 0xDFFF for c in raw):
        raise ArchivePathEscape(f"The {what} member '{shown}' has a path that is not valid UTF-8")
    if "\\" in raw:
        raise ArchivePathEscape(f"The {what} member '{shown}' has a backslash in its path")
    if raw.startswith("/"):
        raise ArchivePathEscape(f"The {what} member '{shown}' has an absolute path")
    if _DRIVE.match(raw):
        raise ArchivePathEscape(f"The {what} member '{shown}' starts with a drive letter")
    parts = tuple(p for p in map(path_component, raw.split("/")) if p not in ("", "."))
    if ".." in parts:
        raise ArchivePathEscape(f"The {what} member '{shown}' leads outside the archive (..)")
    return parts


class _Tree:
    """Paths seen so far: refuses duplicates and file-versus-folder clashes, counts entries.

    Folders implied by a member's path count as entries too: they are created on unpacking.
    """

    def __init__(self, meter: _Meter) -> None:
        self.meter = meter
        self.files: set[tuple[str, ...]] = set()
        self.dirs: set[tuple[str, ...]] = set()
        self.listed_dirs: set[tuple[str, ...]] = set()

    def add(self, raw: str, is_dir: bool) -> str | None:
        """The member's normalized path; None for the archive's own root folder (``./``)."""
        parts = _normalize_path(raw, self.meter.what)
        if not parts:
            if is_dir:
                return None
            raise ArchivePathEscape(f"The {self.meter.what} has a file with an empty path")
        path = "/".join(parts)
        if parts in self.files or parts in self.listed_dirs:
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
            self.listed_dirs.add(parts)
            if parts not in self.dirs:
                self.dirs.add(parts)
                self.meter.entry()
        else:
            if parts in self.dirs:
                raise ArchiveDuplicate(f"The path '{show_name(path)}' is both a file and a folder")
            self.files.add(parts)
            self.meter.entry()
        return path


# --- zip -------------------------------------------------------------------------------

_Walk = Iterator[tuple[ArchiveMember, bytes | None]]


def _open_zip(data: bytes, what: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
        raise ArchiveNotArchive(f"The {what} is not a valid zip file") from None


def _check_zip_overlap(data: bytes, infos: list[zipfile.ZipInfo], what: str) -> None:
    """Refuse members whose local data overlaps another's (the overlapping-files zip bomb)."""
    spans: list[tuple[int, int, str]] = []
    for info in infos:
        offset = info.header_offset
        if offset < 0 or offset + _LOCAL_HEADER.size > len(data):
            raise ArchiveNotArchive(
                f"The {what} member '{show_name(info.orig_filename)}' points outside the file"
            )
        fields = _LOCAL_HEADER.unpack_from(data, offset)
        if fields[0] != b"PK\x03\x04":
            raise ArchiveNotArchive(
                f"The {what} member '{show_name(info.orig_filename)}' has no local header"
            )
        end = offset + _LOCAL_HEADER.size + fields[9] + fields[10] + info.compress_size
        if end > len(data):
            raise ArchiveNotArchive(
                f"The {what} member '{show_name(info.orig_filename)}' extends past the end "
                "of the file"
            )
        spans.append((offset, end, info.orig_filename))
    spans.sort()
    for (_, end, first), (start, _, second) in zip(spans, spans[1:], strict=False):
        if start < end:
            raise ArchiveOverlap(
                f"The {what} members '{show_name(first)}' and '{show_name(second)}' overlap "
                "(possible zip bomb)"
            )


def _zip_kind(info: zipfile.ZipInfo, what: str) -> bool:
    """Refuse encrypted members, links and special files; True for a folder."""
    name = show_name(info.orig_filename)
    if info.flag_bits & 0x41:
        raise ArchiveEncrypted(f"The {what} member '{name}' is encrypted")
    file_type = stat.S_IFMT(info.external_attr >> 16)
    if file_type == stat.S_IFLNK:
        raise ArchiveLink(f"The {what} member '{name}' is a symbolic link")
    if file_type not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise ArchiveSpecialFile(f"The {what} member '{name}' is a device, FIFO or socket")
    return info.is_dir() or file_type == stat.S_IFDIR


def _read_zip_member(
    zf: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    meter: _Meter,
    keep: bool,
    scan_dtd: bool,
    whole: bool = True,
) -> tuple[int, bytes | None]:
    name = show_name(info.orig_filename)
    try:
        with zf.open(info) as stream:
            return _read_member(stream, info.orig_filename, meter, keep, scan_dtd, whole)
    except NotImplementedError:
        raise ArchiveUnsupported(
            f"The {meter.what} member '{name}' uses an unsupported compression method"
        ) from None
    except RuntimeError:  # zipfile's "password required"
        raise ArchiveEncrypted(f"The {meter.what} member '{name}' is encrypted") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError):
        raise ArchiveNotArchive(f"The {meter.what} member '{name}' is corrupt") from None


def _walk_zip(data: bytes, limits: ArchiveLimits, keep: bool) -> _Walk:
    meter = _Meter(limits, len(data), "archive")
    with _open_zip(data, "archive") as zf:
        infos = zf.infolist()
        if len(infos) > limits.max_entries:
            meter.entry(len(infos))
        _check_zip_overlap(data, infos, "archive")
        tree = _Tree(meter)
        for info in infos:
            is_dir = _zip_kind(info, "archive")
            path = tree.add(info.orig_filename, is_dir)
            if path is None:
                continue
            if is_dir:
                yield ArchiveMember(path, 0, True), (b"" if keep else None)
                continue
            size, content = _read_zip_member(zf, info, meter, keep, scan_dtd=False)
            yield ArchiveMember(path, size, False), content


def check_container(
    data: bytes, limits: ArchiveLimits, what: str = "document", streamed: tuple[str, ...] = ()
) -> None:
    """The archive checks for an office zip container, before its library opens it.

    Entries, total bytes, ratio and member size are measured by reading; encrypted or
    overlapping members are refused, and so is any XML part that declares a DTD or
    entities (external entities, billion laughs). Parts whose name starts with one of
    ``streamed`` are read incrementally by their library (openpyxl's read-only
    worksheets), so they count toward the total and the ratio but not the member cap.
    """
    meter = _Meter(limits, len(data), what)
    with _open_zip(data, what) as zf:
        infos = zf.infolist()
        meter.entry(len(infos))
        _check_zip_overlap(data, infos, what)
        for info in infos:
            if _zip_kind(info, what):
                continue
            scan = info.filename.lower().endswith(_XML_SUFFIXES)
            whole = not info.filename.startswith(streamed) if streamed else True
            _read_zip_member(zf, info, meter, keep=False, scan_dtd=scan, whole=whole)


# --- tar.gz ----------------------------------------------------------------------------


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _BoundedStream(io.RawIOBase):
    """The decompressed tar stream, refusing to deliver more than the walker has allowed.

    Member data is allowed as each member starts; everything else (headers, long-name and
    pax records, padding) shares a fixed allowance, so a forged header cannot make
    ``tarfile`` buffer an unbounded record.
    """

    HEADER_ALLOWANCE = 4 * 2**20

    def __init__(self, inner: _Readable, meter: _Meter) -> None:
        super().__init__()
        self._inner = inner
        self._meter = meter
        self.delivered = 0
        self.allowed = self.HEADER_ALLOWANCE

    def readable(self) -> bool:
        return True

    def allow(self, count: int) -> None:
        self.allowed += count

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            size = CHUNK
        try:
            chunk = self._inner.read(min(size, CHUNK))
        except (gzip.BadGzipFile, zlib.error, EOFError, OSError):
            raise ArchiveNotArchive(
                f"The {self._meter.what} is not a valid gzip-compressed tar file"
            ) from None
        self.delivered += len(chunk)
        if self.delivered > self.allowed:
            raise ArchiveTooLarge(
                f"The {self._meter.what}'s headers take more than "
                f"{self.HEADER_ALLOWANCE} bytes (possible decompression bomb)"
            )
        if self.delivered > self._meter.ratio_cap + self.HEADER_ALLOWANCE:
            raise ArchiveRatio(
                f"The {self._meter.what} unpacks to more than {self._meter.limits.max_ratio} "
                "times its own size (possible decompression bomb)"
            )
        return chunk

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        chunk = self.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)


def _walk_tar(data: bytes, limits: ArchiveLimits, keep: bool) -> _Walk:
    meter = _Meter(limits, len(data), "archive")
    stream = _BoundedStream(gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb"), meter)
    tree = _Tree(meter)
    try:
        tf = tarfile.open(fileobj=stream, mode="r|")  # noqa: SIM115 - closed below
    except (tarfile.TarError, EOFError, OSError):
        raise ArchiveNotArchive("The archive is not a valid gzip-compressed tar file") from None
    try:
        while True:
            try:
                info = tf.next()
            except (tarfile.TarError, EOFError, OSError, UnicodeError):
                raise ArchiveNotArchive("The archive's tar data is corrupt") from None
            if info is None:
                break
            member = _tar_member(tf, info, tree, stream, meter, keep)
            if member is not None:
                yield member
    finally:
        tf.close()


def _tar_member(
    tf: tarfile.TarFile,
    info: tarfile.TarInfo,
    tree: _Tree,
    stream: _BoundedStream,
    meter: _Meter,
    keep: bool,
) -> tuple[ArchiveMember, bytes | None] | None:
    name = show_name(info.name)
    if info.issym():
        raise ArchiveLink(f"The archive member '{name}' is a symbolic link")
    if info.islnk():
        raise ArchiveLink(f"The archive member '{name}' is a hard link")
    if not (info.isfile() or info.isdir()):
        raise ArchiveSpecialFile(f"The archive member '{name}' is a device, FIFO or socket")
    path = tree.add(info.name, info.isdir())
    if path is None:
        return None
    if info.isdir():
        return ArchiveMember(path, 0, True), (b"" if keep else None)
    stream.allow(min(info.size, meter.limits.max_member_bytes + 1) + 2 * tarfile.BLOCKSIZE)
    member = tf.extractfile(info)
    if member is None:  # not reachable for regular files
        raise ArchiveNotArchive(f"The archive member '{name}' cannot be read")
    try:
        size, content = _read_member(member, info.name, meter, keep)
    except (tarfile.TarError, EOFError, OSError):
        raise ArchiveNotArchive(f"The archive member '{name}' is truncated or corrupt") from None
    return ArchiveMember(path, size, False), content


# --- public ----------------------------------------------------------------------------


def _walk(data: bytes, detected: Detected, limits: ArchiveLimits, keep: bool) -> _Walk:
    if detected.extension == "zip":
        if not data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
            raise ArchiveNotArchive("The file is not a valid zip archive")
        return _walk_zip(data, limits, keep)
    if detected.extension in ("tar.gz", "tgz"):
        if not data.startswith(b"\x1f\x8b"):
            raise ArchiveNotArchive("The file is not a valid gzip-compressed tar archive")
        return _walk_tar(data, limits, keep)
    raise ArchiveNotArchive(f"Files of type .{detected.extension} are not archives")


def check_archive(data: bytes, detected: Detected, limits: ArchiveLimits) -> list[ArchiveMember]:
    """Read the whole archive, measuring every member; refuse it if any rule is broken."""
    return [member for member, _ in _walk(data, detected, limits, keep=False)]


def iter_archive_members(
    data: bytes, detected: Detected, limits: ArchiveLimits
) -> Iterator[tuple[ArchiveMember, bytes]]:
    """Members with their bytes, one in memory at a time, after the whole archive passed.

    Folders come with empty bytes. The archive is checked in full first, so a refusal
    never arrives after some members were handed out.
    """
    check_archive(data, detected, limits)
    for member, content in _walk(data, detected, limits, keep=True):
        yield member, content or b""


def member_listing(members: list[ArchiveMember]) -> str:
    """The archive's text: one path per line, folders with a trailing slash."""
    return "\n".join(m.path + "/" if m.is_dir else m.path for m in members)


__all__ = [
    "ArchiveRefused",
    "check_archive",
    "check_container",
    "iter_archive_members",
    "member_listing",
    "path_component",
]
