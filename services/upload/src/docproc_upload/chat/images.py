"""Image page sizes, and TIFF pages as PNG for showing a TIFF to a model (a chat upload's
check and its render).

An image is refused when a page it will be shown by is above MAX_PAGE_PIXELS pixels
(``docproc_common.parsing.types``, which the parser's PDF images are held to too),
read from its header before anything is decoded: at upload (``check_pages``) and
again when a TIFF is converted (``tiff_to_png_pages``), so a file stored before the
check cannot fail a render either.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

from docproc_common.parsing.errors import ContentMismatch, ImageTooLarge
from docproc_common.parsing.types import MAX_PAGE_PIXELS, Detected, FileType
from PIL import Image, ImageSequence, UnidentifiedImageError


def _too_large(page: str, size: tuple[int, int] | None = None) -> ImageTooLarge:
    dimensions = f" {size[0]}x{size[1]} pixels," if size else ""
    return ImageTooLarge(f"{page} is{dimensions} above the {MAX_PAGE_PIXELS} pixel limit")


def _open(data: bytes, tiff: bool) -> Image.Image:
    """The image with only its header read. Pillow refuses a first page far above its own
    limit while opening (``DecompressionBombError``): that is this module's refusal too."""
    try:
        return Image.open(io.BytesIO(data))
    except Image.DecompressionBombError:
        raise _too_large("TIFF page 1" if tiff else "The image") from None
    except (UnidentifiedImageError, OSError, ValueError, EOFError):
        what = "TIFF image" if tiff else "image"
        raise ContentMismatch(f"The file content is not a valid {what}") from None


def _tiff_pages(image: Image.Image, max_pages: int) -> Iterator[Image.Image]:
    """The first ``max_pages`` TIFF pages, each refused above the limit before it is decoded."""
    if image.format != "TIFF":
        raise ContentMismatch("The file content is not a valid TIFF image")
    page = 0
    try:
        for frame in ImageSequence.Iterator(image):
            page += 1
            if page > max_pages:
                return
            width, height = frame.size
            if width * height > MAX_PAGE_PIXELS:
                raise _too_large(f"TIFF page {page}", (width, height))
            yield frame
    except Image.DecompressionBombError:
        raise _too_large(f"TIFF page {page + 1}") from None
    except (OSError, ValueError, EOFError):
        raise ContentMismatch("The TIFF image is corrupt") from None


def check_pages(data: bytes, detected: Detected, max_pages: int) -> None:
    """Refuse an image above MAX_PAGE_PIXELS, or a TIFF with such a page among its first
    ``max_pages`` (the pages a model is shown), reading headers only.

    Only the size is this check's to refuse: an image whose header does not read is
    stored as it came (a TIFF's render then says its pages could not be shown).
    """
    tiff = detected.file_type is FileType.TIFF
    try:
        with _open(data, tiff) as image:
            if tiff:
                for _ in _tiff_pages(image, max_pages):
                    pass
            elif image.size[0] * image.size[1] > MAX_PAGE_PIXELS:
                raise _too_large("The image", image.size)
    except ContentMismatch:
        return


def tiff_to_png_pages(data: bytes, max_pages: int) -> list[bytes]:
    """The first ``max_pages`` pages of a TIFF, each encoded as PNG.

    A page above MAX_PAGE_PIXELS pixels is refused before it is decoded.
    """
    pages: list[bytes] = []
    with _open(data, tiff=True) as image:
        for frame in _tiff_pages(image, max_pages):
            try:
                page = frame.convert("RGBA" if "A" in frame.getbands() else "RGB")
            except (OSError, ValueError, EOFError):
                raise ContentMismatch("The TIFF image is corrupt") from None
            out = io.BytesIO()
            page.save(out, format="PNG")
            pages.append(out.getvalue())
    return pages
