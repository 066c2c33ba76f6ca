"""A document's own date from its metadata: each format, and what gives no date instead of an error."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path
from typing import Any

import docx
import openpyxl
import pptx
import pymupdf
import pytest
from docproc_parser.engine.dates import FORMATS, MAX_METADATA_BYTES, own_date
from docproc_testing.archives import rewrite_member
from docproc_testing.office import SOFFICE, soffice_convert
from odf.dc import Date as DcDate
from odf.meta import CreationDate
from odf.opendocument import OpenDocumentText
from odf.text import P

TODAY = dt.date(2026, 11, 30)


def pdf(**metadata: str) -> bytes:
    document: Any = pymupdf.open()  # type: ignore[no-untyped-call]
    document.new_page().insert_text((72, 72), "text")
    document.set_metadata(metadata)
    return bytes(document.tobytes())


def saved(document: Any) -> bytes:
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def docx_dated(created: dt.datetime | None, modified: dt.datetime | None = None) -> bytes:
    document = docx.Document()
    document.add_paragraph("text")
    if created is not None:
        document.core_properties.created = created
    if modified is not None:
        document.core_properties.modified = modified
    data = saved(document)
    if created is None:  # python-docx keeps its template's date: take the element out
        data = rewrite_member(data, "docProps/core.xml", lambda xml: _drop(xml, b"dcterms:created"))
    return data


def _drop(xml: bytes, tag: bytes) -> bytes:
    start = xml.index(b"<" + tag)
    end = xml.index(b"</" + tag + b">") + len(tag) + 3
    return xml[:start] + xml[end:]


def test_pdf_creation_date_then_modification_date() -> None:
    assert own_date(pdf(creationDate="D:20210504093000+02'00'"), "pdf", today=TODAY) == dt.date(
        2021, 5, 4
    )
    assert own_date(pdf(creationDate="", modDate="D:20220101"), "pdf", today=TODAY) == dt.date(
        2022, 1, 1
    )
    assert own_date(pdf(creationDate="", modDate=""), "pdf", today=TODAY) is None


def test_ooxml_created_then_modified() -> None:
    created = docx_dated(dt.datetime(2020, 2, 29, 23, 0), dt.datetime(2024, 1, 1))
    assert own_date(created, "docx", today=TODAY) == dt.date(2020, 2, 29)
    modified_only = docx_dated(None, dt.datetime(2023, 7, 14))
    assert own_date(modified_only, "docx", today=TODAY) == dt.date(2023, 7, 14)

    workbook = openpyxl.Workbook()
    workbook.properties.created = dt.datetime(2019, 12, 31, 8, 0)
    assert own_date(saved(workbook), "xlsx", today=TODAY) == dt.date(2019, 12, 31)

    deck = pptx.Presentation()
    deck.core_properties.created = dt.datetime(2018, 6, 1)
    assert own_date(saved(deck), "pptx", today=TODAY) == dt.date(2018, 6, 1)


def odt(*meta: Any) -> bytes:
    document = OpenDocumentText()
    document.text.addElement(P(text="text"))
    for element in meta:
        document.meta.addElement(element)
    return saved(document)


def test_opendocument_creation_date_then_dc_date() -> None:
    both = odt(DcDate(text="2016-08-01T00:00:00"), CreationDate(text="2017-03-09T10:00:00"))
    assert own_date(both, "odt", today=TODAY) == dt.date(2017, 3, 9)
    assert own_date(odt(DcDate(text="2016-08-01T00:00:00")), "odt", today=TODAY) == dt.date(
        2016, 8, 1
    )
    assert own_date(odt(), "odt", today=TODAY) is None  # odfpy writes only its generator


@pytest.mark.skipif(SOFFICE is None, reason="LibreOffice (soffice) is not installed")
def test_legacy_office_from_the_ole_summary(tmp_path: Path) -> None:
    source = tmp_path / "letter.odt"
    source.write_bytes(odt(CreationDate(text="2017-03-09T10:00:00")))
    data = soffice_convert(tmp_path, source, "doc:MS Word 97")
    # LibreOffice carries the creation date into the OLE summary, and writes the zero
    # date (1601-01-01) as the last-saved time: implausible, so never chosen
    assert own_date(data, "doc", today=TODAY) == dt.date(2017, 3, 9)


def test_an_editors_zero_date_falls_back_to_the_next_candidate() -> None:
    stamped = pdf(creationDate="D:16010101000000", modDate="D:20230405")
    assert own_date(stamped, "pdf", today=TODAY) == dt.date(2023, 4, 5)


@pytest.mark.parametrize(
    ("stamp", "why"),
    [
        ("D:16010101000000", "an editor's zero date"),
        ("D:18991231", "before 1900"),
        ("D:20261202", "later than tomorrow"),
        ("D:20210231", "no such day"),
        ("D:2021", "no day at all"),
        ("yesterday", "not a date"),
    ],
)
def test_an_implausible_or_broken_date_is_none(stamp: str, why: str) -> None:
    assert own_date(pdf(creationDate=stamp), "pdf", today=TODAY) is None, why


def test_tomorrow_is_still_plausible() -> None:
    # a clock a few hours ahead, or a zone east of UTC
    assert own_date(pdf(creationDate="D:20261201"), "pdf", today=TODAY) == dt.date(2026, 12, 1)


def test_unreadable_files_and_formats_without_metadata_give_none() -> None:
    assert own_date(b"%PDF-1.7 garbage", "pdf") is None
    assert own_date(b"PK\x03\x04 not a zip", "docx") is None
    assert own_date(b"\xd0\xcf\x11\xe0 not ole", "doc") is None
    assert own_date(b"plain text", "txt") is None
    assert own_date(b"# title", "md") is None
    assert {"pdf", "docx", "xlsx", "pptx", "odt", "ods", "odp", "doc", "xls", "ppt"} == FORMATS


def test_hostile_metadata_parts_are_not_read() -> None:
    base = docx_dated(dt.datetime(2020, 1, 1))
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        b'<cp:coreProperties xmlns:cp="x" xmlns:dcterms="http://purl.org/dc/terms/">'
        b"<dcterms:created>&b;2020-01-01</dcterms:created></cp:coreProperties>"
    )
    assert own_date(rewrite_member(base, "docProps/core.xml", lambda _: bomb), "docx") is None
    huge = b"<x>" + b" " * (MAX_METADATA_BYTES + 1) + b"</x>"
    assert own_date(rewrite_member(base, "docProps/core.xml", lambda _: huge), "docx") is None
    assert (
        own_date(rewrite_member(base, "docProps/core.xml", lambda _: b"<unclosed"), "docx") is None
    )
