"""One generated sample per extension a parser may route, each carrying the same sentence.

``make(ext)`` returns the bytes of a small, valid file of that type whose text (or,
for images, whose pixels) says :data:`SENTENCE`. Formats that only LibreOffice
writes (``.doc``, ``.xls``, ``.ppt``, ``.odt``, ``.ods``, ``.odp``) are converted from
the OOXML samples with a private LibreOffice profile.
"""

from __future__ import annotations

import base64
import io
import shutil
import subprocess
import tempfile
import zipfile
from functools import cache
from pathlib import Path
from typing import Any

import docx
import openpyxl
import pptx
import pymupdf as _pymupdf
import pytest
from docproc_common.formats import office_components
from docproc_parser.engine import liteparse
from PIL import Image

SENTENCE = "The capybara is the largest rodent"
MARKER = "capybara"

# `make system-packages` installs these where it can; elsewhere their tests skip, naming them
needs_tesseract = pytest.mark.skipif(
    liteparse.tessdata_dir() is None,
    reason="Tesseract language data is not installed (tesseract-ocr)",
)
needs_calc = pytest.mark.skipif(
    "calc" not in office_components(),
    reason="LibreOffice Calc is not installed (libreoffice-calc-nogui)",
)

mu: Any = _pymupdf  # PyMuPDF is untyped


def pdf(
    pages: list[str] | None = None,
    fontsize: float = 11,
    outline: list[tuple[int, str, int]] | None = None,
) -> bytes:
    """A PDF of ``pages`` of text; ``outline``: its bookmarks, (level, title, page)."""
    doc: Any = mu.open()
    for text in pages or [SENTENCE + "."]:
        page = doc.new_page()
        page.insert_textbox(mu.Rect(50, 50, 550, 800), text, fontsize=fontsize)
    if outline:
        doc.set_toc([list(entry) for entry in outline])
    data: bytes = doc.tobytes()
    return data


def text_png(text: str = SENTENCE, dpi: int = 150) -> bytes:
    """A page with ``text`` in large print, rasterized: readable by OCR, no text layer."""
    doc: Any = mu.open()
    page = doc.new_page(width=500, height=160)
    page.insert_textbox(mu.Rect(20, 20, 480, 150), text, fontsize=22)
    png: bytes = page.get_pixmap(dpi=dpi).tobytes("png")
    return png


def scanned_pdf(pages: int = 1, dpi: int = 150, text: str = SENTENCE) -> bytes:
    """A PDF of page images only (no text layer), like a scanner's."""
    png = text_png(text, dpi)
    doc: Any = mu.open()
    for _ in range(pages):
        page = doc.new_page(width=500, height=160)
        page.insert_image(page.rect, stream=png)
    data: bytes = doc.tobytes()
    return data


def _image(fmt: str) -> bytes:
    buf = io.BytesIO()
    Image.open(io.BytesIO(text_png())).convert("RGB").save(buf, fmt)
    return buf.getvalue()


def _docx() -> bytes:
    document = docx.Document()
    document.add_heading("Rodents", 1)
    document.add_paragraph(SENTENCE + ".")
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


def _xlsx() -> bytes:
    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    ws.append(["animal", "fact"])
    ws.append(["capybara", "largest rodent"])
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _pptx() -> bytes:
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Rodents"
    slide.placeholders[1].text = SENTENCE
    buf = io.BytesIO()
    deck.save(buf)
    return buf.getvalue()


def _svg() -> bytes:
    png = base64.b64encode(text_png()).decode()
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
        'width="1042" height="333"><rect width="100%" height="100%" fill="white"/>'
        f'<image x="0" y="0" width="1042" height="333" xlink:href="data:image/png;base64,{png}"/>'
        "</svg>"
    ).encode()


def _epub() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        zf.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        zf.writestr(
            "content.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
            'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
            '<dc:identifier id="id">sample</dc:identifier><dc:title>Rodents</dc:title>'
            "<dc:language>en</dc:language></metadata><manifest>"
            '<item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest>'
            '<spine><itemref idref="c1"/></spine></package>',
        )
        zf.writestr(
            "c1.xhtml",
            '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>'
            + SENTENCE
            + "</p></body></html>",
        )
    return buf.getvalue()


def soffice() -> str | None:
    return shutil.which("soffice") or shutil.which("libreoffice")


@cache
def _converted(source_ext: str, target_ext: str) -> bytes:
    binary = soffice()
    if binary is None:
        raise RuntimeError(f"LibreOffice is needed to write a .{target_ext} sample")
    source = {"docx": _docx, "xlsx": _xlsx, "pptx": _pptx}[source_ext]()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / f"sample.{source_ext}"
        src.write_bytes(source)
        subprocess.run(
            [
                binary,
                f"-env:UserInstallation=file://{tmp}/profile",
                "--headless",
                "--convert-to",
                target_ext,
                "--outdir",
                tmp,
                str(src),
            ],
            check=True,
            capture_output=True,
            timeout=180,
        )
        return (Path(tmp) / f"sample.{target_ext}").read_bytes()


_RTF = (r"{\rtf1\ansi\deff0{\fonttbl{\f0 Helvetica;}}\f0\fs24 " + SENTENCE + r".\par}").encode()

_MAKERS: dict[str, Any] = {
    "txt": lambda: (SENTENCE + ".\n").encode(),
    "md": lambda: f"# Rodents\n\n{SENTENCE}.\n".encode(),
    "csv": lambda: b"animal,fact\ncapybara,largest rodent\n",
    "html": lambda: f"<html><body><h1>Rodents</h1><p>{SENTENCE}.</p></body></html>".encode(),
    "htm": lambda: f"<html><body><p>{SENTENCE}.</p></body></html>".encode(),
    "rtf": lambda: _RTF,
    "docx": _docx,
    "xlsx": _xlsx,
    "pptx": _pptx,
    "pdf": pdf,
    "png": text_png,
    "jpg": lambda: _image("JPEG"),
    "jpeg": lambda: _image("JPEG"),
    "tif": lambda: _image("TIFF"),
    "tiff": lambda: _image("TIFF"),
    "webp": lambda: _image("WEBP"),
    "gif": lambda: _image("GIF"),
    "bmp": lambda: _image("BMP"),
    "svg": _svg,
    "epub": _epub,
    "odt": lambda: _converted("docx", "odt"),
    "doc": lambda: _converted("docx", "doc"),
    "ods": lambda: _converted("xlsx", "ods"),
    "xls": lambda: _converted("xlsx", "xls"),
    "odp": lambda: _converted("pptx", "odp"),
    "ppt": lambda: _converted("pptx", "ppt"),
}

EXTENSIONS = frozenset(_MAKERS)


def make(ext: str) -> bytes:
    """A sample ``.ext`` saying :data:`SENTENCE`; KeyError for a type nobody wrote a sample of."""
    data: bytes = _MAKERS[ext]()
    return data
