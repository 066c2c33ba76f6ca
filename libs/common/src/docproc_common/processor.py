"""``DocumentProcessor``: what a knowledge-base parser can really route, and the routing itself.

The supported sets are the routing table, not a list of hopes: the upload path
refuses an extension the collection's parser cannot read (400, nothing stored),
and the parser service routes by the very same table, so a file accepted at
upload can never die later as "Unsupported file type".
"""

from __future__ import annotations

from dataclasses import dataclass

from docproc_common.errors import FieldError, InvalidInput
from docproc_common.parsing import ParseLimits, detect, parse
from docproc_common.parsing.types import Detected

# Read by the built-in parsers whatever the collection's parser is.
BUILTIN_FORMATS = frozenset({"txt", "md", "docx"})
PARSER_FORMATS: dict[str, frozenset[str]] = {
    "pymupdf": frozenset({"pdf"}),
}

KB_PARSE_LIMITS = ParseLimits(max_chars=20_000_000, max_pdf_pages=10_000)


def supported_formats(parser: str) -> frozenset[str]:
    return BUILTIN_FORMATS | PARSER_FORMATS.get(parser, frozenset())


def extension_of(filename: str) -> str:
    name = filename.lower()
    if name.endswith(".tar.gz"):
        return "tar.gz"
    return name.rsplit(".", 1)[-1] if "." in name else ""


def check_supported(filename: str, parser: str) -> str:
    """The file's extension if the collection's parser routes it; a 400 naming the type otherwise."""
    ext = extension_of(filename)
    formats = supported_formats(parser)
    if ext not in formats:
        shown = f".{ext}" if ext else "a file without an extension"
        raise InvalidInput(
            f"Unsupported file type: {shown} cannot be read by the '{parser}' parser "
            f"(supported: {', '.join('.' + f for f in sorted(formats))})",
            fields=[FieldError("file", f"unsupported file type {shown}")],
        )
    return ext


@dataclass(frozen=True, slots=True)
class ExtractedDocument:
    text: str
    pages: int | None
    truncated: bool


class EmptyDocumentError(InvalidInput):
    def __init__(self) -> None:
        super().__init__("The document has no extractable text")


def extract_text(data: bytes, filename: str, parser: str) -> ExtractedDocument:
    """Blocking: detect, then parse with the knowledge-base budgets. Runs on the blocking pool."""
    check_supported(filename, parser)
    detected: Detected = detect(data, filename, None)
    parsed = parse(data, detected, KB_PARSE_LIMITS)
    if not parsed.text or not parsed.text.strip():
        raise EmptyDocumentError()
    return ExtractedDocument(parsed.text, parsed.pages, parsed.truncated)
