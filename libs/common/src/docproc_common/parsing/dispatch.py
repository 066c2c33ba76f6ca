"""``parse``: route a detected upload to its parser."""

from __future__ import annotations

from collections.abc import Callable

from .archives import check_archive, member_listing
from .budget import TextBudget
from .doc import parse_doc
from .msg import parse_msg
from .office import parse_docx, parse_pptx
from .opendocument import parse_odp, parse_ods, parse_odt
from .pdf import parse_pdf
from .spreadsheet import parse_xls, parse_xlsx
from .text import parse_text
from .types import Detected, FileType, ParsedText, ParseLimits

_Parser = Callable[[bytes, ParseLimits], ParsedText]


def _parse_archive(data: bytes, detected: Detected, limits: ParseLimits) -> ParsedText:
    members = check_archive(data, detected, limits.archive)
    budget = TextBudget(limits.max_chars)
    budget.add(member_listing(members))
    return budget.result()


def _by_extension() -> dict[str, _Parser]:
    return {
        "pdf": parse_pdf,
        "docx": parse_docx,
        "doc": parse_doc,
        "xlsx": parse_xlsx,
        "xlsm": parse_xlsx,
        "xls": parse_xls,
        "ods": parse_ods,
        "pptx": parse_pptx,
        "odp": parse_odp,
        "odt": parse_odt,
        "msg": parse_msg,
    }


_PARSERS = _by_extension()


DEFAULT_LIMITS = ParseLimits()


def parse(data: bytes, detected: Detected, limits: ParseLimits = DEFAULT_LIMITS) -> ParsedText:
    """Extract the text of a detected upload, spending ``limits`` while reading.

    Unreadable content gives ``text=None`` with a ``note``; unsafe content (an archive
    or office container breaking a rule, XML entities) raises a ParsingRefused.
    """
    if detected.file_type in (FileType.IMAGE, FileType.TIFF):
        return ParsedText(text=None)
    if detected.file_type is FileType.TEXT:
        return parse_text(data, detected.extension, limits)
    if detected.file_type is FileType.ARCHIVE:
        return _parse_archive(data, detected, limits)
    parser = _PARSERS.get(detected.extension)
    if parser is None:
        return ParsedText(
            text=None, note=f"Text extraction for .{detected.extension} files is unavailable"
        )
    return parser(data, limits)
