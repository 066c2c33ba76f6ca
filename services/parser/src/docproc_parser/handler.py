"""``DocumentAccepted`` -> parse and chunk -> ``DocumentParsed`` (or the row says ``error``).

Parsed text and the chunk set go to storage under keys derived from the document
and the attempt, so a redelivery overwrites the same objects. The event and the
row update commit together with the idempotency claim.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass

from docproc_common.bus.delivery import Delivery
from docproc_common.bus.outbox import enqueue
from docproc_common.documents import fail_document
from docproc_common.errors import AppError
from docproc_common.events import DocumentAccepted, DocumentParsed
from docproc_common.failures import Stage
from docproc_common.ingestion import IngestionConfig
from docproc_common.processor import extract_text
from docproc_common.runtime import Runtime
from docproc_common.splitters import split_text

from docproc_parser import repository
from docproc_parser.metrics import DOCUMENTS, PAGES, STAGE_SECONDS

log = logging.getLogger(__name__)


def parsed_key(event: DocumentAccepted) -> str:
    return f"rag/{event.collection_name}/parsed/{event.document_id}.txt"


def chunks_key(event: DocumentAccepted) -> str:
    return f"rag/{event.collection_name}/chunks/{event.document_id}/{event.attempt_id}.json"


@dataclass(frozen=True, slots=True)
class ParsedChunks:
    text: str
    chunks: list[str]
    pages: int | None


def parse_and_chunk(data: bytes, event: DocumentAccepted) -> ParsedChunks:
    """Blocking: runs on the blocking pool."""
    config = IngestionConfig.model_validate(event.ingestion_config)
    started = time.perf_counter()
    doc = extract_text(data, event.filename, config.parser)
    STAGE_SECONDS.labels("parse").observe(time.perf_counter() - started)
    started = time.perf_counter()
    chunks = split_text(
        doc.text,
        chunk_size=config.chunk_size,
        chunk_overlap=config.chunk_overlap,
        strategy=config.chunking_strategy,
    )
    STAGE_SECONDS.labels("chunk").observe(time.perf_counter() - started)
    return ParsedChunks(doc.text, [c.text for c in chunks], doc.pages)


class ParserHandler:
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    async def __call__(self, event: DocumentAccepted, delivery: Delivery) -> None:
        runtime = self._runtime
        async with runtime.sessionmaker() as session:
            if await delivery.already_processed(session):
                return
            if (
                await repository.current_attempt(session, event.document_id, event.attempt_id)
                is None
            ):
                log.info("document %s is gone or superseded; nothing to parse", event.document_id)
                return
        data = await runtime.storage.get(event.storage_path)
        try:
            parsed = await runtime.pool.run(parse_and_chunk, data, event)
        except (AppError, ValueError, RuntimeError) as exc:
            # The document itself cannot be read: that is final for this attempt.
            log.warning("parsing %s failed", event.document_id, exc_info=True)
            await self._fail(event, delivery, exc)
            return
        await runtime.storage.put(
            parsed_key(event), parsed.text.encode(), "text/plain; charset=utf-8"
        )
        await runtime.storage.put(
            chunks_key(event), json.dumps(parsed.chunks).encode(), "application/json"
        )
        async with runtime.sessionmaker() as session, session.begin():
            if not await delivery.claim(session):
                return
            if (
                await repository.current_attempt(session, event.document_id, event.attempt_id)
                is None
            ):
                return
            await repository.record_parsed(session, event.document_id, parsed_key(event))
            await enqueue(
                session,
                DocumentParsed(
                    document_id=event.document_id,
                    attempt_id=event.attempt_id,
                    collection_name=event.collection_name,
                    knowledge_base_id=event.knowledge_base_id,
                    chunks_path=chunks_key(event),
                    parsed_path=parsed_key(event),
                    chunk_count=len(parsed.chunks),
                ),
            )
        if event.staged:
            await runtime.storage.delete(event.storage_path)
        if parsed.pages:
            PAGES.inc(parsed.pages)
        DOCUMENTS.labels("parse", "ok").inc()

    async def _fail(self, event: DocumentAccepted, delivery: Delivery, exc: BaseException) -> None:
        async with self._runtime.sessionmaker() as session, session.begin():
            if not await delivery.claim(session):
                return
            await fail_document(
                session,
                event.document_id,
                event.attempt_id,
                Stage.PARSE,
                exc,
                event.collection_name,
            )
        DOCUMENTS.labels("parse", "error").inc()
