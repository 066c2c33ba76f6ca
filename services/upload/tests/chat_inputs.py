"""Files for the chat-upload tests, generated at test time (no binary fixtures).

The OLE/CFB writer (``make_msg``) and the zip-bomb builders come from the parsing
library's own unit tests, loaded by path, the archive builders from docproc_testing; the rest
are small builders here.
"""

from __future__ import annotations

import importlib.util
import io
import struct
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import openpyxl
import pptx
import pymupdf

# re-exported: the tests build their archives with gen.*
from docproc_testing.archives import BILLION_LAUGHS as BILLION_LAUGHS
from docproc_testing.archives import make_tgz as make_tgz
from docproc_testing.archives import make_zip as make_zip
from docproc_testing.archives import rewrite_member
from docproc_testing.archives import tar_dir as tar_dir
from docproc_testing.archives import tar_file as tar_file
from docproc_testing.archives import tar_special as tar_special
from docproc_testing.archives import zip_info as zip_info
from docproc_testing.documents import make_docx as make_docx
from docproc_testing.documents import make_pdf as make_pdf
from docproc_testing.office import SOFFICE as SOFFICE  # re-exported: tests skip on it
from docproc_testing.office import soffice_convert as convert
from odf.draw import Frame, Page, TextBox
from odf.opendocument import (
    OpenDocumentPresentation,
    OpenDocumentSpreadsheet,
    OpenDocumentText,
)
from odf.style import MasterPage, PageLayout
from odf.table import Table, TableCell, TableRow
from odf.text import P
from PIL import Image

_PARSING_TESTS = Path(__file__).resolve().parents[3] / "libs" / "common" / "tests" / "unit"


@cache
def parsing_tests(name: str) -> ModuleType:
    """One of the parsing library's test modules, for its builders."""
    path = _PARSING_TESTS / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"docproc_chat_reuse_{name}", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


# --- documents ----------------------------------------------------------------------------


def make_xlsx(rows: Sequence[Sequence[object]], title: str = "Data") -> bytes:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = title
    for row in rows:
        sheet.append(list(row))
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def make_pptx(title: str, notes: str = "") -> bytes:
    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = title
    if notes:
        slide.notes_slide.notes_text_frame.text = notes
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


def _odf(document: Any) -> bytes:
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_odt(paragraphs: Sequence[str]) -> bytes:
    document = OpenDocumentText()
    for text in paragraphs:
        document.text.addElement(P(text=text))
    return _odf(document)


def make_ods(rows: Sequence[Sequence[str]]) -> bytes:
    document = OpenDocumentSpreadsheet()
    table = Table(name="Sheet1")
    for values in rows:
        row = TableRow()
        for value in values:
            cell = TableCell(valuetype="string")
            cell.addElement(P(text=value))
            row.addElement(cell)
        table.addElement(row)
    document.spreadsheet.addElement(table)
    return _odf(document)


def make_odp(text: str) -> bytes:
    document = OpenDocumentPresentation()
    layout = PageLayout(name="L")
    document.automaticstyles.addElement(layout)
    master = MasterPage(name="M", pagelayoutname=layout)
    document.masterstyles.addElement(master)
    page = Page(masterpagename=master)
    frame = Frame(width="20cm", height="5cm", x="1cm", y="1cm")
    box = TextBox()
    box.addElement(P(text=text))
    frame.addElement(box)
    page.addElement(frame)
    document.presentation.addElement(page)
    return _odf(document)


def make_msg() -> bytes:
    return bytes(parsing_tests("test_parsing").make_msg())


def hostile_ole() -> bytes:
    """The OLE header that kept olefile reading one DIFAT sector for good (test_parsing)."""
    return bytes(parsing_tests("test_parsing").hostile_ole())


def soffice_convert(data: bytes, suffix: str, target: str) -> bytes:
    """Convert with LibreOffice (``.docx`` -> ``doc``, ``.xlsx`` -> ``xls``)."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        source = work / f"in{suffix}"
        source.write_bytes(data)
        return convert(work, source, target)


# --- images ---------------------------------------------------------------------------------


def make_image(fmt: str, size: tuple[int, int] = (16, 12)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(out, format=fmt)
    return out.getvalue()


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def image_declaring(fmt: str, width: int, height: int) -> bytes:
    """A PNG, GIF, JPEG or WebP whose header declares ``width`` x ``height`` (no real pixels)."""
    if fmt == "PNG":
        ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
        return (
            b"\x89PNG\r\n\x1a\n"
            + _png_chunk(b"IHDR", ihdr)
            + _png_chunk(b"IDAT", zlib.compress(b"\x00" * 4))
            + _png_chunk(b"IEND", b"")
        )
    if fmt == "GIF":
        screen = struct.pack("<HHBBB", width, height, 0, 0, 0)
        frame = b"\x2c" + struct.pack("<HHHHB", 0, 0, width, height, 0)
        return b"GIF89a" + screen + frame + b"\x02\x02\x44\x01\x00\x3b"
    if fmt == "JPEG":
        sof = struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00"
        return b"\xff\xd8\xff\xc0" + struct.pack(">H", len(sof) + 2) + sof + b"\xff\xd9"
    assert fmt == "WEBP"
    canvas = b"\x00" * 4 + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    body = b"WEBPVP8X" + struct.pack("<I", len(canvas)) + canvas
    return b"RIFF" + struct.pack("<I", len(body)) + body


def tiff_declaring(sizes: Sequence[tuple[int, int]]) -> bytes:
    """A little-endian TIFF whose pages declare these (width, height), 8 bytes of pixels each."""
    out = bytearray(b"II*\x00" + struct.pack("<I", 8))
    for index, (width, height) in enumerate(sizes):
        tags = [(256, width), (257, height), (258, 1), (259, 1), (262, 1), (273, 0)]
        tags += [(277, 1), (278, height), (279, 8)]
        pixels_at = len(out) + 2 + 12 * len(tags) + 4
        out += struct.pack("<H", len(tags))
        for tag, value in tags:
            out += struct.pack("<HHII", tag, 4, 1, pixels_at if tag == 273 else value)
        out += struct.pack("<I", pixels_at + 8 if index + 1 < len(sizes) else 0)
        out += b"\x00" * 8
    return bytes(out)


def make_tiff(pages: int) -> bytes:
    frames = [Image.new("RGB", (20 + i, 10), (i * 20 % 255, 0, 0)) for i in range(pages)]
    out = io.BytesIO()
    frames[0].save(out, format="TIFF", save_all=True, append_images=frames[1:])
    return out.getvalue()


# --- archives -------------------------------------------------------------------------------


def encrypted_zip() -> bytes:
    """A zip whose member says it is encrypted (general-purpose flag bit 0)."""
    raw = bytearray(make_zip([("secret.txt", b"hidden")]))
    local = raw.find(b"PK\x03\x04")
    central = raw.find(b"PK\x01\x02")
    struct.pack_into("<H", raw, local + 6, 1)
    struct.pack_into("<H", raw, central + 8, 1)
    return bytes(raw)


def overlapping_zip(copies: int = 200) -> bytes:
    return bytes(parsing_tests("test_archives").overlapping_zip(copies))


def quoted_overlap_zip() -> bytes:
    return bytes(parsing_tests("test_archives").quoted_overlap_zip())


def deflate_bomb_zip(megabytes: int = 64) -> bytes:
    """One member of zeros: about 1000x smaller deflated than unpacked."""
    return make_zip([("zeros.bin", b"\x00" * (megabytes << 20))], level=9)


def deflate_bomb_tgz(megabytes: int = 64) -> bytes:
    return make_tgz([tar_file("zeros.bin", b"\x00" * (megabytes << 20))])


# --- hostile office files and PDFs ------------------------------------------------------------


EXTERNAL_ENTITY = (
    '<?xml version="1.0"?>\n<!DOCTYPE w [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
)


def docx_with_prolog(prolog: str) -> bytes:
    data = make_docx(["innocent"])
    body = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml").decode()
    body = body.split("?>", 1)[1] if body.startswith("<?xml") else body
    return rewrite_member(data, "word/document.xml", (prolog + body.lstrip()).encode())


def xlsx_with_prolog(prolog: str) -> bytes:
    data = make_xlsx([["a", "b"]])
    body = zipfile.ZipFile(io.BytesIO(data)).read("xl/worksheets/sheet1.xml").decode()
    body = body.split("?>", 1)[1] if body.startswith("<?xml") else body
    return rewrite_member(data, "xl/worksheets/sheet1.xml", (prolog + body.lstrip()).encode())


def xlsx_huge_dimension() -> bytes:
    """Two real cells in a sheet that declares the whole grid (A1:XFD1048576)."""
    data = make_xlsx([["month", "total"], ["jan", 10]])
    sheet = zipfile.ZipFile(io.BytesIO(data)).read("xl/worksheets/sheet1.xml").decode()
    start = sheet.index("<dimension ")
    end = sheet.index("/>", start) + 2
    sheet = sheet[:start] + '<dimension ref="A1:XFD1048576"/>' + sheet[end:]
    return rewrite_member(data, "xl/worksheets/sheet1.xml", sheet.encode())


def _raw_pdf(objects: Sequence[bytes], root: int = 1) -> bytes:
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root {root} 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    ).encode()
    return bytes(out)


def pdf_cyclic_page_tree() -> bytes:
    """A page tree whose Pages node lists itself as its own kid (and claims a huge count)."""
    return _raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 1000000000 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
        ]
    )


def pdf_flate_bomb(megabytes: int = 200) -> bytes:
    """One page whose content stream inflates to ``megabytes`` of spaces."""
    packed = zlib.compress(b" " * (megabytes << 20), 9)
    stream = (
        f"<< /Length {len(packed)} /Filter /FlateDecode >>\nstream\n".encode()
        + packed
        + b"\nendstream"
    )
    return _raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
            stream,
        ]
    )


def pdf_nested_forms(depth: int, fanout: int = 10) -> bytes:
    """One page drawing a form that draws the next ``fanout`` times, ``depth`` forms deep:
    ``fanout ** depth`` draws from under 2 KB, without the memory an inflated stream needs.

    The CPU it costs grows tenfold a level (depth 6 took 0.7 s to extract on this project's
    2-core machine, so depth 9 takes minutes): a parse over any CPU budget of seconds, on
    any machine, whatever its speed.
    """
    helvetica = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    content = b"/F Do"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /XObject << /F 5 0 R >> >> >>",
        f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream",
    ]
    for level in range(depth):
        if level == depth - 1:
            body = b"BT /H 12 Tf 72 72 Td (deep) Tj ET"
            resources = b"<< /Font << /H " + helvetica + b" >> >>"
        else:
            body = b" ".join([b"/F Do"] * fanout)
            resources = f"<< /XObject << /F {6 + level} 0 R >> >>".encode()
        objects.append(
            b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources "
            + resources
            + f" /Length {len(body)} >>\nstream\n".encode()
            + body
            + b"\nendstream"
        )
    return _raw_pdf(objects)


def pdf_many_pages(count: int) -> bytes:
    """``count`` pages sharing one tiny content stream."""
    document: Any = pymupdf.open()  # type: ignore[no-untyped-call]
    page = document.new_page()
    page.insert_text((72, 72), "same page")
    for _ in range(count - 1):
        document.fullcopy_page(0)
    return bytes(document.tobytes(garbage=0))
