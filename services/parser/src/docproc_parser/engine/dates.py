"""A document's own date, read from its metadata: what a search's ``date_from``/``date_to`` narrow.

- PDF: ``/CreationDate``, else ``/ModDate`` (``D:YYYYMMDD...``);
- Office Open XML (``.docx``, ``.pptx``, ``.xlsx``): ``docProps/core.xml``
  ``dcterms:created``, else ``dcterms:modified``;
- OpenDocument (``.odt``, ``.ods``, ``.odp``): ``meta.xml`` ``meta:creation-date``,
  else ``dc:date``;
- legacy Office (``.doc``, ``.ppt``, ``.xls``): the OLE summary's creation time, else its
  last-saved time.

The uploader's ``document_date`` wins over all of these (the parser only fills a row that
has none). A format without metadata, a file whose metadata cannot be read, and an
implausible date (before 1900, or later than tomorrow: editors write 1601-01-01 and
clocks are wrong) give None, never an error: a missing date only means the document
fails closed under a date filter. It runs in the parse child (``worker.own_date``), as it
opens the file with the same native libraries the parse does.
"""

from __future__ import annotations

import io
import re
import zipfile
from datetime import UTC, date, datetime, timedelta
from typing import Any

from defusedxml import ElementTree

OOXML = frozenset({"docx", "pptx", "xlsx"})
OPENDOCUMENT = frozenset({"odt", "ods", "odp"})
OLE = frozenset({"doc", "ppt", "xls"})
FORMATS = frozenset({"pdf"}) | OOXML | OPENDOCUMENT | OLE
"""The extensions whose metadata can carry a date; every other one has none to read."""

#: A metadata part larger than this is not read (a real one is a few KiB).
MAX_METADATA_BYTES = 256 * 1024
EARLIEST = date(1900, 1, 1)

_PDF_DATE = re.compile(r"(?:D:)?(\d{4})(\d{2})(\d{2})")
_ISO_DATE = re.compile(r"\s*(\d{4})-(\d{2})-(\d{2})")
_DCTERMS = "{http://purl.org/dc/terms/}"
_ODF_META = "{urn:oasis:names:tc:opendocument:xmlns:meta:1.0}"
_DC = "{http://purl.org/dc/elements/1.1/}"


def own_date(data: bytes, extension: str, *, today: date | None = None) -> date | None:
    """The date the document's metadata gives it, or None (see the module's rules).

    The first plausible one of its candidates: an editor's zero creation date falls back
    to the modification date, as a missing one does.
    """
    try:
        if extension == "pdf":
            candidates = _pdf(data)
        elif extension in OOXML:
            candidates = _xml_part(
                data, "docProps/core.xml", (f"{_DCTERMS}created", f"{_DCTERMS}modified")
            )
        elif extension in OPENDOCUMENT:
            candidates = _xml_part(data, "meta.xml", (f"{_ODF_META}creation-date", f"{_DC}date"))
        elif extension in OLE:
            candidates = _ole(data)
        else:
            return None
    except Exception:  # noqa: BLE001 - unreadable metadata is no date, never a failed parse
        return None
    latest = (today or datetime.now(UTC).date()) + timedelta(days=1)
    return next((d for d in candidates if d is not None and EARLIEST <= d <= latest), None)


def _pdf(data: bytes) -> list[date | None]:
    import pymupdf  # loaded in the parse child already; not in the service process

    doc: Any = pymupdf.open(stream=data, filetype="pdf")  # type: ignore[no-untyped-call]
    try:
        meta: dict[str, str] = doc.metadata or {}
    finally:
        doc.close()
    return [_parse(_PDF_DATE, meta.get(key) or "") for key in ("creationDate", "modDate")]


def _xml_part(data: bytes, name: str, tags: tuple[str, ...]) -> list[date | None]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        if archive.getinfo(name).file_size > MAX_METADATA_BYTES:
            return []
        with archive.open(name) as part:
            raw = part.read(MAX_METADATA_BYTES + 1)  # the header's size may lie
    if len(raw) > MAX_METADATA_BYTES:
        return []
    root = ElementTree.fromstring(raw)
    return [_parse(_ISO_DATE, element.text or "") for tag in tags for element in root.iter(tag)]


def _ole(data: bytes) -> list[date | None]:
    from docproc_common.parsing.ole import open_ole

    with open_ole(data) as ole:
        meta = ole.get_metadata()
    stamps = (meta.create_time, meta.last_saved_time)
    return [stamp.date() if isinstance(stamp, datetime) else None for stamp in stamps]


def _parse(pattern: re.Pattern[str], text: str) -> date | None:
    match = pattern.match(text)
    if match is None:
        return None
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None
