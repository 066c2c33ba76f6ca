"""``DocumentAccepted`` -> parse and chunk -> ``DocumentParsed`` (or the row says ``error``).

Parsed text and the chunk set go to storage under keys derived from the document
and the attempt, so a redelivery overwrites the same objects. The event and the
row update commit together with the idempotency claim.

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

import bisect
import hashlib
import json
import logging
import time
import uuid
from dataclasses import dataclass
from datetime import date

from docproc_common import vault
from docproc_common.bus.delivery import Delivery
from docproc_common.bus.outbox import enqueue
from docproc_common.bus.unit import AttemptUnit, Stale
from docproc_common.db.models import RagDocument
from docproc_common.errors import AppError
from docproc_common.events import DocumentAccepted, DocumentParsed
from docproc_common.failures import GaveUp, Stage
from docproc_common.ingestion import IngestionConfig
from docproc_common.runtime import Runtime
from docproc_common.splitters import Chunk, split_text
from docproc_common.storage import AsyncStorage
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_parser import repository
from docproc_parser.engine import errors
from docproc_parser.engine.processor import (
    DocumentProcessor,
    ExtractedDocument,
    SecretOpener,
    has_words,
)
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
        counts[max(bisect.bisect_right(starts, c.start) - 1, 0)] += 1
    ends = [*starts[1:], len(text)]
    return [
        {"chunks": n, "has_text": has_words(text[a:b])}
        for n, a, b in zip(counts, starts, ends, strict=True)
    ]


async def record_parse(
    session: AsyncSession, event: DocumentAccepted, parsed: ParsedChunks
) -> DocumentParsed:
    """The parse's writes, in its unit of work: the row records it, ``DocumentParsed`` is queued."""
    await repository.record_parsed(
        session, event.document_id, parsed_key(event), parsed.document_date, parsed.page_map
    )
    out = DocumentParsed(
        document_id=event.document_id,
        attempt_id=event.attempt_id,
        collection_name=event.collection_name,
        knowledge_base_id=event.knowledge_base_id,
        chunks_path=chunks_key(event),
        parsed_path=parsed_key(event),
        chunk_count=len(parsed.chunks),
    )
    await enqueue(session, out)
    return out


@dataclass(frozen=True, slots=True)
class Lent:
    """What a document's row lends its parse: the organization whose vault is opened, and
    the (secret, kind) pairs its stored configuration binds.

    The row's configuration is the one the API checked the bindings of, in the transaction
    that queued the attempt (the event carries a copy): a secret it does not bind, for the
    use it binds it to, is never opened, whatever an event names. The parser cannot ask
    again whether the binder may see the key (their permissions are their token's); it
    can hold the key to that binding, to the document's organization and to its kind.
    """

    organization_id: str | None
    secrets: frozenset[tuple[uuid.UUID, str]]

    @classmethod
    def by(cls, row: RagDocument) -> Lent:
        try:
            bindings = IngestionConfig.model_validate(row.ingestion_config).secret_bindings()
        except ValidationError:
            bindings = frozenset()
        return cls(row.organization_id, frozenset((b.secret_id, b.kind) for b in bindings))


async def _lent_by(_session: AsyncSession, row: RagDocument) -> Lent:
    return Lent.by(row)


class ParserHandler:
    def __init__(self, runtime: Runtime, processor: DocumentProcessor) -> None:
        self._runtime = runtime
        self._processor = processor

    async def __call__(self, event: DocumentAccepted, delivery: Delivery) -> None:
        runtime = self._runtime
        unit = AttemptUnit(runtime.sessionmaker, delivery, event.document_id, event.attempt_id)
        lent = await unit.read(_lent_by)
        if lent is Stale.PROCESSED:
            return
        if lent is Stale.SUPERSEDED:
            log.info("document %s is gone or superseded; nothing to parse", event.document_id)
            if event.staged:  # a sync's temporary copy nobody will read any more
                await runtime.storage.delete(event.storage_path)
            return
        try:
            parsed = await self._parse(event, lent)
        except (AppError, ValidationError) as exc:
            # The document itself cannot be read: that is final for this attempt.
            log.warning("parsing %s failed: %s", event.document_id, exc)
            await self._fail(event, delivery, exc)
            return
        await runtime.storage.put(
            parsed_key(event), parsed.text.encode(), "text/plain; charset=utf-8"
        )
        await runtime.storage.put(
            chunks_key(event), json.dumps(parsed.chunks).encode(), "application/json"
        )
        if await unit.commit_attempt(lambda s, _row: record_parse(s, event, parsed)) is None:
            return
        await self._drop_staged(event)
        if parsed.pages:
            PAGES.inc(parsed.pages)
        DOCUMENTS.labels("parse", "ok").inc()

    async def _parse(self, event: DocumentAccepted, lent: Lent) -> ParsedChunks:
        runtime = self._runtime
        config = IngestionConfig.model_validate(event.ingestion_config)
        try:
            data = await runtime.storage.get(event.storage_path)
        except Exception as exc:
            if await runtime.storage.exists(event.storage_path):
                raise  # the store hiccuped: try again
            raise errors.DocumentUnreadable(
                "FileNotFound", "the stored copy of the file is gone; upload the file again"
            ) from exc
        started = time.perf_counter()
        doc: ExtractedDocument = await self._processor.extract(
            data,
            event.filename,
            config,
            secrets=self._secrets(lent),
            journal=StorageJournal(runtime.storage, journal_key(event, data, config)),
        )
        STAGE_SECONDS.labels("parse").observe(time.perf_counter() - started)
        ROUTES.labels(doc.route).inc()
        if doc.images_described:
            IMAGES_DESCRIBED.inc(doc.images_described)
        if doc.billed_pages:
            LLAMAPARSE_PAGES.inc(doc.billed_pages)
        started = time.perf_counter()
        pieces = await runtime.pool.run(chunk, doc.text, config)
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
        )

    def _secrets(self, lent: Lent) -> SecretOpener:
        """Opens a key only as the row's configuration binds it (``Lent``)."""
        runtime = self._runtime

        async def open_key(secret_id: uuid.UUID, kind: str) -> str | None:
            if (secret_id, kind) not in lent.secrets:
                log.warning("secret %s (%s) is not bound by the document's row", secret_id, kind)
                return None
            async with runtime.sessionmaker() as session:
                opened = await vault.open_secret(
                    session,
                    secret_id=secret_id,
                    organization_id=lent.organization_id,
                    master_key=runtime.settings.vault.key(),
                    kind=kind,
                )
            if opened is None:
                return None
            key = opened.value.get("api_key")
            return str(key) if key else None

        return open_key

    async def _drop_staged(self, event: DocumentAccepted) -> None:
        """A synced file's temporary copy goes once its attempt is settled (it keeps no original)."""
        if event.staged:
            await self._runtime.storage.delete(event.storage_path)

    async def give_up(
        self, event: DocumentAccepted, delivery: Delivery, exc: BaseException
    ) -> None:
        """Every attempt failed: the document ends ``error``, saying what its parse child's
        crash or full temporary space means, or how often it failed on something other than
        the file."""
        if isinstance(exc, errors.ParseRetried):
            await self._fail(event, delivery, exc.final)
        else:
            await self._fail(event, delivery, GaveUp(Stage.PARSE, exc, delivery.attempt))

    async def _fail(self, event: DocumentAccepted, delivery: Delivery, exc: BaseException) -> None:
        unit = AttemptUnit(
            self._runtime.sessionmaker, delivery, event.document_id, event.attempt_id
        )
        if await unit.commit_failure(Stage.PARSE, exc, event.collection_name) is None:
            return
        await self._drop_staged(event)
        DOCUMENTS.labels("parse", "error").inc()
