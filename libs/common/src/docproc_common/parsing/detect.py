"""What an upload is: the allow-list, checked against the declared MIME type and the bytes.

The file name gives the extension, the declared MIME type must agree with it (or be a
generic ``application/octet-stream``), and the bytes must look like that type: magic
numbers for binary formats, the container's structure for zip and OLE based ones (an
OLE header is checked within the file's own size before olefile reads it: ``ole``), and
"decodes as text with no NUL byte in the first 8 KB" for text.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass

from .errors import ArchiveNotArchive, ContentMismatch, EncryptedDocument, UnsupportedType
from .ole import MAGIC as _OLE_MAGIC
from .ole import open_ole
from .types import Detected, FileType

_GENERIC_MIMES = frozenset({"", "application/octet-stream", "binary/octet-stream"})
_TEXT_SAMPLE = 8192
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")


@dataclass(frozen=True)
class _Kind:
    mime: str
    file_type: FileType
    extensions: tuple[str, ...]
    aliases: tuple[str, ...]
    sniff: Callable[[bytes], None]  # raises ContentMismatch (or a subclass) when the bytes disagree

    @property
    def mimes(self) -> tuple[str, ...]:
        """Every declared type accepted for this kind, lowercase."""
        return tuple(m.lower() for m in (self.mime, *self.aliases))


def _mismatch(what: str) -> ContentMismatch:
    return ContentMismatch(f"The file content is not a valid {what}")


def _magic(what: str, *prefixes: bytes) -> Callable[[bytes], None]:
    def sniff(data: bytes) -> None:
        if not data.startswith(prefixes):
            raise _mismatch(what)

    return sniff


def _sniff_webp(data: bytes) -> None:
    if not (data[:4] == b"RIFF" and data[8:12] == b"WEBP"):
        raise _mismatch("WebP image")


def _sniff_pdf(data: bytes) -> None:
    if b"%PDF-" not in data[:1024]:
        raise _mismatch("PDF document")


def _sniff_text(data: bytes) -> None:
    sample = data[:_TEXT_SAMPLE]
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return  # UTF-16 with a byte order mark: NUL bytes are expected
    if b"\x00" in sample:
        raise _mismatch("text file (it contains binary data)")
    controls = sum(1 for b in sample if b < 0x20 and b not in b"\t\n\r\f\v\x1b")
    if controls > len(sample) // 10:
        raise _mismatch("text file (it contains binary data)")


def _ole_streams(data: bytes) -> set[str] | None:
    if not data.startswith(_OLE_MAGIC):
        return None
    try:
        with open_ole(data) as ole:
            return {"/".join(path) for path in ole.listdir(streams=True, storages=True)}
    except Exception:
        return None


def _sniff_ole(what: str, required: Callable[[set[str]], bool]) -> Callable[[bytes], None]:
    def sniff(data: bytes) -> None:
        streams = _ole_streams(data)
        if streams is None or not required(streams):
            raise _mismatch(what)

    return sniff


def _zip_member_head(zf: zipfile.ZipFile, name: str, size: int) -> bytes | None:
    try:
        with zf.open(name) as member:
            return member.read(size)
    except Exception:
        return None


def _sniff_ooxml(what: str, *content_types: bytes) -> Callable[[bytes], None]:
    def sniff(data: bytes) -> None:
        if data.startswith(_OLE_MAGIC) and "EncryptedPackage" in (_ole_streams(data) or set()):
            raise EncryptedDocument(f"The {what} is password-protected and cannot be read")
        if not data.startswith(_ZIP_MAGICS):
            raise _mismatch(what)
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                head = _zip_member_head(zf, "[Content_Types].xml", 256 * 1024)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError):
            raise _mismatch(what) from None
        if head is None or not any(ct in head for ct in content_types):
            raise _mismatch(what)

    return sniff


def _sniff_odf(what: str, mimetype: str) -> Callable[[bytes], None]:
    def sniff(data: bytes) -> None:
        if not data.startswith(_ZIP_MAGICS):
            raise _mismatch(what)
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                head = _zip_member_head(zf, "mimetype", 200)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError):
            raise _mismatch(what) from None
        if head is None or head.strip() != mimetype.encode():
            raise _mismatch(what)

    return sniff


def _sniff_archive(what: str, *prefixes: bytes) -> Callable[[bytes], None]:
    def sniff(data: bytes) -> None:
        if not data.startswith(prefixes):
            raise ArchiveNotArchive(f"The file is not a valid {what}")

    return sniff


_WORD = (
    b"wordprocessingml.document.main+xml",
    b"wordprocessingml.template.main+xml",
    b"ms-word.document.macroEnabled.main+xml",
)
_EXCEL = (
    b"spreadsheetml.sheet.main+xml",
    b"spreadsheetml.template.main+xml",
    b"ms-excel.sheet.macroEnabled.main+xml",
)
_POWERPOINT = (
    b"presentationml.presentation.main+xml",
    b"ms-powerpoint.presentation.macroEnabled.main+xml",
)
_ODF = "application/vnd.oasis.opendocument."

KINDS: tuple[_Kind, ...] = (
    _Kind(
        "image/jpeg",
        FileType.IMAGE,
        ("jpg", "jpeg"),
        ("image/jpg", "image/pjpeg"),
        _magic("JPEG image", b"\xff\xd8\xff"),
    ),
    _Kind("image/png", FileType.IMAGE, ("png",), (), _magic("PNG image", b"\x89PNG\r\n\x1a\n")),
    _Kind("image/webp", FileType.IMAGE, ("webp",), (), _sniff_webp),
    _Kind("image/gif", FileType.IMAGE, ("gif",), (), _magic("GIF image", b"GIF87a", b"GIF89a")),
    _Kind(
        "image/tiff",
        FileType.TIFF,
        ("tiff", "tif"),
        ("image/tif", "image/x-tiff"),
        _magic("TIFF image", b"II*\x00", b"MM\x00*"),
    ),
    _Kind("application/pdf", FileType.PDF, ("pdf",), ("application/x-pdf",), _sniff_pdf),
    _Kind(
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        FileType.DOCX,
        ("docx",),
        (),
        _sniff_ooxml("Word document", *_WORD),
    ),
    _Kind(
        "application/msword",
        FileType.DOC,
        ("doc",),
        (),
        _sniff_ole("Word 97-2003 document", lambda s: "WordDocument" in s),
    ),
    _Kind(
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        FileType.SPREADSHEET,
        ("xlsx",),
        (),
        _sniff_ooxml("Excel workbook", *_EXCEL),
    ),
    _Kind(
        "application/vnd.ms-excel.sheet.macroEnabled.12",
        FileType.SPREADSHEET,
        ("xlsm",),
        (),
        _sniff_ooxml("Excel workbook", *_EXCEL),
    ),
    _Kind(
        "application/vnd.ms-excel",
        FileType.SPREADSHEET,
        ("xls",),
        (),
        _sniff_ole("Excel 97-2003 workbook", lambda s: "Workbook" in s or "Book" in s),
    ),
    _Kind(
        _ODF + "spreadsheet",
        FileType.SPREADSHEET,
        ("ods",),
        (),
        _sniff_odf("OpenDocument spreadsheet", _ODF + "spreadsheet"),
    ),
    _Kind(
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        FileType.PRESENTATION,
        ("pptx",),
        (),
        _sniff_ooxml("PowerPoint presentation", *_POWERPOINT),
    ),
    _Kind(
        _ODF + "presentation",
        FileType.PRESENTATION,
        ("odp",),
        (),
        _sniff_odf("OpenDocument presentation", _ODF + "presentation"),
    ),
    _Kind(
        _ODF + "text",
        FileType.DOCUMENT,
        ("odt",),
        (),
        _sniff_odf("OpenDocument text document", _ODF + "text"),
    ),
    _Kind(
        "application/vnd.ms-outlook",
        FileType.EMAIL,
        ("msg",),
        ("application/x-msg",),
        _sniff_ole(
            "Outlook message",
            lambda s: "__properties_version1.0" in s or any("__substg1.0_" in n for n in s),
        ),
    ),
    _Kind("text/plain", FileType.TEXT, ("txt",), (), _sniff_text),
    _Kind("text/markdown", FileType.TEXT, ("md",), ("text/x-markdown", "text/plain"), _sniff_text),
    _Kind(
        "text/csv",
        FileType.TEXT,
        ("csv",),
        ("application/csv", "text/x-csv", "text/plain", "application/vnd.ms-excel"),
        _sniff_text,
    ),
    _Kind("text/html", FileType.TEXT, ("html", "htm"), (), _sniff_text),
    _Kind("application/xml", FileType.TEXT, ("xml",), ("text/xml",), _sniff_text),
    _Kind("application/json", FileType.TEXT, ("json",), ("text/json",), _sniff_text),
    _Kind(
        "application/zip",
        FileType.ARCHIVE,
        ("zip",),
        ("application/x-zip-compressed", "application/x-zip"),
        _sniff_archive("zip archive", *_ZIP_MAGICS),
    ),
    _Kind(
        "application/gzip",
        FileType.ARCHIVE,
        ("tar.gz", "tgz"),
        ("application/x-gzip", "application/x-compressed-tar", "application/x-gtar"),
        _sniff_archive("gzip-compressed tar archive", b"\x1f\x8b"),
    ),
)

_BY_EXTENSION = {ext: kind for kind in KINDS for ext in kind.extensions}
_BY_MIME: dict[str, _Kind] = {}
for _kind in KINDS:  # primary types win over aliases
    _BY_MIME.setdefault(_kind.mimes[0], _kind)
for _kind in KINDS:
    for _alias in _kind.mimes[1:]:
        _BY_MIME.setdefault(_alias, _kind)

ALLOWED_MIME_TYPES = frozenset(_BY_MIME)
ALLOWED_EXTENSIONS = frozenset(_BY_EXTENSION)


def extension_of(filename: str) -> str:
    """The lowercase extension without its dot; ``tar.gz`` for tarballs, "" for none."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1].strip().lower()
    if name.endswith(".tar.gz"):
        return "tar.gz"
    stem, dot, ext = name.rpartition(".")
    return ext if dot and stem else ""


def _normalize_mime(declared: str | None) -> str:
    return (declared or "").split(";", 1)[0].strip().lower()


def detect(data: bytes, filename: str, declared_mime: str | None) -> Detected:
    """Classify an upload, refusing types off the allow-list and bytes that disagree."""
    extension = extension_of(filename)
    mime = _normalize_mime(declared_mime)
    if mime and mime not in _GENERIC_MIMES and mime not in _BY_MIME:
        raise UnsupportedType(f"Files of type {mime} are not supported")
    if extension:
        kind = _BY_EXTENSION.get(extension)
        if kind is None:
            raise UnsupportedType(f"Files with the extension .{extension} are not supported")
        if mime not in _GENERIC_MIMES and mime not in kind.mimes:
            raise ContentMismatch(
                f"The declared type {mime} does not match the file extension .{extension}"
            )
    else:
        if mime in _GENERIC_MIMES:
            raise UnsupportedType("The file has no extension and no supported declared type")
        kind = _BY_MIME[mime]
        extension = kind.extensions[0]
    kind.sniff(data)
    return Detected(mime_type=kind.mime, file_type=kind.file_type, extension=extension)
