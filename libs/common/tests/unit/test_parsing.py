"""docproc_common.parsing: detection and text extraction, on inputs generated at test time."""

from __future__ import annotations

import datetime as dt
import io
import re
import struct
import subprocess
import time
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docx
import openpyxl
import pptx
import pymupdf
import pytest
from docproc_common.errors import InvalidInput
from docproc_common.parsing import (
    ArchiveLimits,
    ArchiveNotArchive,
    ArchiveTooLarge,
    ContentMismatch,
    Detected,
    EncryptedDocument,
    FileType,
    ParsedText,
    ParseLimits,
    UnsupportedType,
    detect,
    iter_pdf_pages,
    parse,
    preview,
)
from docproc_common.parsing import doc as doc_module
from docproc_common.parsing import office as office_module
from docproc_common.parsing.ole import OleRefused, check_header
from docproc_common.splitters import split_text
from docproc_testing.archives import rewrite_member
from docproc_testing.documents import make_pdf
from docproc_testing.office import SOFFICE, soffice_convert
from docx.oxml import OxmlElement
from odf.draw import Frame, Page, TextBox
from odf.opendocument import (
    OpenDocumentPresentation,
    OpenDocumentSpreadsheet,
    OpenDocumentText,
)
from odf.presentation import Notes
from odf.style import MasterPage, PageLayout
from odf.table import Table, TableCell, TableRow
from odf.text import H, P
from PIL import Image
from pptx.util import Inches

MARKER = "[... the rest of the document was omitted: text limit reached]"
CELL_NOTE = "[workbook truncated: cell limit reached]"
needs_soffice = pytest.mark.skipif(SOFFICE is None, reason="LibreOffice (soffice) is not installed")

# --- builders -------------------------------------------------------------------------------


def make_docx(
    paragraphs: list[str], table: list[list[str]] | None = None, *, header_row: bool = False
) -> bytes:
    """A Word document of ``paragraphs`` then ``table``; ``header_row``: its first row marked
    "Repeat as header row" (``w:tblHeader``)."""
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
        if header_row:
            grid.rows[0]._tr.get_or_add_trPr().append(OxmlElement("w:tblHeader"))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_xlsx(sheets: Mapping[str, Sequence[Sequence[object]]]) -> bytes:
    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for title, rows in sheets.items():
        sheet = workbook.create_sheet(title)
        for row in rows:
            sheet.append(row)
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def odf_bytes(document: object) -> bytes:
    out = io.BytesIO()
    document.save(out)  # type: ignore[attr-defined]
    return out.getvalue()


def parsed_within(
    data: bytes, name: str, seconds: float, limits: ParseLimits | None = None
) -> ParsedText:
    """``data`` parsed in under ``seconds``: what a bound stops is not expanded first."""
    started = time.monotonic()
    detected = detect(data, name, None)
    result = parse(data, detected) if limits is None else parse(data, detected, limits)
    assert time.monotonic() - started < seconds
    return result


def ods_cell(text: str, **repeated: int) -> TableCell:
    cell = TableCell(**repeated)
    cell.addElement(P(text=text))
    return cell


def ods_row(*cells: TableCell, **repeated: int) -> TableRow:
    row = TableRow(**repeated)
    for cell in cells:
        row.addElement(cell)
    return row


def ods_sheet(*rows: TableRow) -> bytes:
    """An OpenDocument spreadsheet whose one sheet, "Data", holds ``rows``."""
    document = OpenDocumentSpreadsheet()
    table = Table(name="Data")
    for row in rows:
        table.addElement(row)
    document.spreadsheet.addElement(table)
    return odf_bytes(document)


# --- a minimal OLE2 / CFB writer, enough for olefile to read a .msg ---------------------

_FREE, _END, _FATSECT = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD


@dataclass
class _Entry:
    name: str
    kind: int  # 1 storage, 2 stream, 5 root
    start: int = 0
    size: int = 0
    kids: list[int] = field(default_factory=list)
    left: int = _FREE
    right: int = _FREE
    child: int = _FREE


def _chain(table: list[int], start: int, count: int) -> None:
    for i in range(count):
        table[start + i] = start + i + 1 if i < count - 1 else _END


def write_cfb(tree: dict[str, object]) -> bytes:
    """An OLE2 compound file from ``{name: bytes | {name: ...}}``; streams live in the mini stream.

    Just enough of [MS-CFB] (version 3, 512-byte sectors) for olefile to read a .msg.
    """
    entries = [_Entry("Root Entry", 5)]
    mini = bytearray()

    def add(node: dict[str, object], parent: int) -> None:
        for name, value in node.items():
            entries[parent].kids.append(len(entries))
            if isinstance(value, dict):
                entries.append(_Entry(name, 1))
                add(value, len(entries) - 1)
            else:
                assert isinstance(value, bytes)
                assert len(value) < 4096
                entries.append(_Entry(name, 2, len(mini) // 64, len(value)))
                mini.extend(value + b"\x00" * (-len(value) % 64))

    add(tree, 0)
    for entry in entries:  # children as a right-sibling chain in CFB name order
        ordered = sorted(entry.kids, key=lambda k: (len(entries[k].name), entries[k].name.upper()))
        if ordered:
            entry.child = ordered[0]
        for first, second in zip(ordered, ordered[1:], strict=False):
            entries[first].right = second
    mini_sectors = len(mini) // 64
    minifat_count = -(-mini_sectors * 4 // 512)
    dir_count = -(-len(entries) * 128 // 512)
    stream_count = -(-len(mini) // 512)
    fat_count = 1
    while fat_count * 128 < dir_count + minifat_count + stream_count + fat_count:
        fat_count += 1
    fat = [_FREE] * (fat_count * 128)
    fat[:fat_count] = [_FATSECT] * fat_count
    dir_start = fat_count
    minifat_start = dir_start + dir_count
    stream_start = minifat_start + minifat_count
    _chain(fat, dir_start, dir_count)
    _chain(fat, minifat_start, minifat_count)
    _chain(fat, stream_start, stream_count)
    minifat = [_FREE] * (minifat_count * 128)
    for entry in entries:
        if entry.kind == 2:
            _chain(minifat, entry.start, -(-entry.size // 64))
            if not entry.size:
                entry.start = _END
    entries[0].start = stream_start if mini else _END
    entries[0].size = len(mini)
    directory = bytearray()
    for entry in entries:
        name = entry.name.encode("utf-16-le") + b"\x00\x00"
        directory += name.ljust(64, b"\x00")
        directory += struct.pack(
            "<HBB3I", len(name), entry.kind, 1, entry.left, entry.right, entry.child
        )
        directory += b"\x00" * 36 + struct.pack("<IQ", entry.start, entry.size)
    directory += b"\x00" * (-len(directory) % 512)
    header = (
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
        + b"\x00" * 16
        + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6)
        + b"\x00" * 6
        + struct.pack("<IIIII", 0, fat_count, dir_start, 0, 4096)
        + struct.pack("<II", minifat_start if minifat_count else _END, minifat_count)
        + struct.pack("<II", _END, 0)
        + struct.pack("<109I", *(list(range(fat_count)) + [_FREE] * (109 - fat_count)))
    )
    assert len(header) == 512
    return b"".join(
        [
            header,
            struct.pack(f"<{len(fat)}I", *fat),
            bytes(directory),
            struct.pack(f"<{len(minifat)}I", *minifat),
            bytes(mini) + b"\x00" * (-len(mini) % 512),
        ]
    )


def utf16(text: str) -> bytes:
    return text.encode("utf-16-le")


def hostile_ole(
    fat_sectors: int = 2**31,
    difat_sectors: int | None = None,
    *,
    sectors: int = 2,
    shift: int = 9,
    difat_start: int = 0,
    next_difat: int = 0,
) -> bytes:
    """An OLE2 header and ``sectors`` sectors, each a DIFAT sector naming ``next_difat`` next.

    The defaults are the file that kept olefile reading one sector for good: a DIFAT
    chain that names itself, under a header claiming 2**31 FAT sectors (and as many
    DIFAT sectors as those need, so olefile accepts the counts).
    """
    size = 1 << shift
    per = size // 4
    if difat_sectors is None:
        difat_sectors = -(-(fat_sectors - 109) // (per - 1))
    header = (
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
        + b"\x00" * 16
        + struct.pack("<HHHHH", 0x3E, 3 if shift == 9 else 4, 0xFFFE, shift, 6)
        + b"\x00" * 6
        + struct.pack("<IIIII", 0, fat_sectors, _END, 0, 4096)
        + struct.pack("<II", _END, 0)
        + struct.pack("<II", difat_start, difat_sectors)
        + struct.pack("<109I", *([_FREE] * 109))
    )
    sector = struct.pack(f"<{per}I", *([_FREE] * (per - 1) + [next_difat]))
    return header.ljust(size, b"\x00") + sector * sectors


def make_msg(body: dict[str, object] | None = None) -> bytes:
    submitted = dt.datetime(2024, 3, 5, 14, 30, tzinfo=dt.UTC)
    filetime = int((submitted - dt.datetime(1601, 1, 1, tzinfo=dt.UTC)).total_seconds() * 10**7)
    properties = b"\x00" * 32 + struct.pack("<HHIQ", 0x0040, 0x0039, 6, filetime)
    tree: dict[str, object] = {
        "__substg1.0_0037001F": utf16("Quarterly report"),
        "__substg1.0_0C1A001F": utf16("Ana Pérez"),
        "__substg1.0_5D01001F": utf16("ana@example.com"),
        "__substg1.0_0E04001F": utf16("Bob Smith"),
        "__substg1.0_0E03001E": b"Carol",
        "__properties_version1.0": properties,
        "__attach_version1.0_#00000000": {"__substg1.0_3707001F": utf16("numbers.xlsx")},
        "__attach_version1.0_#00000001": {"__substg1.0_3001001F": utf16("Forwarded mail")},
    }
    tree.update(
        body
        if body is not None
        else {"__substg1.0_1000001F": utf16("Hello Bob,\x00\nsee the numbers.")}
    )
    return write_cfb(tree)


def make_tiff(pages: int) -> bytes:
    frames = [Image.new("RGB", (20 + i, 10), (i * 40, 0, 0)) for i in range(pages)]
    out = io.BytesIO()
    frames[0].save(out, format="TIFF", save_all=True, append_images=frames[1:])
    return out.getvalue()


def parsed_text(data: bytes, filename: str, limits: ParseLimits | None = None) -> str:
    result = parse(data, detect(data, filename, None), limits or ParseLimits())
    assert result.text is not None, result.note
    return result.text


# --- detection ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "declared", "mime", "file_type", "extension"),
    [
        ("a.txt", "text/plain", "text/plain", FileType.TEXT, "txt"),
        ("README.MD", None, "text/markdown", FileType.TEXT, "md"),
        ("notes.md", "text/plain", "text/markdown", FileType.TEXT, "md"),
        ("t.csv", "application/vnd.ms-excel", "text/csv", FileType.TEXT, "csv"),
        ("d.json", "application/json; charset=utf-8", "application/json", FileType.TEXT, "json"),
        ("d.xml", "text/xml", "application/xml", FileType.TEXT, "xml"),
        ("p.html", "text/html", "text/html", FileType.TEXT, "html"),
        ("pasted", "text/plain", "text/plain", FileType.TEXT, "txt"),
    ],
)
def test_detect_text_types(
    filename: str, declared: str | None, mime: str, file_type: FileType, extension: str
) -> None:
    assert detect(b"col,val\n1,2\n", filename, declared) == Detected(mime, file_type, extension)


def test_detect_binary_types() -> None:
    assert detect(make_pdf(["x"]), "r.pdf", "application/pdf").file_type is FileType.PDF
    assert detect(b"junk\n%PDF-1.7\n", "r.pdf", None).file_type is FileType.PDF
    tiff = make_tiff(1)
    assert detect(tiff, "scan.tiff", "application/octet-stream") == Detected(
        "image/tiff", FileType.TIFF, "tiff"
    )
    assert detect(tiff, "scan.TIF", "image/tiff").extension == "tif"
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
    assert detect(png, "p.png", "image/png").file_type is FileType.IMAGE
    assert detect(b"\xff\xd8\xff\xe0rest", "p.jpg", "image/jpeg").mime_type == "image/jpeg"
    assert detect(b"GIF89a....", "p.gif", None).mime_type == "image/gif"
    assert detect(b"RIFF\x00\x00\x00\x00WEBPVP8 ", "p.webp", None).mime_type == "image/webp"
    assert detect(make_msg(), "m.msg", None).file_type is FileType.EMAIL


@pytest.mark.parametrize(
    ("data", "filename", "declared"),
    [
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, "invoice.pdf", "application/pdf"),
        (b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff", "readme.txt", "text/plain"),
        (b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 40, "notes.md", None),
        (make_docx(["x"]), "book.xlsx", None),
        (make_xlsx({"S": [["x"]]}), "letter.docx", None),
        (b"PK\x05\x06" + b"\x00" * 18, "letter.docx", None),
        (make_pdf(["x"]), "photo.png", "image/png"),
        (b"plain text", "photo.jpg", None),
        (b"plain text", "old.doc", None),
        (b"plain text", "sheet.ods", None),
        (b"col\x01\x02\x03\x04\x05\x06\x07\x08", "t.csv", None),
        (make_pdf(["x"]), "r.pdf", "image/png"),  # declared type disagrees with the name
        (b"text", "a.txt", "application/pdf"),
    ],
)
def test_spoofed_content_is_refused(data: bytes, filename: str, declared: str | None) -> None:
    with pytest.raises(ContentMismatch) as refused:
        detect(data, filename, declared)
    assert refused.value.rule == "content_mismatch"
    assert isinstance(refused.value, InvalidInput)


@pytest.mark.parametrize(
    ("filename", "declared"),
    [
        ("setup.exe", "application/x-msdownload"),
        ("setup.exe", None),
        ("a.txt", "application/x-msdownload"),
        ("noextension", None),
        ("noextension", "application/octet-stream"),
        ("x.gz", "application/gzip"),
        ("x.rar", None),
        ("x.svg", "image/svg+xml"),
    ],
)
def test_unsupported_types(filename: str, declared: str | None) -> None:
    with pytest.raises(UnsupportedType) as refused:
        detect(b"MZ", filename, declared)
    assert refused.value.rule == "unsupported_type"
    assert refused.value.envelope()["error"]["details"]["rule"] == "unsupported_type"


def test_password_protected_office_file() -> None:
    encrypted = write_cfb({"EncryptedPackage": b"\x01" * 64, "EncryptionInfo": b"\x04" * 64})
    with pytest.raises(EncryptedDocument):
        detect(encrypted, "secret.docx", None)


def test_utf16_text_with_bom_is_text() -> None:
    data = "\ufeffname,value\nä,1\n".encode("utf-16-le")
    assert parsed_text(data, "t.csv") == "name,value\nä,1\n"


# --- text ------------------------------------------------------------------------------------


def test_text_decoding_and_nul_stripping() -> None:
    data = "héllo\nwörld ".encode() + b"\xff" + b"\n" + b"a" * 9000 + b"\x00b"
    text = parsed_text(data, "a.txt")
    assert text.startswith("héllo\nwörld \ufffd\n")
    assert "\x00" not in text
    assert text.endswith("ab")


def test_xml_honours_declared_encoding_and_bom() -> None:
    latin = '<?xml version="1.0" encoding="ISO-8859-1"?><a>café</a>'.encode("latin-1")
    assert parsed_text(latin, "a.xml") == '<?xml version="1.0" encoding="ISO-8859-1"?><a>café</a>'
    bom = "\ufeff<?xml version='1.0'?><a>naïve</a>".encode("utf-16-le")
    assert parsed_text(bom, "b.xml") == "<?xml version='1.0'?><a>naïve</a>"
    utf8_bom = b"\xef\xbb\xbf<a>\xc3\xa9</a>"
    assert parsed_text(utf8_bom, "c.xml") == "<a>é</a>"


def test_text_budget_stops_reading() -> None:
    data = ("line of text\n" * 100_000).encode()
    result = parse(data, detect(data, "big.txt", None), ParseLimits(max_chars=1000))
    assert result.truncated
    assert result.text == ("line of text\n" * 100_000)[:1000].rstrip("\n") + "\n" + MARKER


def test_text_exactly_at_budget_is_not_truncated() -> None:
    data = b"x" * 1000
    result = parse(data, detect(data, "a.txt", None), ParseLimits(max_chars=1000))
    assert not result.truncated
    assert result.text == "x" * 1000


# --- PDF -------------------------------------------------------------------------------------


def test_pdf_pages() -> None:
    data = make_pdf(["first page", "second page"])
    result = parse(data, detect(data, "r.pdf", "application/pdf"))
    assert result.pages == 2
    assert result.text == "first page\n\nsecond page"
    assert not result.truncated


def test_pdf_budget_stops_at_the_page_that_passes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    data = make_pdf([f"page {i} " + "x" * 80 for i in range(300)])
    loaded: list[int] = []
    original: Any = pymupdf.Document.load_page

    def counting(self: Any, index: int = 0) -> Any:
        loaded.append(index)
        return original(self, index)

    monkeypatch.setattr(pymupdf.Document, "load_page", counting)
    result = parse(data, detect(data, "r.pdf", None), ParseLimits(max_chars=500))
    assert result.truncated
    assert result.pages == 300
    assert result.text is not None
    assert result.text.endswith(MARKER)
    assert len(result.text) <= 500 + len(MARKER) + 1
    assert len(loaded) <= 6  # stopped reading: ~88 characters a page


def test_pdf_page_limit() -> None:
    data = make_pdf([f"page {i}" for i in range(10)])
    limits = ParseLimits(max_pdf_pages=4)
    assert list(iter_pdf_pages(data, limits)) == [f"page {i}\n" for i in range(4)]
    result = parse(data, detect(data, "r.pdf", None), limits)
    assert result.truncated
    assert result.text is not None
    assert "page 3" in result.text
    assert "page 4" not in result.text
    assert result.text.endswith("omitted: page limit of 4 reached]")


def test_pdf_nul_characters_are_stripped() -> None:
    data = make_pdf(["before\x00after"])
    assert "\x00" not in "".join(iter_pdf_pages(data, ParseLimits()))
    assert "\x00" not in parsed_text(data, "n.pdf")


def test_pdf_parsing_from_many_threads() -> None:
    """PyMuPDF is not thread-safe; the parser serializes its calls, so a pool is fine."""
    from concurrent.futures import ThreadPoolExecutor

    documents = [make_pdf([f"doc {n} page {p}" for p in range(20)]) for n in range(8)]

    def run(n: int) -> str | None:
        return parse(documents[n], detect(documents[n], "r.pdf", None)).text

    with ThreadPoolExecutor(max_workers=4) as pool:
        texts = list(pool.map(run, range(8)))
    for n, text in enumerate(texts):
        assert text == "\n\n".join(f"doc {n} page {p}" for p in range(20))


def test_pdf_encrypted_and_corrupt() -> None:
    document: Any = pymupdf.open()  # type: ignore[no-untyped-call]
    document.new_page().insert_text((72, 72), "secret")
    aes_256 = pymupdf.PDF_ENCRYPT_AES_256  # type: ignore[attr-defined]
    locked = document.tobytes(encryption=aes_256, user_pw="u", owner_pw="o")
    result = parse(locked, detect(locked, "l.pdf", None))
    assert result.text is None
    assert result.note is not None
    assert "password" in result.note
    with pytest.raises(EncryptedDocument):
        list(iter_pdf_pages(locked, ParseLimits()))
    broken = b"%PDF-1.7\n" + b"garbage" * 10
    result = parse(broken, detect(broken, "b.pdf", None))
    assert result.text in (None, "")


# --- Word ------------------------------------------------------------------------------------


def test_docx_paragraphs_and_tables() -> None:
    data = make_docx(["Intro", "Second para"], [["a", "b"], ["c", "d"]])
    detected = detect(data, "r.docx", None)
    assert detected.file_type is FileType.DOCX
    assert parse(data, detected).text == "Intro\nSecond para\na\tb\nc\td\n"


def test_a_docx_table_with_a_marked_header_row_is_a_pipe_table() -> None:
    rows = [["Code", "Meaning"], ["E1", "disk | full"], ["E2", "no network"]]
    data = make_docx(["Intro"], rows, header_row=True)
    assert parse(data, detect(data, "r.docx", None)).text == (
        "Intro\n\n| Code | Meaning |\n|---|---|\n| E1 | disk \\| full |\n| E2 | no network |\n\n"
    )


def test_a_long_docx_table_repeats_its_header_in_every_chunk() -> None:
    rows = [["Error code", "Condition name"]] + [
        [f"22{i:03d}", f"condition {i}"] for i in range(60)
    ]
    data = make_docx(["Error codes of the server."], rows, header_row=True)
    text = parse(data, detect(data, "codes.docx", None)).text or ""
    chunks = split_text(text, chunk_size=200, chunk_overlap=40)
    rows_chunks = [c.text for c in chunks if "condition" in c.text]
    assert len(rows_chunks) > 3
    assert all(c.startswith("| Error code | Condition name |\n|---|---|\n") for c in rows_chunks)


def test_docx_budget_stops_at_paragraph() -> None:
    data = make_docx([f"paragraph {i}" for i in range(2000)])
    result = parse(data, detect(data, "r.docx", None), ParseLimits(max_chars=100))
    assert result.truncated
    assert result.text is not None
    assert result.text.endswith(MARKER)
    assert "paragraph 10" not in result.text


def test_doc_unavailable_without_libreoffice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doc_module, "soffice_path", lambda: None)
    fake_doc = write_cfb({"WordDocument": b"\x00" * 100})
    result = parse(fake_doc, detect(fake_doc, "old.doc", "application/msword"))
    assert result.text is None
    assert result.note == "LibreOffice is not installed; the text of .doc files is unavailable"


def test_doc_conversion_timeout_kills_the_process_group(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pid_file = tmp_path / "child.pid"
    script = tmp_path / "soffice"
    script.write_text(f"#!/bin/sh\nsleep 60 &\necho $! > {pid_file}\nwait\n")
    script.chmod(0o755)
    monkeypatch.setattr(doc_module, "soffice_path", lambda: str(script))
    fake_doc = write_cfb({"WordDocument": b"\x00" * 100})
    result = parsed_within(fake_doc, "old.doc", 10, ParseLimits(soffice_timeout_s=1))
    assert result.text is None
    assert result.note is not None
    assert "did not finish" in result.note
    child = int(pid_file.read_text())
    stat_file = Path(f"/proc/{child}/stat")
    deadline = time.monotonic() + 5
    while stat_file.exists() and stat_file.read_text().split()[2] != "Z":
        assert time.monotonic() < deadline, "the converter's child process survived"
        time.sleep(0.05)


@needs_soffice
def test_doc_real_conversion(tmp_path: Path) -> None:
    source = tmp_path / "letter.txt"
    source.write_text("Dear reader,\nthis came from a .doc file — ünïcode.\n")
    data = soffice_convert(tmp_path, source, "doc:MS Word 97")
    detected = detect(data, "letter.doc", "application/msword")
    assert detected.file_type is FileType.DOC
    result = parse(data, detected)
    assert result.text is not None, result.note
    assert "Dear reader," in result.text
    assert "ünïcode" in result.text


# --- spreadsheets ---------------------------------------------------------------------------


def test_xlsx_sheets_named_rows_tab_separated() -> None:
    data = make_xlsx(
        {
            "Sales": [["month", "total"], ["jan", 10], ["feb", 12.5], [None, None], ["a\tb", True]],
            "Empty": [],
            "Dates": [[dt.datetime(2024, 1, 2, 3, 4, 5)]],
        }
    )
    result = parse(data, detect(data, "s.xlsx", None))
    assert result.text == (
        "## Sheet: Sales\nmonth\ttotal\njan\t10\nfeb\t12.5\na b\tTRUE\n\n"
        "## Sheet: Empty\n\n## Sheet: Dates\n2024-01-02T03:04:05\n"
    )
    assert result.pages == 3


def test_xlsm_is_read_like_xlsx() -> None:
    data = make_xlsx({"S": [["macro", "book"]]})
    detected = detect(data, "m.xlsm", "application/vnd.ms-excel.sheet.macroEnabled.12")
    assert detected.extension == "xlsm"
    assert parse(data, detected).text == "## Sheet: S\nmacro\tbook\n"


def _huge_dimension_xlsx() -> bytes:
    data = make_xlsx({"Big": [["only", "cell"]]})
    source = zipfile.ZipFile(io.BytesIO(data))
    sheet = source.read("xl/worksheets/sheet1.xml")
    sheet = sheet.replace(b'<dimension ref="A1:B1"/>', b'<dimension ref="A1:XFD1048576"/>')
    assert b"XFD1048576" in sheet
    return rewrite_member(data, "xl/worksheets/sheet1.xml", sheet)


def test_xlsx_declaring_a_huge_dimension_costs_nothing() -> None:
    data = _huge_dimension_xlsx()
    result = parsed_within(data, "big.xlsx", 2)
    assert result.text == "## Sheet: Big\nonly\tcell\n"
    assert not result.truncated


def test_xlsx_without_dimension_is_not_probed(monkeypatch: pytest.MonkeyPatch) -> None:
    """openpyxl's size probe parses a whole sheet that lacks <dimension>: never run it."""
    from openpyxl.worksheet._reader import WorkSheetParser

    workbook = openpyxl.Workbook(write_only=True)
    sheet = workbook.create_sheet("Streamed")
    for row in range(300):
        sheet.append([row, f"v{row}"])
    out = io.BytesIO()
    workbook.save(out)
    data = out.getvalue()
    assert b"<dimension" not in zipfile.ZipFile(io.BytesIO(data)).read("xl/worksheets/sheet1.xml")

    def probe(self: Any) -> None:
        raise AssertionError("the whole sheet was parsed to find its size")

    monkeypatch.setattr(WorkSheetParser, "parse_dimensions", probe)
    result = parse(data, detect(data, "s.xlsx", None), ParseLimits(max_cells=20))
    assert (
        result.text
        == "## Sheet: Streamed\n"
        + "".join(f"{r}\tv{r}\n" for r in range(10))
        + "[workbook truncated: cell limit reached]"
    )


def test_xlsx_streamed_sheets_are_exempt_from_the_member_cap_only() -> None:
    data = make_xlsx({"S": [[f"row {r}", r] for r in range(1000)]})
    small = ParseLimits(archive=ArchiveLimits(max_member_bytes=12_000, max_ratio=10**6))
    sheet_size = zipfile.ZipFile(io.BytesIO(data)).getinfo("xl/worksheets/sheet1.xml").file_size
    assert sheet_size > 12_000
    result = parse(data, detect(data, "s.xlsx", None), small)
    assert result.text is not None
    assert "row 999\t999" in result.text
    with pytest.raises(ArchiveTooLarge):
        parse(
            data, detect(data, "s.xlsx", None), ParseLimits(archive=ArchiveLimits(max_bytes=2000))
        )


def test_xlsx_cell_limit_counts_cells_read() -> None:
    rows = [[f"r{r}c{c}" for c in range(10)] for r in range(50)]
    data = make_xlsx({"S": rows, "T": [["never"]]})
    result = parse(data, detect(data, "s.xlsx", None), ParseLimits(max_cells=205))
    assert result.truncated
    assert result.text is not None
    assert result.text.endswith(CELL_NOTE)
    assert "r19c9" in result.text
    assert "r20c5" not in result.text
    assert "never" not in result.text


def test_xlsx_far_column_padding_is_counted() -> None:
    """One value in column XFD per row pads 16,384 cells: the cell budget still holds."""
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    for row in range(1, 200):
        sheet.cell(row=row, column=16384, value=row)
    out = io.BytesIO()
    workbook.save(out)
    data = out.getvalue()
    result = parsed_within(data, "far.xlsx", 5, ParseLimits(max_cells=100_000))
    assert result.truncated
    assert result.text is not None
    assert result.text.endswith(CELL_NOTE)


def test_xlsx_budget_by_characters() -> None:
    data = make_xlsx({"S": [["x" * 50] for _ in range(1000)]})
    result = parse(data, detect(data, "s.xlsx", None), ParseLimits(max_chars=300))
    assert result.truncated
    assert result.text is not None
    assert result.text.endswith(MARKER)


@pytest.mark.parametrize(
    ("rows_kept", "expected"),
    [
        (1, "## Sheet: S\nfirst\n[workbook truncated: the rest could not be read]"),
        (0, "## Sheet: S\n[workbook truncated: the rest could not be read]"),
    ],
)
def test_a_workbook_broken_midway_keeps_what_was_read(rows_kept: int, expected: str) -> None:
    data = make_xlsx({"S": [["first"], ["second"]]})
    xml = zipfile.ZipFile(io.BytesIO(data)).read("xl/worksheets/sheet1.xml")
    rows = [i for i in range(len(xml)) if xml.startswith(b"<row", i)]
    broken = rewrite_member(data, "xl/worksheets/sheet1.xml", xml[: rows[rows_kept] + 4] + b"<<")
    result = parse(broken, detect(broken, "b.xlsx", None))
    assert result.text is not None
    assert result.text.strip() == expected


def test_ods_sheets_and_repeats_are_not_expanded() -> None:
    data = ods_sheet(
        # a trailing empty run of cells: not expanded
        ods_row(ods_cell("a"), ods_cell("b"), TableCell(numbercolumnsrepeated=16000)),
        TableRow(numberrowsrepeated=1_000_000),  # empty rows: skipped
        ods_row(ods_cell("r", numbercolumnsrepeated=2), numberrowsrepeated=2),
    )
    result = parsed_within(data, "s.ods", 2)
    assert result.text == "## Sheet: Data\na\tb\nr\tr\nr\tr\n"


def test_ods_cell_limit() -> None:
    data = ods_sheet(
        ods_row(ods_cell("v", numbercolumnsrepeated=1000), numberrowsrepeated=1_000_000)
    )
    result = parsed_within(data, "s.ods", 2, ParseLimits(max_cells=5000))
    assert result.truncated
    assert result.text is not None
    assert result.text.endswith(CELL_NOTE)
    assert result.text.count("v") == 5000


@needs_soffice
def test_xls_via_xlrd(tmp_path: Path) -> None:
    source = tmp_path / "in.csv"
    source.write_text("name,count\nwidgets,3\n")
    try:
        data = soffice_convert(tmp_path, source, "xls:MS Excel 97")
    except (subprocess.CalledProcessError, AssertionError):
        pytest.skip("LibreOffice Calc is not installed")
    detected = detect(data, "in.xls", "application/vnd.ms-excel")
    assert parse(data, detected).text == "## Sheet: in\nname\tcount\nwidgets\t3\n"


def test_xls_that_xlrd_cannot_read_gives_a_note() -> None:
    fake = write_cfb({"Workbook": b"\x00" * 200})
    result = parse(fake, detect(fake, "bad.xls", None))
    assert result.text is None
    assert result.note is not None


# --- presentations and OpenDocument text ---------------------------------------------------


def test_pptx_shapes_tables_notes() -> None:
    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = "Title here"
    slide.placeholders[1].text = "Body text"
    table = slide.shapes.add_table(2, 2, Inches(1), Inches(3), Inches(4), Inches(1)).table
    table.cell(0, 0).text = "c00"
    table.cell(1, 1).text = "c11"
    slide.notes_slide.notes_text_frame.text = "speaker notes"
    presentation.slides.add_slide(presentation.slide_layouts[5]).shapes.title.text = "Two"
    out = io.BytesIO()
    presentation.save(out)
    data = out.getvalue()
    result = parse(data, detect(data, "deck.pptx", None))
    assert result.pages == 2
    assert result.text == (
        "## Slide 1\nTitle here\nBody text\nc00\t\n\tc11\nNotes: speaker notes\n\n"
        "## Slide 2\nTwo\n\n"
    )


def test_pptx_budget_stops_at_the_slide(monkeypatch: pytest.MonkeyPatch) -> None:
    """The limit is a budget the parser spends: past it, no further slide is read."""
    presentation = pptx.Presentation()
    for n in range(200):
        slide = presentation.slides.add_slide(presentation.slide_layouts[5])
        slide.shapes.title.text = f"slide {n} " + "x" * 80
    out = io.BytesIO()
    presentation.save(out)
    data = out.getvalue()
    read: list[object] = []
    original: Any = office_module._shape_texts

    def counting(shapes: Any) -> Any:
        read.append(shapes)
        return original(shapes)

    monkeypatch.setattr(office_module, "_shape_texts", counting)
    result = parse(data, detect(data, "deck.pptx", None), ParseLimits(max_chars=500))
    assert result.truncated
    assert result.pages == 200
    assert result.text is not None
    assert result.text.endswith(MARKER)
    assert "slide 10 " not in result.text
    assert len(read) <= 6  # stopped reading: ~100 characters a slide


def test_odt_paragraphs() -> None:
    document = OpenDocumentText()
    document.text.addElement(H(outlinelevel=1, text="Heading"))
    document.text.addElement(P(text="Paragraph one"))
    document.text.addElement(P(text="Paragraph two"))
    data = odf_bytes(document)
    assert parsed_text(data, "t.odt") == "Heading\nParagraph one\nParagraph two\n"
    result = parse(data, detect(data, "t.odt", None), ParseLimits(max_chars=10))
    assert result.truncated


def test_odp_slides_and_notes() -> None:
    document = OpenDocumentPresentation()
    layout = PageLayout(name="pl")
    document.automaticstyles.addElement(layout)
    master = MasterPage(name="mp", pagelayoutname=layout)
    document.masterstyles.addElement(master)
    for number in (1, 2):
        page = Page(masterpagename=master)
        frame = Frame(width="10cm", height="2cm", x="1cm", y="1cm")
        box = TextBox()
        box.addElement(P(text=f"Slide text {number}"))
        frame.addElement(box)
        page.addElement(frame)
        notes = Notes()
        notes_frame = Frame(width="10cm", height="2cm", x="1cm", y="1cm")
        notes_box = TextBox()
        notes_box.addElement(P(text=f"notes {number}"))
        notes_frame.addElement(notes_box)
        notes.addElement(notes_frame)
        page.addElement(notes)
        document.presentation.addElement(page)
    data = odf_bytes(document)
    result = parse(data, detect(data, "p.odp", None))
    assert result.pages == 2
    assert result.text == (
        "## Slide 1\nSlide text 1\nNotes: notes 1\n\n## Slide 2\nSlide text 2\nNotes: notes 2\n\n"
    )


# --- mail ------------------------------------------------------------------------------------


def test_msg_headers_body_and_attachment_names() -> None:
    data = make_msg()
    result = parse(data, detect(data, "mail.msg", "application/vnd.ms-outlook"))
    assert result.text == (
        "From: Ana Pérez <ana@example.com>\n"
        "To: Bob Smith\n"
        "Cc: Carol\n"
        "Date: Tue, 05 Mar 2024 14:30:00 +0000\n"
        "Subject: Quarterly report\n"
        "\n"
        "Hello Bob,\nsee the numbers.\n"
        "\n"
        "Attachments (not extracted):\n- numbers.xlsx\n- Forwarded mail\n"
    )


def test_msg_html_only_body() -> None:
    html = "<html><style>p{}</style><body><p>Hi &amp; bye</p></body></html>"
    data = make_msg({"__substg1.0_10130102": html.encode()})
    text = parsed_text(data, "mail.msg")
    assert "Hi & bye" in text
    assert "p{}" not in text


@pytest.mark.parametrize("filename", ["mail.msg", "letter.doc", "book.xls"])
def test_an_ole_header_declaring_more_than_the_file_holds_is_refused_before_olefile(
    filename: str,
) -> None:
    """The self-naming DIFAT chain under 2**31 FAT sectors: olefile never returned."""
    data = hostile_ole()
    started = time.monotonic()
    with pytest.raises(ContentMismatch, match="The file content is not a valid"):
        detect(data, filename, None)
    assert time.monotonic() - started < 1
    assert parse(data, Detected("application/vnd.ms-outlook", FileType.EMAIL, "msg")).text is None


#: Enough sectors for 110 / 237 FAT sectors (1 / 2 DIFAT sectors): half of what the FAT
#: maps (128 entries a sector), the most a file cut short may lack.
_FOR_110_FAT = 54 * 128 + 1
_FOR_237_FAT = 118 * 128 + 1


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        pytest.param(hostile_ole(), "2147483648 FAT sectors for a file of 2 sectors", id="fat"),
        pytest.param(hostile_ole(1, shift=20), "sector size of 2**20", id="sector-size"),
        pytest.param(hostile_ole(4), "4 FAT sectors for a file of 2 sectors", id="fat-slack"),
        pytest.param(hostile_ole(1, 5), "5 DIFAT sectors for 1 FAT sectors", id="difat-count"),
        pytest.param(
            hostile_ole(110, sectors=_FOR_110_FAT, difat_start=_FOR_110_FAT),
            "leaves the file",
            id="difat-outside",
        ),
        pytest.param(
            hostile_ole(237, sectors=_FOR_237_FAT, next_difat=0), "loops", id="difat-loop"
        ),
    ],
)
def test_ole_header_check_refusals(data: bytes, reason: str) -> None:
    with pytest.raises(OleRefused, match=re.escape(reason)):
        check_header(data)


def test_ole_header_check_passes_what_olefile_reads() -> None:
    check_header(make_msg())
    check_header(hostile_ole(3, sectors=2))
    check_header(hostile_ole(110, 1, sectors=_FOR_110_FAT, next_difat=_FREE))


# --- images and TIFF -------------------------------------------------------------------------


def test_images_have_no_text() -> None:
    png = io.BytesIO()
    Image.new("RGB", (4, 4)).save(png, format="PNG")
    result = parse(png.getvalue(), detect(png.getvalue(), "p.png", "image/png"))
    assert result.text is None
    tiff = make_tiff(2)
    assert parse(tiff, detect(tiff, "s.tiff", None)).text is None


# --- archives as uploads, preview ------------------------------------------------------------


def test_archive_text_is_its_member_list() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("repo/src/app.py", "print(1)")
        zf.writestr("repo/README.md", "# hi")
    data = out.getvalue()
    assert parsed_text(data, "repo.zip") == "repo/src/app.py\nrepo/README.md"
    with pytest.raises(ArchiveNotArchive):
        detect(b"not a zip", "repo.zip", "application/zip")


def test_preview() -> None:
    assert preview(None) is None
    assert preview("") is None
    assert preview("  \n\n ") is None
    assert preview("\n\na\nb\nc\nd") == "a\nb\nc"
    assert preview("x" * 1000) == "x" * 240
    assert preview(parsed_text(make_pdf(["Title", "more"]), "r.pdf")) == "Title\n\nmore"


def test_every_refusal_is_an_invalid_input_with_a_rule() -> None:
    import docproc_common.parsing as parsing

    refusals = [
        getattr(parsing, name)
        for name in parsing.__all__
        if isinstance(getattr(parsing, name), type)
        and issubclass(getattr(parsing, name), parsing.ParsingRefused)
    ]
    assert len(refusals) > 15
    rules = {cls.rule for cls in refusals}
    assert len(rules) == len(refusals)
    for cls in refusals:
        assert issubclass(cls, InvalidInput)
        assert cls("message").status_code == 400
