"""The routing table: what each parser reads here, and the refusals at upload."""

from __future__ import annotations

from typing import Any

import pymupdf
import pytest
from docproc_common.errors import InvalidInput
from docproc_common.formats import (
    BUILTIN_FORMATS,
    Capabilities,
    check_supported,
    supported_formats,
    unavailable_formats,
)
from docproc_parser.engine.errors import DocumentUnreadable
from docproc_parser.engine.jobs import PageText
from docproc_parser.engine.processor import compose, extract_text

EVERYTHING = Capabilities(liteparse=True)
NO_OFFICE = Capabilities(liteparse=True, office=frozenset())
WRITER_ONLY = Capabilities(liteparse=True, office=frozenset({"writer"}))
NO_LITEPARSE = Capabilities(liteparse=False)


class TestSupportedFormats:
    def test_builtin_formats_whatever_the_parser(self) -> None:
        for parser in ("pymupdf", "liteparse", "llamaparse"):
            assert supported_formats(parser, NO_LITEPARSE) >= {"txt", "md", "docx"}

    def test_pymupdf_adds_pdf_only(self) -> None:
        assert supported_formats("pymupdf", EVERYTHING) == BUILTIN_FORMATS | {"pdf"}

    def test_liteparse_reads_images_natively_and_office_through_libreoffice(self) -> None:
        formats = supported_formats("liteparse", EVERYTHING)
        assert {"pdf", "png", "jpg", "tiff", "svg"} <= formats
        assert {"xlsx", "pptx", "odt", "csv", "rtf", "doc", "xls", "ppt"} <= formats
        without = supported_formats("liteparse", NO_OFFICE)
        assert {"pdf", "png", "jpg", "tiff", "svg"} <= without
        assert not ({"xlsx", "pptx", "odt", "csv", "rtf"} & without)
        assert set(unavailable_formats("liteparse", NO_OFFICE)) == formats - without

    def test_llamaparse_is_the_seeds_list(self) -> None:
        assert {"pdf", "pptx", "xlsx", "csv", "rtf", "epub", "html", "png"} <= supported_formats(
            "llamaparse", NO_LITEPARSE
        )

    def test_an_unknown_parser_reads_only_the_builtins(self) -> None:
        assert supported_formats("tika", EVERYTHING) == BUILTIN_FORMATS


class TestCheckSupported:
    def test_the_xlsx_story_is_refused_at_upload(self) -> None:
        with pytest.raises(InvalidInput) as info:
            check_supported("report.xlsx", "pymupdf", EVERYTHING)
        assert info.value.status_code == 400
        assert "Unsupported file type: .xlsx" in info.value.message
        assert [f.field for f in info.value.fields] == ["file"]

    def test_office_to_liteparse_without_libreoffice_names_libreoffice(self) -> None:
        with pytest.raises(InvalidInput) as info:
            check_supported("Budget.XLSX", "liteparse", NO_OFFICE)
        assert "LibreOffice" in info.value.message
        assert info.value.details["rule"] == "parser_unavailable"
        assert check_supported("scan.png", "liteparse", NO_OFFICE) == "png"
        assert check_supported("report.xlsx", "liteparse", EVERYTHING) == "xlsx"

    def test_a_writer_only_libreoffice_does_not_open_a_spreadsheet(self) -> None:
        assert check_supported("letter.odt", "liteparse", WRITER_ONLY) == "odt"
        with pytest.raises(InvalidInput) as info:
            check_supported("budget.xlsx", "liteparse", WRITER_ONLY)
        assert "LibreOffice Calc" in info.value.message
        assert "libreoffice-calc-nogui" in info.value.message
        assert "pptx" not in supported_formats("liteparse", WRITER_ONLY)

    def test_docx_never_needs_libreoffice(self) -> None:
        assert check_supported("memo.docx", "liteparse", NO_OFFICE) == "docx"

    @pytest.mark.parametrize("name", ["README", ".bashrc", "archive.tar.gz", "x.exe"])
    def test_no_or_unknown_extension(self, name: str) -> None:
        with pytest.raises(InvalidInput):
            check_supported(name, "liteparse", EVERYTHING)


class TestCompose:
    def test_a_description_goes_into_every_page_that_shows_the_image(self) -> None:
        pages = [
            PageText("one", ("a",)),
            PageText("two", ("a", "b")),
            PageText("", ("b",)),
            PageText("four"),
        ]
        text, starts = compose(pages, {"a": "a red logo", "b": "a bar chart"})
        assert text == (
            "one\n\n[Image: a red logo]\n\n"
            "two\n\n[Image: a red logo]\n\n[Image: a bar chart]\n\n"
            "[Image: a bar chart]\n\n"
            "four"
        )
        assert [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)] == [
            "one\n\n[Image: a red logo]\n\n",
            "two\n\n[Image: a red logo]\n\n[Image: a bar chart]\n\n",
            "[Image: a bar chart]\n\n",
            "four",
        ]

    def test_without_descriptions_only_text(self) -> None:
        assert compose([PageText("one", ("a",)), PageText("two")], {}) == ("one\n\ntwo", (0, 5))

    def test_an_empty_page_takes_no_room(self) -> None:
        text, starts = compose([PageText("one"), PageText(""), PageText("three")], {})
        assert (text, starts) == ("one\n\nthree", (0, 3, 5))


class TestExtractTextInProcess:
    def test_pdf_and_markdown(self) -> None:
        doc: Any = pymupdf.open()  # type: ignore[no-untyped-call]
        doc.new_page().insert_text((72, 72), "The capybara is the largest rodent.")
        pdf: bytes = doc.tobytes()
        assert "capybara" in extract_text(pdf, "a.pdf", "pymupdf").text
        assert extract_text(b"# Title\n\nbody", "a.md", "pymupdf").text.startswith("# Title")

    def test_empty_is_a_three_part_refusal(self) -> None:
        with pytest.raises(DocumentUnreadable) as info:
            extract_text(b"   \n", "a.txt", "pymupdf")
        assert info.value.message.startswith("The document could not be parsed (EmptyDocument) - ")
        assert info.value.message.endswith("then retry the upload.")
