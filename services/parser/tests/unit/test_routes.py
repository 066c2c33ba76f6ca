"""``DocumentProcessor`` on each route, against the real parsers and local HTTP stand-ins."""

from __future__ import annotations

import uuid
import zlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pymupdf as _pymupdf
import pytest
import pytest_asyncio
from docproc_common.errors import RetryableError
from docproc_common.ingestion import IngestionConfig
from docproc_parser.engine.errors import DocumentUnreadable, ParserUnavailable
from docproc_parser.engine.llamaparse import markdown_pages
from docproc_parser.engine.pdf import extract_pdf
from docproc_parser.engine.processor import DocumentProcessor, ProcessorOptions, parse_isolation
from docproc_parser.handler import chunk_and_cite
from parser_samples import MARKER, needs_calc, needs_tesseract, pdf, scanned_pdf, text_png
from parser_standins import LlamaParseStandIn, VisionStandIn

LLAMA_SECRET = uuid.uuid4()
VISION_SECRET = uuid.uuid4()


mu: Any = _pymupdf  # PyMuPDF is untyped


class Keys:
    def __init__(self, vision_key: str | None, llama_key: str) -> None:
        self.vision_key = vision_key
        self.llama_key = llama_key
        self.asked: list[tuple[uuid.UUID, str]] = []

    async def __call__(self, secret_id: uuid.UUID, kind: str) -> str | None:
        self.asked.append((secret_id, kind))
        if (secret_id, kind) == (VISION_SECRET, "api_key"):
            return self.vision_key
        if (secret_id, kind) == (LLAMA_SECRET, "llamaparse"):
            return self.llama_key
        return None


class MemoryJournal:
    def __init__(self) -> None:
        self.job: str | None = None

    async def get(self) -> str | None:
        return self.job

    async def put(self, job_id: str) -> None:
        self.job = job_id

    async def clear(self) -> None:
        self.job = None


@pytest_asyncio.fixture(scope="module")
async def processor(
    llamaparse_standin: tuple[LlamaParseStandIn, str], vision_standin: tuple[VisionStandIn, str]
) -> AsyncIterator[DocumentProcessor]:
    isolation = parse_isolation(2048, 2)
    async with httpx.AsyncClient(timeout=30) as http:
        yield DocumentProcessor(
            isolation,
            http,
            ProcessorOptions(
                llamaparse_base_url=llamaparse_standin[1],
                vision_allowed_base_urls=(vision_standin[1],),
            ),
        )
    isolation.close()


@pytest.fixture
def keys(
    llamaparse_standin: tuple[LlamaParseStandIn, str], vision_standin: tuple[VisionStandIn, str]
) -> Keys:
    llamaparse_standin[0].reset()
    vision_standin[0].reset()
    return Keys(vision_standin[0].api_key, llamaparse_standin[0].api_key)


@pytest.fixture
def llamaparse(llamaparse_standin: tuple[LlamaParseStandIn, str]) -> LlamaParseStandIn:
    """The LlamaParse stand-in (``keys`` resets it)."""
    return llamaparse_standin[0]


def pictures_pdf() -> tuple[bytes, dict[str, Any]]:
    """Three pages: a logo twice on page 1, the logo and a chart on page 2, the logo saved
    again as a second xref with identical bytes on page 3, and a tiny spacer image."""
    logo, chart = text_png("LOGO"), text_png("CHART 42")
    doc: Any = mu.open()
    p1 = doc.new_page()
    p1.insert_text((72, 72), "Page one text.")
    xref = p1.insert_image(mu.Rect(72, 100, 272, 164), stream=logo)
    p1.insert_image(mu.Rect(72, 200, 272, 264), xref=xref)
    p2 = doc.new_page()
    p2.insert_text((72, 72), "Page two text.")
    p2.insert_image(mu.Rect(72, 100, 272, 164), xref=xref)
    p2.insert_image(mu.Rect(72, 200, 272, 264), stream=chart)
    p3 = doc.new_page()
    p3.insert_text((72, 72), "Page three text.")
    p3.insert_image(mu.Rect(72, 100, 272, 164), stream=logo)  # a new xref, same bytes
    spacer = mu.Pixmap(mu.csRGB, mu.IRect(0, 0, 4, 4), False)
    p3.insert_image(mu.Rect(300, 100, 304, 104), pixmap=spacer)
    data: bytes = doc.tobytes(garbage=0, deflate=True)
    return data, {"logo": logo, "chart": chart}


def vision_config(base_url: str, model: str = "standin-vision", **extra: Any) -> IngestionConfig:
    return IngestionConfig(
        image_description=True,
        vision_profile={
            "base_url": f"{base_url}/v1",
            "model": model,
            "secret_id": str(VISION_SECRET),
        },
        **extra,
    )


class TestImageDescription:
    def test_each_xref_once_repeats_grouped_identical_bytes_shared(self) -> None:
        data, _ = pictures_pdf()
        out = extract_pdf(
            data, max_pages=100, max_chars=10_000, describe_images=True, max_images=50
        )
        assert (
            len(out.images) == 2
        )  # logo (two xrefs, same bytes) and chart; the spacer is decoration
        logo, chart = out.pages[1].images
        assert out.pages[0].images == (logo,)  # drawn twice on page 1: one reference
        assert out.pages[2].images == (logo,)  # another xref, identical bytes: the same image
        assert chart != logo

    def test_an_image_above_the_pixel_limit_is_skipped_before_it_is_decoded(self) -> None:
        """9000 x 9000 grey: 81 MB of pixels from an 80 KB stream, never extracted."""
        doc: Any = mu.open()
        page = doc.new_page()
        page.insert_text((72, 72), "A page with a huge picture.")
        logo = page.insert_image(mu.Rect(72, 100, 272, 164), stream=text_png("LOGO"))
        doc.update_object(
            logo,
            "<</Type/XObject/Subtype/Image/Width 9000/Height 9000/ColorSpace/DeviceGray"
            "/BitsPerComponent 8/Filter/FlateDecode>>",
        )
        doc.update_stream(logo, zlib.compress(bytes(9000 * 9000), 9), compress=False)
        data: bytes = doc.tobytes(garbage=0)
        out = extract_pdf(
            data, max_pages=100, max_chars=10_000, describe_images=True, max_images=50
        )
        assert out.images == {}
        assert out.pages[0].images == ()
        assert "huge picture" in out.pages[0].text

    def test_off_means_no_extraction_at_all(self) -> None:
        data, _ = pictures_pdf()
        out = extract_pdf(
            data, max_pages=100, max_chars=10_000, describe_images=False, max_images=50
        )
        assert out.images == {}
        assert all(p.images == () for p in out.pages)

    async def test_descriptions_go_into_every_page_text_and_are_asked_once(
        self, processor: DocumentProcessor, keys: Keys, vision_standin: tuple[VisionStandIn, str]
    ) -> None:
        standin, url = vision_standin
        data, _ = pictures_pdf()
        doc = await processor.extract(data, "pictures.pdf", vision_config(url), secrets=keys)
        assert doc.images_described == 2
        assert sorted(standin.asked.values()) == [1, 1]  # each distinct picture asked once
        logo_text, chart_text = (standin.describe(d) for d in standin.asked)
        pages = doc.text.split("Page ")
        assert doc.text.count("[Image: ") == 4  # page 1: logo; page 2: logo + chart; page 3: logo
        assert any(logo_text in p or chart_text in p for p in pages)
        for page in ("one", "two", "three"):
            section = doc.text.split(f"Page {page} text.")[1].split("Page ")[0]
            assert "[Image: A picture number" in section
        assert "base64" not in doc.text and "\x89PNG" not in doc.text

    async def test_without_image_description_nothing_is_asked(
        self, processor: DocumentProcessor, keys: Keys, vision_standin: tuple[VisionStandIn, str]
    ) -> None:
        data, _ = pictures_pdf()
        doc = await processor.extract(data, "pictures.pdf", IngestionConfig(), secrets=keys)
        assert "[Image:" not in doc.text
        assert not vision_standin[0].asked
        assert keys.asked == []

    async def test_a_refused_key_fails_the_document_with_advice(
        self, processor: DocumentProcessor, keys: Keys, vision_standin: tuple[VisionStandIn, str]
    ) -> None:
        keys.vision_key = "sk-wrong"
        data, _ = pictures_pdf()
        with pytest.raises(DocumentUnreadable) as info:
            await processor.extract(data, "p.pdf", vision_config(vision_standin[1]), secrets=keys)
        assert "(VisionAuthenticationError)" in info.value.message
        assert "vision_profile.secret_id" in info.value.message

    async def test_a_missing_vault_key_is_named(
        self, processor: DocumentProcessor, keys: Keys, vision_standin: tuple[VisionStandIn, str]
    ) -> None:
        keys.vision_key = None
        data, _ = pictures_pdf()
        with pytest.raises(ParserUnavailable, match="No vision credential"):
            await processor.extract(data, "p.pdf", vision_config(vision_standin[1]), secrets=keys)

    async def test_an_address_the_deployment_does_not_allow_gets_no_key(
        self, processor: DocumentProcessor, keys: Keys
    ) -> None:
        data, _ = pictures_pdf()
        with pytest.raises(DocumentUnreadable, match="VisionEndpointNotAllowed"):
            await processor.extract(
                data, "p.pdf", vision_config("http://10.0.0.1:8080"), secrets=keys
            )

    async def test_a_server_error_is_transient(
        self, processor: DocumentProcessor, keys: Keys, vision_standin: tuple[VisionStandIn, str]
    ) -> None:
        vision_standin[0].status = 503
        data, _ = pictures_pdf()
        with pytest.raises(RetryableError):
            await processor.extract(data, "p.pdf", vision_config(vision_standin[1]), secrets=keys)


def llama_config(**extra: Any) -> IngestionConfig:
    return IngestionConfig(parser="llamaparse", llamaparse_secret_id=LLAMA_SECRET, **extra)


class TestLlamaParse:
    async def test_upload_poll_result(
        self,
        processor: DocumentProcessor,
        keys: Keys,
        llamaparse: LlamaParseStandIn,
    ) -> None:
        data = pdf(["Penguins live in the south.", "The capybara is the largest rodent."])
        doc = await processor.extract(data, "animals.pdf", llama_config(), secrets=keys)
        assert (doc.route, doc.pages, doc.billed_pages) == ("llamaparse", 2, 2)
        assert "Penguins" in doc.text and MARKER in doc.text
        assert llamaparse.uploads == 1 and llamaparse.polls >= 3
        job = next(iter(llamaparse.jobs.values()))
        assert job.configuration["page_ranges"] == {"max_pages": 1000}
        assert {"tier", "version"} <= job.configuration.keys()

    async def test_a_pdf_names_its_pages(self, processor: DocumentProcessor, keys: Keys) -> None:
        first = "Penguins live in Antarctica and swim very well. " * 12
        data = pdf([first, "", "Capybaras graze by the river."])
        doc = await processor.extract(data, "animals.pdf", llama_config(), secrets=keys)
        assert doc.paged and doc.markdown and len(doc.page_starts) == 3
        pieces, citations = chunk_and_cite(doc, IngestionConfig(chunk_size=300, chunk_overlap=60))
        assert {c.page_start for c in citations} == {1, 3}
        last_page = doc.text[doc.page_starts[2] :]
        assert last_page == "Capybaras graze by the river."
        assert (citations[-1].page_end, pieces[-1].text.endswith(last_page)) == (3, True)
        for piece, c in zip(pieces, citations, strict=True):
            assert c.page_start is not None
            origin = doc.page_starts[c.page_start - 1]
            assert doc.text[origin + c.char_start : origin + c.char_end] == piece.text

    async def test_an_answer_without_page_numbers_is_one_text(self) -> None:
        pages = [{"markdown": "# A"}, {"markdown": "B"}]
        got = markdown_pages({"markdown": {"pages": pages}}, 10, "job")
        assert (got.pages, got.numbered, got.billed) == (("# A\n\nB",), False, 2)
        unordered = [{"page_number": 2, "markdown": "B"}, {"page_number": 1, "markdown": "A"}]
        got = markdown_pages({"markdown": {"pages": unordered}}, 10, "job")
        assert (got.pages, got.numbered) == (("B\n\nA",), False)
        past = [{"page_number": 11, "markdown": "K"}]
        assert not markdown_pages({"markdown": {"pages": past}}, 10, "job").numbered
        gap = [{"page_number": 1, "markdown": "A"}, {"page_number": 3, "markdown": "C"}]
        got = markdown_pages({"markdown": {"pages": gap}}, 10, "job")
        assert (got.pages, got.numbered) == (("A", "", "C"), True)
        full = markdown_pages({"markdown_full": "all of it"}, 10, "job")
        assert (full.pages, full.numbered) == (("all of it",), False)
        for odd in ({"markdown": ["a"]}, {"markdown": {"pages": "a"}}, {"markdown": None}):
            assert markdown_pages(odd, 10, "job").pages == ()  # no text: refused as empty

    async def test_a_non_pdf_is_cited_without_pages(
        self, processor: DocumentProcessor, keys: Keys
    ) -> None:
        doc = await processor.extract(b"<p>hi</p>", "page.html", llama_config(), secrets=keys)
        assert not doc.paged

    async def test_max_pages_bounds_what_is_billed(
        self, processor: DocumentProcessor, keys: Keys
    ) -> None:
        data = pdf([f"Page {i} {MARKER}" for i in range(5)])
        doc = await processor.extract(data, "five.pdf", llama_config(max_pages=2), secrets=keys)
        assert doc.billed_pages == 2
        assert "Page 4" not in doc.text

    async def test_a_redelivery_resumes_the_job_instead_of_paying_again(
        self,
        processor: DocumentProcessor,
        keys: Keys,
        llamaparse: LlamaParseStandIn,
    ) -> None:
        llamaparse.outcome = "NEVER"
        journal = MemoryJournal()
        with pytest.raises(DocumentUnreadable, match="ParseTimeout"):
            await processor.extract(
                pdf(),
                "slow.pdf",
                llama_config(parse_timeout_seconds=5),
                secrets=keys,
                journal=journal,
            )
        assert llamaparse.uploads == 1 and journal.job is not None
        llamaparse.outcome = "COMPLETED"
        doc = await processor.extract(
            pdf(), "slow.pdf", llama_config(), secrets=keys, journal=journal
        )
        assert MARKER in doc.text
        assert llamaparse.uploads == 1, "the document was uploaded (and billed) twice"
        assert journal.job is None

    async def test_a_job_llamaparse_forgot_is_submitted_again(
        self,
        processor: DocumentProcessor,
        keys: Keys,
        llamaparse: LlamaParseStandIn,
    ) -> None:
        journal = MemoryJournal()
        journal.job = "expired-job"
        doc = await processor.extract(pdf(), "a.pdf", llama_config(), secrets=keys, journal=journal)
        assert MARKER in doc.text
        assert llamaparse.uploads == 1

    async def test_non_pdf_formats_route_to_the_cloud(
        self, processor: DocumentProcessor, keys: Keys
    ) -> None:
        doc = await processor.extract(
            b"<html><body>hi</body></html>", "page.html", llama_config(), secrets=keys
        )
        assert "page.html" in doc.text

    @pytest.mark.parametrize(
        ("status", "kind"),
        [
            (401, "LlamaParseAuthenticationError"),
            (402, "LlamaParseCreditsExhausted"),
            (413, "LlamaParseRejected"),
        ],
    )
    async def test_refusals_are_final_with_advice(
        self,
        processor: DocumentProcessor,
        keys: Keys,
        llamaparse: LlamaParseStandIn,
        status: int,
        kind: str,
    ) -> None:
        if status == 401:
            keys.llama_key = "llx-wrong"
        else:
            llamaparse.upload_status = status
        with pytest.raises(DocumentUnreadable) as info:
            await processor.extract(pdf(), "a.pdf", llama_config(), secrets=keys)
        assert f"({kind})" in info.value.message
        assert "127.0.0.1" not in info.value.message  # never the client's text

    async def test_a_5xx_at_upload_is_transient(
        self,
        processor: DocumentProcessor,
        keys: Keys,
        llamaparse: LlamaParseStandIn,
    ) -> None:
        llamaparse.upload_status = 503
        with pytest.raises(RetryableError):
            await processor.extract(pdf(), "a.pdf", llama_config(), secrets=keys)

    async def test_a_failed_job(
        self,
        processor: DocumentProcessor,
        keys: Keys,
        llamaparse: LlamaParseStandIn,
    ) -> None:
        llamaparse.outcome = "FAILED"
        with pytest.raises(DocumentUnreadable, match="LlamaParseJobFailed"):
            await processor.extract(pdf(), "a.pdf", llama_config(), secrets=keys)

    async def test_no_key_in_the_vault(self, processor: DocumentProcessor, keys: Keys) -> None:
        config = IngestionConfig(parser="llamaparse", llamaparse_secret_id=uuid.uuid4())
        with pytest.raises(ParserUnavailable, match="No LlamaParse credential"):
            await processor.extract(pdf(), "a.pdf", config, secrets=keys)

    async def test_a_password_protected_pdf_is_refused_before_paying(
        self,
        processor: DocumentProcessor,
        keys: Keys,
        llamaparse: LlamaParseStandIn,
    ) -> None:
        doc: Any = mu.open(stream=pdf(), filetype="pdf")
        locked = doc.tobytes(encryption=mu.PDF_ENCRYPT_AES_256, user_pw="u", owner_pw="o")
        with pytest.raises(DocumentUnreadable, match="EncryptedDocument"):
            await processor.extract(locked, "a.pdf", llama_config(), secrets=keys)
        assert llamaparse.uploads == 0


def lite(**extra: Any) -> IngestionConfig:
    return IngestionConfig(parser="liteparse", **extra)


class TestLiteParse:
    async def test_a_text_pdf_without_ocr(self, processor: DocumentProcessor, keys: Keys) -> None:
        body = " ".join(["The capybara is the largest rodent."] * 60)
        doc = await processor.extract(pdf([body, body]), "a.pdf", lite(), secrets=keys)
        assert doc.route == "liteparse" and MARKER in doc.text and doc.pages == 2
        assert not doc.ocr

    @needs_tesseract
    async def test_a_scan_goes_through_ocr(self, processor: DocumentProcessor, keys: Keys) -> None:
        doc = await processor.extract(scanned_pdf(), "scan.pdf", lite(), secrets=keys)
        assert doc.ocr
        assert MARKER in doc.text.lower()

    @needs_tesseract
    async def test_an_image_is_read(self, processor: DocumentProcessor, keys: Keys) -> None:
        doc = await processor.extract(text_png(), "scan.png", lite(), secrets=keys)
        assert MARKER in doc.text.lower()

    @needs_tesseract  # without the data the refusal names the missing package instead
    async def test_scans_stay_unread_without_auto_ocr(
        self, processor: DocumentProcessor, keys: Keys
    ) -> None:
        with pytest.raises(DocumentUnreadable) as info:
            await processor.extract(scanned_pdf(), "scan.pdf", lite(auto_ocr=False), secrets=keys)
        assert "(EmptyDocument)" in info.value.message and "auto_ocr" in info.value.message

    async def test_a_language_without_its_data_names_the_package_and_downloads_nothing(
        self, processor: DocumentProcessor, keys: Keys
    ) -> None:
        with pytest.raises(DocumentUnreadable) as info:
            await processor.extract(
                scanned_pdf(), "scan.pdf", lite(ocr_language="xqz"), secrets=keys
            )
        assert "tesseract-ocr-xqz" in info.value.message

    @needs_calc
    async def test_a_spreadsheet_through_libreoffice(
        self, processor: DocumentProcessor, keys: Keys
    ) -> None:
        from parser_samples import make

        doc = await processor.extract(make("xlsx"), "animals.xlsx", lite(), secrets=keys)
        assert MARKER in doc.text

    async def test_markdown_or_text(self, processor: DocumentProcessor, keys: Keys) -> None:
        body = " ".join(["The capybara is the largest rodent."] * 60)
        md = await processor.extract(pdf([body]), "a.pdf", lite(), secrets=keys)
        plain = await processor.extract(
            pdf([body]), "a.pdf", lite(liteparse_output_format="text"), secrets=keys
        )
        assert MARKER in md.text and MARKER in plain.text


class TestBadInput:
    @pytest.mark.parametrize("parser", ["pymupdf", "liteparse"])
    async def test_a_damaged_pdf(
        self, processor: DocumentProcessor, keys: Keys, parser: str
    ) -> None:
        with pytest.raises(DocumentUnreadable) as info:
            await processor.extract(
                b"%PDF-1.7\n" + b"\x00garbage" * 100,
                "a.pdf",
                IngestionConfig(parser=parser),
                secrets=keys,
            )
        message = info.value.message
        assert message.startswith("The document could not be parsed (FileDataError) - ")
        assert message.endswith("The worker log has the full error.")

    @pytest.mark.parametrize("parser", ["pymupdf", "liteparse"])
    async def test_a_password_protected_pdf(
        self, processor: DocumentProcessor, keys: Keys, parser: str
    ) -> None:
        doc: Any = mu.open(stream=pdf(), filetype="pdf")
        locked = doc.tobytes(encryption=mu.PDF_ENCRYPT_AES_256, user_pw="u", owner_pw="o")
        with pytest.raises(DocumentUnreadable) as info:
            await processor.extract(locked, "a.pdf", IngestionConfig(parser=parser), secrets=keys)
        assert "(EncryptedDocument) - the file is password-protected" in info.value.message

    @pytest.mark.parametrize(("name", "data"), [("a.txt", b"  \n"), ("a.pdf", None), ("a.md", b"")])
    async def test_an_empty_document(
        self, processor: DocumentProcessor, keys: Keys, name: str, data: bytes | None
    ) -> None:
        blank: Any = mu.open()
        blank.new_page()
        with pytest.raises(DocumentUnreadable, match=r"\(EmptyDocument\)"):
            await processor.extract(
                data if data is not None else blank.tobytes(), name, IngestionConfig(), secrets=keys
            )

    @needs_tesseract
    async def test_a_parse_past_its_deadline_is_killed(
        self, processor: DocumentProcessor, keys: Keys
    ) -> None:
        heavy = scanned_pdf(pages=40, dpi=300)
        with pytest.raises(DocumentUnreadable) as info:
            await processor.extract(
                heavy, "scan.pdf", lite(liteparse_dpi=600, parse_timeout_seconds=5), secrets=keys
            )
        assert "(ParseTimeout) - parsing took longer than 5 s" in info.value.message
        body = " ".join(["The capybara is the largest rodent."] * 60)
        assert MARKER in (await processor.extract(pdf([body]), "a.pdf", lite(), secrets=keys)).text

    async def test_a_content_mismatch(self, processor: DocumentProcessor, keys: Keys) -> None:
        with pytest.raises(DocumentUnreadable, match="ContentMismatch"):
            await processor.extract(b"\x00\x01binary", "notes.txt", IngestionConfig(), secrets=keys)
