"""``DocumentAccepted`` -> parse and chunk -> ``DocumentParsed`` (or the row says ``error``).

An ``AttemptStage`` (``docproc_common.bus.stage``): the runner claims, locks the
attempt's row and records failures. Parsed text, the chunk set and its citations (each
chunk's pages, offsets and headings: ``citations``) go to storage under keys derived from
the document and the attempt, so a redelivery overwrites the same objects. The event and the row update commit together with the idempotency claim.

What ends a document, and what is tried again:

* the document itself cannot be read (damaged, password-protected, empty, a parse
  past its deadline or its memory limit, a refusal by the collection's parser or its
  credential): the row turns ``error`` with the three-part message at once; the same
  bytes would fail the same way;
* a parse child that died without a word, or a full or read-only temporary directory
  (``errors.ParseRetried``), is tried again by the bus after its delay, never in place,
  since the host may be to blame; past the last attempt the row turns ``error`` with its
  own three-part message and the event is dead-lettered;
* anything else (storage, database, a cloud parser's 5xx) is retried by the bus; on
  the last attempt the row turns ``error`` and the event is dead-lettered, so no
  document stays ``processing`` forever.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from docproc_common.blocking import BlockingPool
from docproc_common.bus.stage import Outcome
from docproc_common.citations import Citation, citations_key, dump_citations
from docproc_common.db.models import RagDocument
from docproc_common.events import DocumentAccepted, DocumentParsed
from docproc_common.failures import Stage
from docproc_common.ingestion import IngestionConfig
from docproc_common.splitters import Chunk, split_text
from docproc_common.storage import AsyncStorage
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_parser import repository
from docproc_parser.citations import cite_document, page_index
from docproc_parser.engine import errors
from docproc_parser.engine.processor import (
    DocumentProcessor,
    ExtractedDocument,
    SecretOpener,
    has_words,
)
from docproc_parser.keys import Lent
from docproc_parser.metrics import (
    DOCUMENTS,
    IMAGES_DESCRIBED,
    LLAMAPARSE_PAGES,
    PAGES,
    ROUTES,
    STAGE_SECONDS,
)

log = logging.getLogger(__name__)


def parsed_key(event: DocumentAccepted) -> str:
    return f"rag/{event.collection_name}/parsed/{event.document_id}.txt"


def chunks_key(event: DocumentAccepted) -> str:
    return f"rag/{event.collection_name}/chunks/{event.document_id}/{event.attempt_id}.json"


def journal_key(event: DocumentAccepted, data: bytes, config: IngestionConfig) -> str:
    """Per document, file bytes and page bound, not per attempt: a retry of the same file
    (after a deadline, say) resumes the job already paid for instead of submitting it again."""
    digest = hashlib.sha256(data).hexdigest()[:32]
    return (
        f"rag/{event.collection_name}/llamaparse/{event.document_id}/"
        f"{digest}-{config.max_pages}.json"
    )


@dataclass(frozen=True, slots=True)
class ParsedChunks:
    text: str
    chunks: list[str]
    pages: int | None
    document_date: date | None = None
    page_map: list[dict[str, object]] | None = None
    citations: list[Citation] | None = None


class StorageJournal:
    """Keeps a submitted LlamaParse job id next to the document, so a redelivery resumes it."""

    def __init__(self, storage: AsyncStorage, key: str) -> None:
        self._storage = storage
        self._key = key

    async def get(self) -> str | None:
        if not await self._storage.exists(self._key):
            return None
        job = json.loads(await self._storage.get(self._key)).get("job_id")
        return str(job) if job else None

    async def put(self, job_id: str) -> None:
        await self._storage.put(
            self._key, json.dumps({"job_id": job_id}).encode(), "application/json"
        )

    async def clear(self) -> None:
        await self._storage.delete(self._key)


def chunk(text: str, config: IngestionConfig) -> list[Chunk]:
    """Blocking: runs on the blocking pool."""
    return split_text(
        text,
        chunk_size=config.chunk_size,
        chunk_overlap=config.chunk_overlap,
        strategy=config.chunking_strategy,
    )


def chunk_and_cite(
    doc: ExtractedDocument, config: IngestionConfig
) -> tuple[list[Chunk], list[Citation]]:
    """Blocking: the chunks of ``doc`` and where each came from (``citations``)."""
    pieces = chunk(doc.text, config)
    return pieces, cite_document(doc, pieces, config.chunking_strategy)


def page_map(
    text: str, starts: tuple[int, ...], chunks: list[Chunk]
) -> list[dict[str, object]] | None:
    """Per page the parser read separately, in order: how many chunks begin on it (the chunk
    set is in page order, so these counts cut it into pages) and whether it holds any text.
    None when the parser gave no pages (the parsed view then shows the document as one)."""
    if not starts:
        return None
    counts = [0] * len(starts)
    for c in chunks:
        counts[page_index(starts, c.start)] += 1
    ends = [*starts[1:], len(text)]
    return [
        {"chunks": n, "has_text": has_words(text[a:b])}
        for n, a, b in zip(counts, starts, ends, strict=True)
    ]


def resolved(config: IngestionConfig, lent: Lent) -> IngestionConfig:
    """``config`` with the vision model profile it selects in place (``Lent.vision``).

    A selected profile that is gone (or that the row does not select) fails a document that
    describes its images, with a message saying what to do; one that does not describe them
    never asks for it.
    """
    chosen = config.vision_profile_id
    if chosen is None:
        return config
    if lent.vision is not None and lent.vision[0] == chosen:
        return config.with_vision(lent.vision[1])
    if not config.image_description:
        return config.model_copy(update={"vision_profile_id": None})
    raise errors.DocumentUnreadable(
        "VisionProfileNotFound",
        "the vision model profile the collection selects no longer exists; select another "
        "in the knowledge base's settings, then retry the upload",
    )


class ParseStage:
    """The parse as an ``AttemptStage``: read what the row lends, parse and store the text and
    the chunk set (no session), record them on the row with ``DocumentParsed``."""

    fails_at = Stage.PARSE
    #: a configuration the event carries that no longer validates is the document's own
    refuses: tuple[type[Exception], ...] = (ValidationError,)

    def __init__(
        self,
        storage: AsyncStorage,
        pool: BlockingPool,
        processor: DocumentProcessor,
        keys: Callable[[Lent], SecretOpener],
    ) -> None:
        self._storage = storage
        self._pool = pool
        self._processor = processor
        self._keys = keys

    async def read(self, session: AsyncSession, row: RagDocument, _event: DocumentAccepted) -> Lent:
        """What the row lends, with the vision model profile its configuration selects
        resolved now (the profile as it is at parse time, of the row's organization)."""
        selected = Lent.selected(row)
        if selected is None:
            return Lent.by(row)
        return Lent.by(row, await repository.vision_profile(session, selected, row.organization_id))

    async def compute(self, event: DocumentAccepted, lent: Lent) -> ParsedChunks:
        parsed = await self._parse(event, lent)
        # stored before the unit, under keys of the attempt: a redelivery overwrites them
        await self._storage.put(
            parsed_key(event), parsed.text.encode(), "text/plain; charset=utf-8"
        )
        await self._storage.put(
            chunks_key(event), json.dumps(parsed.chunks).encode(), "application/json"
        )
        if parsed.citations is not None:
            await self._storage.put(
                citations_key(chunks_key(event)),
                dump_citations(parsed.citations),
                "application/json",
            )
        return parsed

    async def lock(self, _session: object, _event: DocumentAccepted) -> None:
        """The parse's write locks nothing before its row."""

    async def write(
        self, _session: object, row: RagDocument, event: DocumentAccepted, parsed: ParsedChunks
    ) -> DocumentParsed:
        """The row records the parse (the uploader's ``document_date`` wins over the file's
        metadata); ``DocumentParsed`` goes out with it."""
        row.parsed_path = parsed_key(event)
        row.page_map = parsed.page_map
        if row.document_date is None:
            row.document_date = parsed.document_date
        return DocumentParsed(
            document_id=event.document_id,
            attempt_id=event.attempt_id,
            collection_name=event.collection_name,
            knowledge_base_id=event.knowledge_base_id,
            chunks_path=chunks_key(event),
            parsed_path=parsed_key(event),
            chunk_count=len(parsed.chunks),
        )

    async def settled(self, event: DocumentAccepted, outcome: Outcome) -> None:
        """A synced file's temporary copy goes once its attempt is settled (it keeps no
        original): parsed, failed, or superseded before or during the parse. An attempt
        superseded during the parse leaves its chunk set to nobody: it goes too (the
        parsed text is the document's, under a key a newer attempt may have written)."""
        if outcome is Outcome.SUPERSEDED:
            log.info("document %s is gone or superseded; nothing to parse", event.document_id)
        if outcome is Outcome.ABANDONED:
            log.info(
                "document %s was superseded while parsed; its chunk set goes", event.document_id
            )
            await self._storage.delete(chunks_key(event))
        settled = (Outcome.WRITTEN, Outcome.FAILED, Outcome.SUPERSEDED, Outcome.ABANDONED)
        if outcome in settled and event.staged:
            await self._storage.delete(event.storage_path)
        if outcome is Outcome.WRITTEN:
            DOCUMENTS.labels("parse", "ok").inc()
        elif outcome is Outcome.FAILED:
            DOCUMENTS.labels("parse", "error").inc()

    async def _parse(self, event: DocumentAccepted, lent: Lent) -> ParsedChunks:
        config = resolved(IngestionConfig.model_validate(event.ingestion_config), lent)
        try:
            data = await self._storage.get(event.storage_path)
        except Exception as exc:
            if await self._storage.exists(event.storage_path):
                raise  # the store hiccuped: try again
            raise errors.DocumentUnreadable(
                "FileNotFound", "the stored copy of the file is gone; upload the file again"
            ) from exc
        started = time.perf_counter()
        doc: ExtractedDocument = await self._processor.extract(
            data,
            event.filename,
            config,
            secrets=self._keys(lent),
            journal=StorageJournal(self._storage, journal_key(event, data, config)),
        )
        STAGE_SECONDS.labels("parse").observe(time.perf_counter() - started)
        ROUTES.labels(doc.route).inc()
        if doc.pages:
            PAGES.inc(doc.pages)
        if doc.images_described:
            IMAGES_DESCRIBED.inc(doc.images_described)
        if doc.billed_pages:
            LLAMAPARSE_PAGES.inc(doc.billed_pages)
        started = time.perf_counter()
        pieces, citations = await self._pool.run(chunk_and_cite, doc, config)
        chunks = [c.text for c in pieces]
        STAGE_SECONDS.labels("chunk").observe(time.perf_counter() - started)
        log.info(
            "parsed %s via %s: %s pages, %d chars, %d chunks%s",
            event.document_id,
            doc.route,
            doc.pages,
            len(doc.text),
            len(chunks),
            " (truncated)" if doc.truncated else "",
        )
        return ParsedChunks(
            doc.text,
            chunks,
            doc.pages,
            doc.document_date,
            page_map(doc.text, doc.page_starts, pieces),
            citations,
        )
