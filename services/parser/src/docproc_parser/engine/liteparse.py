"""The LiteParse route: PDFs, images and (through LibreOffice) office formats, with OCR.

LiteParse (PyPI ``liteparse``, run-llama) is a Rust library over PDFium with Tesseract
compiled in. It reads PDFs and images itself and converts office formats by running
LibreOffice (``soffice``/``libreoffice`` on ``PATH``) into a temporary PDF.

Two things it would otherwise do on its own, and that this module forbids:

* **Downloading OCR data.** When the language data for ``ocr_language`` is not in
  its ``tessdata_path``, LiteParse downloads ``<lang>.traineddata`` from GitHub at
  parse time. Here the path is always the system's Tesseract data (the Debian
  ``tesseract-ocr-<lang>`` packages) and a language whose file is missing is never
  handed to it: OCR is switched off instead and the document says which package is
  missing if that leaves it empty. (The isolation child also points every proxy at
  a closed port, so a download attempt could not leave the machine anyway.)
* **Running unbounded.** It runs inside the isolated parse child: memory cap, deadline,
  and a killed process group take LibreOffice down with it.

``auto_ocr`` is the seed's cheap text-layer check: for a PDF, ``is_complex`` looks at
the native text of each page and OCR is enabled only when some page needs it.
"""

from __future__ import annotations

import glob
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

from docproc_parser.engine import errors

log = logging.getLogger(__name__)

#: A fenced block with nothing inside: what the markdown renderer writes for a page it could not read.
_EMPTY_FENCE = re.compile(
    r"^[ \t]*(```|~~~)[\w+-]*[ \t]*\n(?:[ \t]*\n)*[ \t]*\1[ \t]*$", re.MULTILINE
)

_TESSDATA_GLOBS = (
    "/usr/share/tesseract-ocr/*/tessdata",
    "/usr/share/tesseract-ocr/tessdata",
    "/usr/share/tessdata",
    "/usr/local/share/tessdata",
)


def tessdata_dir() -> str | None:
    """The system's Tesseract data directory (``TESSDATA_PREFIX`` first), if any."""
    env = os.environ.get("TESSDATA_PREFIX")
    candidates = [env, os.path.join(env, "tessdata")] if env else []
    for pattern in _TESSDATA_GLOBS:
        candidates.extend(sorted(glob.glob(pattern), reverse=True))
    for path in candidates:
        if path and glob.glob(os.path.join(path, "*.traineddata")):
            return path
    return None


def missing_languages(language: str, tessdata: str | None) -> list[str]:
    """The codes of ``eng+pol`` whose ``.traineddata`` is not installed."""
    codes = [c for c in language.split("+") if c]
    if tessdata is None:
        return codes
    return [c for c in codes if not os.path.isfile(os.path.join(tessdata, f"{c}.traineddata"))]


@dataclass(frozen=True, slots=True)
class LiteParseOptions:
    output_format: str
    auto_ocr: bool
    ocr_language: str
    dpi: int
    max_pages: int


@dataclass(frozen=True, slots=True)
class LiteParseText:
    pages: tuple[str, ...]
    """Each page's text (or markdown), in order from the first; an unread page is empty."""
    page_count: int | None
    ocr: bool
    missing_languages: tuple[str, ...]


def page_text(raw: str) -> str:
    """One page as LiteParse wrote it, without NULs nor the empty fenced block it writes for
    a page it could not read."""
    return _EMPTY_FENCE.sub("", raw.replace("\x00", "")).strip("\n")


def parse_file(path: Path, extension: str, options: LiteParseOptions) -> LiteParseText:
    """Parse one file (its name must carry its extension: LiteParse routes by it)."""
    from liteparse import LiteParse, ParseError

    tessdata = tessdata_dir()
    missing = tuple(missing_languages(options.ocr_language, tessdata))
    ocr = options.auto_ocr and not missing and tessdata is not None
    if missing and options.auto_ocr:
        log.warning(
            "OCR language data missing for %s (install tesseract-ocr-%s); OCR is off",
            "+".join(missing),
            " tesseract-ocr-".join(missing),
        )
    common = {
        "quiet": True,
        "num_workers": 1,
        "max_pages": options.max_pages,
        "dpi": float(options.dpi),
        "ocr_language": options.ocr_language,
        "tessdata_path": tessdata,
    }
    try:
        if ocr and extension == "pdf":
            # The cheap text-layer pass: OCR only when some page has no usable text.
            probe = LiteParse(ocr_enabled=False, **common)
            ocr = any(page.needs_ocr for page in probe.is_complex(str(path)))
        parser = LiteParse(
            ocr_enabled=ocr,
            output_format=options.output_format,
            image_mode="off",
            **common,
        )
        result = parser.parse(str(path))
    except ParseError as exc:
        message = str(exc)
        log.warning("LiteParse failed: %s", message)
        if "password" in message.lower():
            raise errors.encrypted() from exc
        if "unsupported file format" in message.lower() or "libreoffice" in message.lower():
            raise errors.DocumentUnreadable(
                "ConversionError",
                "LiteParse could not convert the file; check that it opens in an office "
                "application, then retry the upload",
                logged=True,
            ) from exc
        raise errors.DocumentUnreadable("ParseError", errors.GENERIC_ADVICE, logged=True) from exc
    markdown = options.output_format == "markdown"
    texts: list[str] = []
    for page in sorted(result.pages, key=lambda p: p.page_num):
        # Pages are numbered from 1 in the order read; a gap is a page that gave nothing.
        texts += [""] * max(page.page_num - len(texts) - 1, 0)
        text = page_text(page.markdown if markdown else page.text)
        if markdown and not text.strip():
            # LiteParse's markdown drops lines it takes for running headers and footers;
            # where that empties a page its text layer still holds (the same lines at the
            # same places on every page), the page is read as text instead of lost.
            text = page_text(page.text)
        texts.append(text)
    return LiteParseText(
        pages=tuple(texts),
        page_count=result.total_pages or None,
        ocr=ocr,
        missing_languages=missing,
    )
