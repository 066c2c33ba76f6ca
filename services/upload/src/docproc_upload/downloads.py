"""The headers every file download answers with: a named file the browser never sniffs or runs.

``Content-Disposition`` per RFC 6266 and RFC 5987: an ASCII fallback ``filename="..."``
(anything outside printable ASCII, a quote, a backslash or a ``;`` becomes ``_``, so a
name can neither end the quoted string nor split the header with CR/LF) and the exact
name as ``filename*=UTF-8''...``, percent-encoded.
"""

from __future__ import annotations

from urllib.parse import quote


def content_disposition(filename: str, *, inline: bool = False) -> str:
    fallback = "".join(
        c if c.isascii() and c.isprintable() and c not in '"\\;' else "_" for c in filename
    )
    kind = "inline" if inline else "attachment"
    return f"{kind}; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


def download_headers(filename: str, *, inline: bool = False) -> dict[str, str]:
    return {
        "Content-Disposition": content_disposition(filename, inline=inline),
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'; sandbox",
        "Cache-Control": "private, no-store",
    }
