"""A chat image's page sizes, read from its header (``docproc_upload.chat.images``): refused
above MAX_PAGE_PIXELS at upload and when a TIFF is shown; a TIFF's pages as PNG."""

from __future__ import annotations

import io

import pytest
from chat_inputs import image_declaring, make_tiff, tiff_declaring
from docproc_common.parsing import ContentMismatch, ImageTooLarge, detect
from docproc_upload.chat.images import check_pages, tiff_to_png_pages
from PIL import Image


@pytest.mark.filterwarnings("ignore:Corrupt EXIF data")
def test_tiff_to_png_pages_caps_pages() -> None:
    pages = tiff_to_png_pages(make_tiff(3), max_pages=2)
    assert len(pages) == 2
    sizes = [Image.open(io.BytesIO(p)).size for p in pages]
    assert sizes == [(20, 10), (21, 10)]
    assert all(p.startswith(b"\x89PNG") for p in pages)
    with pytest.raises(ContentMismatch):
        tiff_to_png_pages(b"II*\x00garbage", max_pages=1)


_HUGE = (30000, 30000)  # far past Pillow's own limit: refused by Pillow while opening


_LARGE = (9000, 9000)  # past MAX_PAGE_PIXELS, below Pillow's limits: read, then refused


@pytest.mark.parametrize(
    ("fmt", "size", "message"),
    [
        ("PNG", _HUGE, "The image is above the 67108864 pixel limit"),
        ("PNG", _LARGE, "The image is 9000x9000 pixels, above the 67108864 pixel limit"),
        ("GIF", _HUGE, "The image is above"),
        ("GIF", _LARGE, "The image is 9000x9000 pixels"),
        ("JPEG", _HUGE, "The image is above"),
        ("JPEG", _LARGE, "The image is 9000x9000 pixels"),
        ("WEBP", _HUGE, "The image is above"),
    ],
)
@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_an_image_above_the_page_limit_is_refused_from_its_header(
    fmt: str, size: tuple[int, int], message: str
) -> None:
    data = image_declaring(fmt, *size)
    detected = detect(data, f"big.{fmt.lower()}", None)
    with pytest.raises(ImageTooLarge, match=message) as refused:
        check_pages(data, detected, max_pages=5)
    assert refused.value.details == {"rule": "image_too_large"}
    small = image_declaring(fmt, 16, 12)
    check_pages(small, detect(small, f"small.{fmt.lower()}", None), max_pages=5)


@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        ([_HUGE], "TIFF page 1 is above the 67108864 pixel limit"),
        ([_LARGE], "TIFF page 1 is 9000x9000 pixels"),
        ([(10, 10), _HUGE], "TIFF page 2 is 30000x30000 pixels"),
    ],
)
@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_a_tiff_page_above_the_limit_is_refused_at_upload_and_when_shown(
    sizes: list[tuple[int, int]], message: str
) -> None:
    data = tiff_declaring(sizes)
    detected = detect(data, "fax.tiff", None)
    with pytest.raises(ImageTooLarge, match=message):
        check_pages(data, detected, max_pages=5)
    with pytest.raises(ImageTooLarge, match=message):
        tiff_to_png_pages(data, max_pages=5)


def test_only_the_pages_shown_are_checked_and_an_unreadable_header_is_not_this_checks() -> None:
    beyond = tiff_declaring([(10, 10)] * 5 + [_HUGE])
    check_pages(beyond, detect(beyond, "fax.tiff", None), max_pages=5)
    with pytest.raises(ImageTooLarge, match="TIFF page 6"):
        check_pages(beyond, detect(beyond, "fax.tiff", None), max_pages=6)
    garbage = b"\x89PNG\r\n\x1a\n" + b"\x00" * 40
    check_pages(garbage, detect(garbage, "p.png", None), max_pages=5)
