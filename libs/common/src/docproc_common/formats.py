"""The format table: what a knowledge-base parser can really route, on this machine.

The supported sets are the routing table, not a list of hopes: the upload path
refuses an extension the collection's parser cannot read (400, nothing stored),
``GET /rag/supported-formats`` answers from the same table, and the parser service
routes by it, so a file accepted at upload can never die later as "Unsupported
file type" (the seed's ``.xlsx`` story).

Routes (the seed's "Formatos admitidos"):

==============  =====================================================  =====================
route           reads                                                  needs
==============  =====================================================  =====================
builtin         ``.txt``, ``.md``, ``.docx`` whatever the parser is    nothing
pymupdf         ``.pdf`` (+ embedded images, when described)           nothing
liteparse       ``.pdf``, images; office formats through LibreOffice   LibreOffice (office)
llamaparse      ``.pdf``, office, ``.epub``, ``.html``, images (cloud)  the org's vault key
==============  =====================================================  =====================

The parsers themselves are the parser service's (``docproc_parser.engine``), and so is
what they can read here: every caller routes by ``Capabilities.declared(settings.formats)``,
the value the chart renders from the parser's image into every service; only the parser
probes its own machine (``Capabilities.detect``) and is not ready while the two disagree.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import dataclass
from functools import cache

from docproc_common.errors import FieldError, InvalidInput
from docproc_common.ingestion import Parser
from docproc_common.settings import FormatSettings

#: Read by LiteParse natively (PDFium, or decoded and OCR'd as an image).
LITEPARSE_NATIVE_FORMATS = frozenset(
    {"pdf", "png", "jpg", "jpeg", "tif", "tiff", "webp", "gif", "bmp", "svg"}
)
#: Converted to PDF by LibreOffice first, by the component that opens them: refused at upload
#: where that component is absent (a writer-only LibreOffice does not open a spreadsheet).
OFFICE_BY_COMPONENT: dict[str, frozenset[str]] = {
    "writer": frozenset({"doc", "odt", "rtf"}),
    "calc": frozenset({"xlsx", "xls", "ods", "csv"}),
    "impress": frozenset({"pptx", "ppt", "odp"}),
}
OFFICE_FORMATS: frozenset[str] = frozenset().union(*OFFICE_BY_COMPONENT.values())
#: A library only that component's Debian package installs, next to ``soffice``.
_COMPONENT_MARKERS = {"writer": "libswlo.so", "calc": "libsclo.so", "impress": "libslideshowlo.so"}
#: Extensions LlamaParse reads (the seed's table).
LLAMAPARSE_FORMATS = frozenset(
    {"pdf", "pptx", "xlsx", "csv", "rtf", "epub", "html", "htm",
     "png", "jpg", "jpeg", "tif", "tiff", "webp", "gif", "bmp"}
)  # fmt: skip

PARSERS: tuple[Parser, ...] = ("pymupdf", "liteparse", "llamaparse")
# Read by the built-in parsers whatever the collection's parser is.
BUILTIN_FORMATS = frozenset({"txt", "md", "docx"})
PARSER_FORMATS: dict[str, frozenset[str]] = {
    "pymupdf": frozenset({"pdf"}),
    "liteparse": LITEPARSE_NATIVE_FORMATS | OFFICE_FORMATS,
    "llamaparse": LLAMAPARSE_FORMATS,
}


ALL_OFFICE = frozenset(OFFICE_BY_COMPONENT)


def liteparse_installed() -> bool:
    """Whether the ``liteparse`` package (and its native module) is importable here."""
    return importlib.util.find_spec("liteparse") is not None


def libreoffice() -> str | None:
    return shutil.which("soffice") or shutil.which("libreoffice")


def office_components() -> frozenset[str]:
    """The LibreOffice components installed here (``writer``, ``calc``, ``impress``).

    Read from the libraries beside the real ``soffice``; when that layout is not the
    Debian one (no marker at all), every component is assumed.
    """
    binary = libreoffice()
    if binary is None:
        return frozenset()
    program = os.path.dirname(os.path.realpath(binary))
    found = frozenset(
        c for c, lib in _COMPONENT_MARKERS.items() if os.path.exists(os.path.join(program, lib))
    )
    return found or frozenset(_COMPONENT_MARKERS)


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What this machine can run: decides which formats a parser routes *here*."""

    liteparse: bool
    #: The LibreOffice components installed (``writer``, ``calc``, ``impress``); empty: none.
    office: frozenset[str] = ALL_OFFICE

    @classmethod
    def detect(cls) -> Capabilities:
        """What this machine has: the parser's own probe (and a part left undeclared)."""
        return _detected()

    @classmethod
    def declared(cls, settings: FormatSettings) -> Capabilities:
        """What the parser has, as the deployment declares it; a part not declared is
        probed here (where the parser runs in this process)."""
        liteparse = settings.liteparse
        office = settings.office
        return cls(
            liteparse=liteparse_installed() if liteparse is None else liteparse,
            office=office_components() if office is None else frozenset(office),
        )

    def disagreement(self, actual: Capabilities) -> str | None:
        """Why ``actual`` (the parser's probe) is not what was declared, or None."""
        wrong = []
        if self.liteparse != actual.liteparse:
            wrong.append(f"liteparse declared {self.liteparse}, installed {actual.liteparse}")
        if self.office != actual.office:
            wrong.append(
                f"LibreOffice components declared {sorted(self.office)}, "
                f"installed {sorted(actual.office)}"
            )
        return "; ".join(wrong) or None


@cache
def _detected() -> Capabilities:
    return Capabilities(liteparse=liteparse_installed(), office=office_components())


def unavailable_formats(parser: str, caps: Capabilities) -> dict[str, str]:
    """Formats the parser reads in general but not where it runs, with the reason."""
    if parser != "liteparse":
        return {}
    if not caps.liteparse:
        return dict.fromkeys(
            PARSER_FORMATS[parser], "the LiteParse parser is not installed on this server"
        )
    missing: dict[str, str] = {}
    for component, formats in OFFICE_BY_COMPONENT.items():
        if component in caps.office:
            continue
        why = (
            f"LiteParse converts it with LibreOffice {component.capitalize()}, which is not "
            f"installed on this server (libreoffice-{component}-nogui)"
            if caps.office
            else "LiteParse converts it with LibreOffice, which is not installed on this server"
        )
        missing.update(dict.fromkeys(formats, why))
    return missing


def supported_formats(parser: str, capabilities: Capabilities) -> frozenset[str]:
    """Every extension (no dot) a collection on ``parser`` can ingest."""
    routable = (
        PARSER_FORMATS.get(parser, frozenset()) - unavailable_formats(parser, capabilities).keys()
    )
    return BUILTIN_FORMATS | routable


def extension_of(filename: str) -> str:
    name = filename.replace("\\", "/").rsplit("/", 1)[-1].strip().lower()
    if name.endswith(".tar.gz"):
        return "tar.gz"
    stem, dot, ext = name.rpartition(".")
    return ext if dot and stem else ""


def check_supported(filename: str, parser: str, capabilities: Capabilities) -> str:
    """The file's extension if the collection's parser routes it here; a 400 naming the type otherwise."""
    ext = extension_of(filename)
    shown = f".{ext}" if ext else "a file without an extension"
    missing = unavailable_formats(parser, capabilities).get(ext)
    if missing is not None:
        needs = "LibreOffice" if "LibreOffice" in missing else "LiteParse"
        raise InvalidInput(
            f"{shown} cannot be read by the '{parser}' parser here: {missing}. "
            f"Install {needs} where docproc parses, or upload a PDF",
            fields=[FieldError("file", f"{shown} needs {needs}, which is not installed")],
            details={"rule": "parser_unavailable"},
        )
    formats = supported_formats(parser, capabilities)
    if ext not in formats:
        raise InvalidInput(
            f"Unsupported file type: {shown} cannot be read by the '{parser}' parser "
            f"(supported: {', '.join('.' + f for f in sorted(formats))})",
            fields=[FieldError("file", f"unsupported file type {shown}")],
            details={"rule": "unsupported_type"},
        )
    return ext


def route_of(ext: str, parser: str) -> str:
    if ext in BUILTIN_FORMATS:
        return "builtin"
    return parser
