"""Plain text types: decoded as UTF-8 (replacing bad bytes), XML by its BOM or declaration."""

from __future__ import annotations

import codecs
import re

from .budget import TextBudget
from .types import ParsedText, ParseLimits

_CHUNK = 64 * 1024
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_XML_DECLARATION = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']""")


def sniff_encoding(data: bytes, is_xml: bool) -> tuple[str, int]:
    """The codec to decode with and how many BOM bytes to skip."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return codec, len(bom)
    if is_xml:
        match = _XML_DECLARATION.match(data[:1024])
        if match:
            name = match.group(1).decode("ascii")
            try:
                return codecs.lookup(name).name, 0
            except LookupError:
                pass
    return "utf-8", 0


def decode_into(data: bytes, budget: TextBudget, codec: str = "utf-8", start: int = 0) -> None:
    """Decode incrementally into the budget, stopping once it is spent."""
    decoder = codecs.getincrementaldecoder(codec)(errors="replace")
    for offset in range(start, len(data), _CHUNK):
        chunk = data[offset : offset + _CHUNK]
        final = offset + _CHUNK >= len(data)
        if not budget.add(decoder.decode(chunk, final=final)):
            return
    budget.add(decoder.decode(b"", final=True))


def parse_text(data: bytes, extension: str, limits: ParseLimits) -> ParsedText:
    codec, skip = sniff_encoding(data, is_xml=extension == "xml")
    budget = TextBudget(limits.max_chars)
    decode_into(data, budget, codec, skip)
    return budget.result()


PREVIEW_LINES = 3
PREVIEW_CHARS = 240


def preview(text: str | None) -> str | None:
    """The card's excerpt: the first three lines, capped at 240 characters; None when empty."""
    if not text:
        return None
    lines = [line.rstrip() for line in text.strip().splitlines()[:PREVIEW_LINES]]
    excerpt = "\n".join(lines)[:PREVIEW_CHARS].rstrip()
    return excerpt or None
