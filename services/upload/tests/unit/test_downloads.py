"""The download headers: a hostile name can neither break out of the header nor be sniffed."""

from __future__ import annotations

from urllib.parse import unquote

import pytest
from docproc_upload.downloads import content_disposition, download_headers


def test_the_fallback_is_ascii_and_the_exact_name_is_utf8() -> None:
    header = content_disposition('ré"port.tiff')
    assert header.startswith('attachment; filename="r__port.tiff"')
    assert "filename*=UTF-8''r%C3%A9%22port.tiff" in header
    assert content_disposition("a.png", inline=True).startswith("inline;")


@pytest.mark.parametrize(
    "name",
    [
        'a"; filename="evil.html',
        "a\r\nSet-Cookie: x=1.pdf",
        "back\\slash;semi.txt",
        "informe-año-ñ.pdf",
        "\u202etxt.exe",
        "报告.docx",
    ],
)
def test_no_name_splits_or_escapes_the_header(name: str) -> None:
    header = content_disposition(name)
    assert header.isascii() and "\r" not in header and "\n" not in header
    fallback = header.split('filename="', 1)[1].split('"', 1)[0]
    assert (
        header
        == f"attachment; filename=\"{fallback}\"; filename*=UTF-8''" + header.rsplit("''", 1)[1]
    )
    assert all(c not in fallback for c in '"\\;')
    assert unquote(header.rsplit("UTF-8''", 1)[1]) == name


def test_every_download_is_nosniff() -> None:
    headers = download_headers("x.html")
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Content-Disposition"].startswith("attachment;")
