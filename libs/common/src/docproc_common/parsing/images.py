"""TIFF pages as PNG, for showing a TIFF to a model."""

from __future__ import annotations

import io

from PIL import Image, ImageSequence, UnidentifiedImageError

from .errors import ContentMismatch, ImageTooLarge

MAX_PAGE_PIXELS = 64 * 2**20


def tiff_to_png_pages(data: bytes, max_pages: int) -> list[bytes]:
    """The first ``max_pages`` pages of a TIFF, each encoded as PNG.

    A page above MAX_PAGE_PIXELS pixels is refused before it is decoded.
    """
    try:
        image = Image.open(io.BytesIO(data))
    except (UnidentifiedImageError, OSError, ValueError):
        raise ContentMismatch("The file content is not a valid TIFF image") from None
    pages: list[bytes] = []
    with image:
        if image.format != "TIFF":
            raise ContentMismatch("The file content is not a valid TIFF image")
        try:
            for index, frame in enumerate(ImageSequence.Iterator(image)):
                if index >= max_pages:
                    break
                width, height = frame.size
                if width * height > MAX_PAGE_PIXELS:
                    raise ImageTooLarge(
                        f"TIFF page {index + 1} is {width}x{height} pixels, above the "
                        f"{MAX_PAGE_PIXELS} pixel limit"
                    )
                page = frame.convert("RGBA" if "A" in frame.getbands() else "RGB")
                out = io.BytesIO()
                page.save(out, format="PNG")
                pages.append(out.getvalue())
        except (OSError, ValueError, EOFError, Image.DecompressionBombError):
            raise ContentMismatch("The TIFF image is corrupt") from None
    return pages
