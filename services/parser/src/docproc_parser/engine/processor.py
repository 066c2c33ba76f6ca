"""``DocumentProcessor``: a knowledge-base document routed to its parser, and its text.

What each parser reads is the format table (``docproc_common.formats``), shared with the
upload path that refuses what cannot be routed. Every local parse runs in an isolated
child process (``docproc_common.isolation``, built by ``parse_isolation``) with the parser's memory limit and the collection's
``parse_timeout_seconds``; a failure becomes a
:class:`~docproc_parser.engine.errors.DocumentUnreadable` whose message is the stored
three-part one (stage, exception type, advice).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import date
from typing import TypeVar

import httpx
from docproc_common.formats import Capabilities, check_supported, route_of, supported_formats
from docproc_common.ingestion import IngestionConfig
from docproc_common.isolation import (
    ChildCrashed,
    ChildNoRoom,
    ChildRaised,
    ChildTimeout,
    Isolation,
)
from docproc_common.settings import LLAMAPARSE_BASE_URL

from docproc_parser.engine import dates, errors, liteparse
from docproc_parser.engine.jobs import (
    OWN_DATE,
    PROBE,
    RUN,
    OutlineEntry,
    PageText,
    ParseJob,
    WorkerOutput,
    cut_pages,
)
from docproc_parser.engine.llamaparse import JobJournal, LlamaParseClient
from docproc_parser.engine.vision import VisionDescriber

log = logging.getLogger(__name__)

J = TypeVar("J")
R = TypeVar("R")

#: The most text a knowledge-base document keeps (a budget spent while reading).
KB_MAX_CHARS = 20_000_000
#: How long the cheap PDF check before a cloud parse may take.
PROBE_TIMEOUT_S = 60.0


#: Imported once by the fork server, inherited by every parse child.
PRELOAD = ("docproc_parser.engine.forkserver_preload",)


def parse_isolation(memory_mb: int, max_concurrent: int, max_file_mb: int = 0) -> Isolation:
    """The parser's runner: a wall-clock deadline (the collection's ``parse_timeout_seconds``)
    at normal priority, and callers wait their turn (the consumer's pace, not a queue)."""
    return Isolation(
        memory_mb=memory_mb,
        max_file_mb=max_file_mb,
        max_concurrent=max_concurrent,
        preload=PRELOAD,
    )


@dataclass(frozen=True, slots=True)
class ExtractedDocument:
    text: str
    pages: int | None
    truncated: bool
    route: str = "builtin"
    images_described: int = 0
    ocr: bool = False
    billed_pages: int = 0
    document_date: date | None = None
    """What the document's metadata dates it (``engine.dates``); None when it says nothing."""
    page_starts: tuple[int, ...] = ()
    """Where each page the parser read separately begins in ``text``: one per page of a PDF
    (every parser), of an office file as LiteParse's converter laid it out, or of LlamaParse's
    answer; one in all for a format read as one text."""
    paged: bool = False
    """Whether ``page_starts`` are the document's own pages (a PDF's), which a citation
    names; otherwise the document is cited with no page numbers."""
    markdown: bool = False
    """Whether ``text`` is markdown (a ``.md`` file, LiteParse's markdown output,
    LlamaParse's), whose ``#`` headings a citation names."""
    outline: tuple[OutlineEntry, ...] = ()
    """The PDF's outline (PyMuPDF), whose entries a citation names as headings."""


@dataclass(frozen=True, slots=True)
class ProcessorOptions:
    max_chars: int = KB_MAX_CHARS
    llamaparse_base_url: str = LLAMAPARSE_BASE_URL
    llamaparse_tier: str = "cost_effective"
    vision_allowed_base_urls: tuple[str, ...] = ()


#: Opens a vault secret of the document's organization: (secret id, kind) -> API key or None.
SecretOpener = Callable[[uuid.UUID, str], Awaitable[str | None]]


@dataclass
class DocumentProcessor:
    """Routes a knowledge-base document to its parser and returns its text (async, isolated)."""

    isolation: Isolation
    http: httpx.AsyncClient
    options: ProcessorOptions = field(default_factory=ProcessorOptions)
    capabilities: Capabilities = field(default_factory=Capabilities.detect)

    def formats(self, parser: str) -> frozenset[str]:
        return supported_formats(parser, self.capabilities)

    async def extract(
        self,
        data: bytes,
        filename: str,
        config: IngestionConfig,
        *,
        secrets: SecretOpener,
        journal: JobJournal | None = None,
    ) -> ExtractedDocument:
        """The document's text (and its own date, from its metadata)."""
        ext = check_supported(filename, config.parser, self.capabilities)
        doc = await self._extract_text(data, filename, ext, config, secrets, journal)
        return replace(doc, document_date=await self._own_date(data, ext))

    async def _own_date(self, data: bytes, ext: str) -> date | None:
        """In a child too (it opens the file with the parse's native libraries); a failure
        there is no date, not a failed document."""
        if ext not in dates.FORMATS:
            return None
        try:
            return await self.isolation.run(OWN_DATE, (data, ext), timeout_s=PROBE_TIMEOUT_S)
        except (ChildCrashed, ChildNoRoom, ChildRaised, ChildTimeout) as exc:
            log.warning("reading the document's date from its metadata failed: %r", exc)
            return None

    async def _extract_text(
        self,
        data: bytes,
        filename: str,
        ext: str,
        config: IngestionConfig,
        secrets: SecretOpener,
        journal: JobJournal | None,
    ) -> ExtractedDocument:
        route = route_of(ext, config.parser)
        if route == "llamaparse":
            return await self._llamaparse(data, filename, ext, config, secrets, journal)
        job = ParseJob(
            data=data,
            filename=filename,
            extension=ext,
            route=route,  # type: ignore[arg-type]
            max_pages=config.max_pages,
            max_chars=self.options.max_chars,
            describe_images=route == "pymupdf" and config.image_description,
            max_images=config.vision_profile.max_images if config.vision_profile else 0,
            liteparse=liteparse.LiteParseOptions(
                output_format=config.liteparse_output_format,
                auto_ocr=config.auto_ocr,
                ocr_language=config.ocr_language,
                dpi=config.liteparse_dpi,
                max_pages=config.max_pages,
            )
            if route == "liteparse"
            else None,
        )
        output = await self._run(RUN, job, float(config.parse_timeout_seconds))
        descriptions: dict[str, str] = {}
        if output.images and config.vision_profile is not None:
            key = None
            if config.vision_profile.secret_id is not None:
                key = await secrets(config.vision_profile.secret_id, "api_key")
                if key is None:
                    raise errors.ParserUnavailable(
                        "No vision credential is configured for this collection: the secret named "
                        "by vision_profile.secret_id is not in the organization's vault"
                    )
            describer = VisionDescriber(
                self.http,
                config.vision_profile,
                key,
                allowed_prefixes=self.options.vision_allowed_base_urls,
            )
            descriptions = await describer.describe_all(output.images)
        text, starts = compose(output.pages, descriptions)
        if not has_words(text):
            raise _empty(route, config, output)
        return ExtractedDocument(
            text=text,
            pages=output.page_count,
            truncated=output.truncated,
            route=route,
            images_described=len(descriptions),
            ocr=output.ocr,
            page_starts=starts,
            paged=is_paged(ext),
            markdown=is_markdown(ext, route, config),
            outline=output.outline,
        )

    async def _run(self, fn: Callable[[J], R], job: J, timeout_s: float) -> R:
        try:
            result = await self.isolation.run(fn, job, timeout_s=timeout_s)
        except ChildTimeout as exc:
            log.warning("parse timed out after %.0f s", timeout_s)
            raise errors.timed_out(timeout_s) from exc
        except ChildCrashed as exc:
            log.warning("parse child crashed: %s", exc)
            raise errors.ParserCrashed(exc.exitcode, exc.memory_mb) from exc
        except ChildNoRoom as exc:
            log.warning("parse found no room: %s", exc)
            raise errors.ParseSpaceFull(no_room=exc.no_room) from exc
        except ChildRaised as exc:
            failure = exc.failure
            if failure.refusal:
                raise errors.DocumentRefused(failure.message) from exc
            if failure.type_name == "MemoryError":
                raise errors.out_of_memory(self.isolation.memory_mb) from exc
            log.warning("parse failed: %s: %s", failure.type_name, failure.message)
            raise errors.DocumentUnreadable(
                failure.type_name, errors.GENERIC_ADVICE, logged=True
            ) from exc
        return result

    async def _llamaparse(
        self,
        data: bytes,
        filename: str,
        ext: str,
        config: IngestionConfig,
        secrets: SecretOpener,
        journal: JobJournal | None,
    ) -> ExtractedDocument:
        assert config.llamaparse_secret_id is not None  # IngestionConfig's pair rule
        key = await secrets(config.llamaparse_secret_id, "llamaparse")
        if key is None:
            raise errors.ParserUnavailable(
                "No LlamaParse credential is configured for this collection: the secret named by "
                "llamaparse_secret_id is not a LlamaParse key in the organization's vault"
            )
        if ext == "pdf":
            # Refuse a damaged or password-protected PDF here, before LlamaParse bills for it.
            pages = await self._run(PROBE, data, PROBE_TIMEOUT_S)
            log.info(
                "LlamaParse will bill at most %d of %d pages", min(pages, config.max_pages), pages
            )
        client = LlamaParseClient(
            self.http,
            key,
            base_url=self.options.llamaparse_base_url,
            tier=self.options.llamaparse_tier,
        )
        result = await client.parse(
            data,
            filename,
            max_pages=config.max_pages,
            timeout_s=float(config.parse_timeout_seconds),
            journal=journal or _NoJournal(),
        )
        pages, truncated = cut_pages(result.pages, self.options.max_chars)
        text, starts = compose(pages, {})
        if not has_words(text):
            raise errors.empty("LlamaParse found no text in it")
        return ExtractedDocument(
            text=text,
            pages=result.billed,
            truncated=truncated,
            route="llamaparse",
            billed_pages=result.billed,
            page_starts=starts,
            paged=result.numbered and is_paged(ext),
            markdown=True,
        )


class _NoJournal:
    def __init__(self) -> None:
        self._job: str | None = None

    async def get(self) -> str | None:
        return self._job

    async def put(self, job_id: str) -> None:
        self._job = job_id

    async def clear(self) -> None:
        self._job = None


IMAGE_MARKER = "[Image: {}]"


def is_markdown(ext: str, route: str, config: IngestionConfig) -> bool:
    """Whether a local parse's text is markdown: a ``.md`` file, or LiteParse asked for it."""
    return ext == "md" or (route == "liteparse" and config.liteparse_output_format == "markdown")


def is_paged(ext: str) -> bool:
    """Whether the pages a parser read are the document's own, which a citation names: a
    PDF's, read by any parser. An office file's pages are its converter's layout and an
    image is one picture, so neither is cited by page."""
    return ext == "pdf"


def has_words(text: str) -> bool:
    """Whether any letter or digit is there: markup alone (an empty fenced block that
    LiteParse writes for an unread image page) is no text to index."""
    return any(ch.isalnum() for ch in text)


def compose(pages: list[PageText], descriptions: dict[str, str]) -> tuple[str, tuple[int, ...]]:
    """Each page's text followed by the descriptions of the images it shows; pages joined by a
    blank line. With it, the offset where each page begins in that text (an empty page takes
    no room: it ends where it begins), which places each chunk on its page."""
    text = ""
    starts: list[int] = []
    for page in pages:
        parts = [page.text] if page.text else []
        parts += [IMAGE_MARKER.format(descriptions[d]) for d in page.images if descriptions.get(d)]
        body = "\n\n".join(parts)
        if body and text:
            text += "\n\n"
        starts.append(len(text))
        text += body
    return text, tuple(starts)


def _empty(route: str, config: IngestionConfig, output: WorkerOutput) -> errors.DocumentUnreadable:
    if route == "liteparse":
        if output.missing_languages:
            codes = "+".join(output.missing_languages)
            packages = " ".join(f"tesseract-ocr-{c}" for c in output.missing_languages)
            return errors.empty(
                f"OCR could not run: the language data for {codes} is not installed on the parser",
                f"install {packages} or change ocr_language",
            )
        if not config.auto_ocr:
            return errors.empty(
                "auto_ocr is off, so scanned pages were not read", "turn auto_ocr on"
            )
        return errors.empty("not even OCR found text in it")
    if route == "pymupdf":
        return errors.empty(
            "PyMuPDF reads only a PDF's text layer",
            "if it is a scan, use a collection with the LiteParse parser (OCR)",
        )
    return errors.empty("the file is empty")


def extract_text(data: bytes, filename: str, parser: str) -> ExtractedDocument:
    """Blocking and in-process (no isolation, no image description, no cloud parser).

    For tools that parse one trusted file at a time; the parser service uses
    :class:`DocumentProcessor`, which bounds memory and time per document.
    """
    from docproc_common.parsing import PYMUPDF_LOCK

    from docproc_parser.engine import worker

    ext = check_supported(filename, parser, Capabilities.detect())
    route = route_of(ext, parser)
    if route == "llamaparse":
        raise errors.ParserUnavailable("The llamaparse parser runs only in the parser service")
    config = IngestionConfig()
    job = ParseJob(
        data=data,
        filename=filename,
        extension=ext,
        route=route,  # type: ignore[arg-type]
        max_pages=config.max_pages,
        max_chars=KB_MAX_CHARS,
        liteparse=liteparse.LiteParseOptions(
            config.liteparse_output_format,
            config.auto_ocr,
            config.ocr_language,
            config.liteparse_dpi,
            config.max_pages,
        ),
    )
    with PYMUPDF_LOCK:
        output = worker.run(job)
        own = dates.own_date(data, ext)
    text, starts = compose(output.pages, {})
    if not has_words(text):
        raise _empty(route, config, output)
    return ExtractedDocument(
        text,
        output.page_count,
        output.truncated,
        route,
        0,
        output.ocr,
        document_date=own,
        page_starts=starts,
        paged=is_paged(ext),
        markdown=is_markdown(ext, route, config),
        outline=output.outline,
    )
