"""PDF text with PyMuPDF for a knowledge base, and the embedded images to describe.

Runs in the isolated parse child (single-threaded, so no lock is needed here; in a
threaded process take ``docproc_common.parsing.PYMUPDF_LOCK``).

Image extraction happens only when the collection asked for image descriptions.
Then each image xref is extracted **once per document**, the repeated references
to one xref on a page are grouped into one, and identical image bytes (two xrefs,
same picture: a logo saved twice) share one digest, so they are described once.
Every page keeps the ordered digests it references: the description goes into the
text of each page that shows the image, while the bytes never reach a chunk.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Any

import pymupdf
from docproc_common.parsing.types import MAX_PAGE_PIXELS

from docproc_parser.engine import errors
from docproc_parser.engine.jobs import ExtractedImage, OutlineEntry, PageText

log = logging.getLogger(__name__)

#: Smaller than this on either side is decoration (bullets, rules, spacer pixels).
MIN_IMAGE_SIDE = 32
#: Larger than this is not sent to a vision model.
MAX_IMAGE_BYTES = 10 * 2**20
#: Formats a vision endpoint takes as they are; anything else is re-encoded as PNG.
_PASSTHROUGH = {"png": "image/png", "jpeg": "image/jpeg", "jpg": "image/jpeg"}


@dataclass(frozen=True, slots=True)
class PdfText:
    pages: list[PageText]
    page_count: int
    truncated: bool
    images: dict[str, ExtractedImage]
    images_skipped: int = 0
    outline: tuple[OutlineEntry, ...] = ()


def open_pdf(data: bytes) -> Any:
    """The open document; ``DocumentUnreadable`` for a corrupted or password-protected PDF."""
    try:
        doc: Any = pymupdf.open(stream=data, filetype="pdf")  # type: ignore[no-untyped-call]
    except Exception as exc:
        log.warning("PyMuPDF could not open the PDF: %s", exc)
        raise errors.DocumentUnreadable(
            type(exc).__name__,
            "the PDF is damaged or not a PDF; check that it opens, then retry the upload",
            logged=True,
        ) from exc
    if doc.needs_pass and not doc.authenticate(""):
        doc.close()
        raise errors.encrypted()
    return doc


def probe_pdf(data: bytes) -> int:
    """The page count of a readable PDF (refusing damaged and password-protected ones)."""
    doc = open_pdf(data)
    try:
        return int(doc.page_count)
    finally:
        doc.close()


class _Images:
    """Per document: xref -> digest (extracted once), digest -> image (described once)."""

    def __init__(self, doc: Any, max_images: int) -> None:
        self._doc = doc
        self._max = max_images
        self.by_xref: dict[int, str | None] = {}
        self.unique: dict[str, ExtractedImage] = {}
        self.skipped = 0

    def digest(self, xref: int) -> str | None:
        if xref not in self.by_xref:
            self.by_xref[xref] = self._extract(xref)
        return self.by_xref[xref]

    def _declared_pixels(self, xref: int) -> int:
        """Width x height as the image's dictionary declares them (0 when it does not)."""
        try:
            width, height = (int(self._doc.xref_get_key(xref, k)[1]) for k in ("Width", "Height"))
        except (ValueError, RuntimeError):
            return 0
        return width * height

    def _extract(self, xref: int) -> str | None:
        if self._declared_pixels(xref) > MAX_PAGE_PIXELS:  # extracting would decode it
            log.info("image xref %d is above %d pixels; skipped", xref, MAX_PAGE_PIXELS)
            return None
        try:
            info = self._doc.extract_image(xref)
        except Exception:  # noqa: BLE001 - an unreadable image is skipped, not the document
            log.info("image xref %d could not be extracted", xref, exc_info=True)
            return None
        if not info:
            return None
        width, height = int(info.get("width", 0)), int(info.get("height", 0))
        raw: bytes = info.get("image", b"")
        if min(width, height) < MIN_IMAGE_SIDE or not raw or len(raw) > MAX_IMAGE_BYTES:
            return None
        digest = hashlib.sha256(raw).hexdigest()
        if digest in self.unique:
            return digest
        if len(self.unique) >= self._max:
            self.skipped += 1
            return None
        ext = str(info.get("ext", "")).lower()
        mime = _PASSTHROUGH.get(ext)
        data = raw
        if mime is None:
            try:
                data, mime = self._as_png(xref), "image/png"
            except Exception:  # noqa: BLE001
                log.info("image xref %d could not be converted", xref, exc_info=True)
                return None
        self.unique[digest] = ExtractedImage(digest, data, mime, width, height)
        return digest

    def _as_png(self, xref: int) -> bytes:
        pix = pymupdf.Pixmap(self._doc, xref)  # type: ignore[no-untyped-call]
        if pix.n - pix.alpha >= 4:  # CMYK and friends: PNG wants RGB
            pix = pymupdf.Pixmap(pymupdf.csRGB, pix)  # type: ignore[no-untyped-call]
        return bytes(pix.tobytes("png"))  # type: ignore[no-untyped-call]


def read_outline(doc: Any) -> tuple[OutlineEntry, ...]:
    """The PDF's outline (bookmarks), in document order; none when it has none, and none
    when it cannot be read (a damaged outline costs the headings, not the document)."""
    try:
        toc = doc.get_toc(simple=True)
    except Exception:  # noqa: BLE001
        log.info("the PDF's outline could not be read", exc_info=True)
        return ()
    return tuple(
        OutlineEntry(int(level), str(title).replace("\x00", "").strip(), int(page))
        for level, title, page in toc
    )


def extract_pdf(
    data: bytes, *, max_pages: int, max_chars: int, describe_images: bool, max_images: int
) -> PdfText:
    doc = open_pdf(data)
    try:
        images = _Images(doc, max_images) if describe_images else None
        pages: list[PageText] = []
        left = max_chars
        truncated = doc.page_count > max_pages
        for index in range(min(doc.page_count, max_pages)):
            page = doc.load_page(index)
            text = str(page.get_text()).replace("\x00", "").strip("\n")
            if len(text) > left:
                text, truncated = text[:left], True
            left -= len(text)
            refs: tuple[str, ...] = ()
            if images is not None:
                # One page may reference an xref many times (several XObjects): grouped here.
                found = (images.digest(int(img[0])) for img in page.get_images(full=True))
                refs = tuple(dict.fromkeys(d for d in found if d is not None))
            pages.append(PageText(text, refs))
            if left <= 0:
                truncated = truncated or index + 1 < min(doc.page_count, max_pages)
                break
        return PdfText(
            pages=pages,
            page_count=int(doc.page_count),
            truncated=truncated,
            images=images.unique if images else {},
            images_skipped=images.skipped if images else 0,
            outline=read_outline(doc),
        )
    finally:
        doc.close()
