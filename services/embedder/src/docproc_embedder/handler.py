"""``DocumentParsed`` -> embed -> one transaction: chunks, row ``done``, ``DocumentIndexed``.

Exactly-once chunk sets: the chunks of a document are written with its tracking
row's completion and the idempotency claim in one transaction, after the old
set of the same vector document is removed. A document indexed before (a reindex)
loses its earlier set in that transaction, after the new one is written, so a search
sees one set or the other. A crash anywhere before the commit leaves nothing; a
redelivery after it is skipped by the claim and removes the spent chunk set; a
redelivery racing it rewrites the same deterministic set. A row deleted while
indexing gets no chunks, because the write checks for the row under a lock; a
knowledge base deleted or a name reserved by a teardown (``still_wanted``) stops
the write.
"""

from __future__ import annotations

import json
import logging
import time
import uuid

import numpy as np
import numpy.typing as npt
from docproc_common.bus.delivery import Delivery
from docproc_common.bus.outbox import enqueue
from docproc_common.bus.unit import AttemptUnit, Stale
from docproc_common.db.models import KnowledgeBase, RagDocument, WriterKind
from docproc_common.documents import fail_document, retire_failed_attempts
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.errors import AppError, InvalidInput
from docproc_common.events import DocumentIndexed, DocumentParsed
from docproc_common.failures import GaveUp, Stage
from docproc_common.faultpoints import crash_point
from docproc_common.runtime import Runtime
from docproc_common.vectorstore import (
    ChunkStamp,
    delete_documents,
    ensure_table,
    table_exists,
    write_chunks,
)
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_embedder import repository
from docproc_embedder.bulk import BulkMode
from docproc_embedder.metrics import CHUNKS, DOCUMENTS, PROVIDER_ERRORS, STAGE_SECONDS, TOKENS

log = logging.getLogger(__name__)


def vector_document_id(event: DocumentParsed) -> uuid.UUID:
    """Deterministic per attempt: a redelivery rewrites the same set, a retry gets a new one."""
    return uuid.uuid5(event.document_id, str(event.attempt_id))


class KnowledgeBaseGoneError(InvalidInput):
    def __init__(self) -> None:
        super().__init__("The knowledge base was deleted while the document was being indexed")


class CollectionReservedError(InvalidInput):
    def __init__(self) -> None:
        super().__init__(
            "The collection is being deleted; upload the document again once it is recreated"
        )


async def write_index(
    session: AsyncSession,
    doc: RagDocument,
    event: DocumentParsed,
    kb_id: uuid.UUID,
    chunks: list[str],
    embeddings: npt.NDArray[np.float32],
) -> DocumentIndexed | None:
    """The index's writes, in its unit of work (``doc`` is the attempt's locked row): the chunk
    set, the row ``done``, ``DocumentIndexed``. None when the base is gone or its name is
    reserved by a teardown: the row turns ``error`` instead and no chunk is written."""
    kb = await repository.share_lock_kb(session, kb_id)
    if kb is None or await repository.reserved(session, event.collection_name):
        error: InvalidInput = KnowledgeBaseGoneError() if kb is None else CollectionReservedError()
        await fail_document(
            session, event.document_id, event.attempt_id, Stage.INDEX, error, event.collection_name
        )
        DOCUMENTS.labels("index", "error").inc()
        return None
    if not await table_exists(session, event.collection_name):
        await ensure_table(
            session, event.collection_name, kb.embedding_dim, kb.text_search_config, kb.vector_type
        )
    stamp = ChunkStamp(
        knowledge_base_id=kb.id,
        organization_id=kb.organization_id,
        tracking_id=doc.id,
        source=doc.source,
        document_type=doc.filetype,
        organizational_unit=doc.organizational_unit,
        document_date=doc.document_date,
        source_path=doc.source_path,
        filename=doc.filename,
        content_hash=doc.content_hash,
        writer_kind=doc.writer_kind or WriterKind.DOCUMENT,
    )
    vdid = vector_document_id(event)
    replaced = doc.vector_document_id
    written = await write_chunks(session, event.collection_name, vdid, chunks, embeddings, stamp)
    if replaced is not None and replaced != vdid:
        # a re-parse (reindex, retry): the set it replaces goes in the same
        # transaction, so a search sees the old set or the new, never neither
        await delete_documents(session, event.collection_name, [replaced])
    await repository.complete(session, doc.id, vdid, written)
    await retire_failed_attempts(session, doc.id)
    await repository.retire_replaced(session, doc)
    out = DocumentIndexed(
        document_id=doc.id,
        collection_name=event.collection_name,
        vector_document_id=vdid,
        chunk_count=written,
    )
    await enqueue(session, out)
    crash_point("embedder.in_transaction")
    return out


async def _kb_of(session: AsyncSession, doc: RagDocument) -> KnowledgeBase | None:
    return await repository.kb_of(session, doc.knowledge_base_id) if doc.knowledge_base_id else None


class EmbedderHandler:
    def __init__(self, runtime: Runtime, clients: EmbeddingClients) -> None:
        self._runtime = runtime
        self._clients = clients
        self.bulk = BulkMode(runtime)

    async def __call__(self, event: DocumentParsed, delivery: Delivery) -> None:
        runtime = self._runtime
        unit = AttemptUnit(runtime.sessionmaker, delivery, event.document_id, event.attempt_id)
        kb = await unit.read(_kb_of)
        if isinstance(kb, Stale):
            # a redelivery after the commit, or a row gone meanwhile: the chunk set is spent
            if kb is Stale.SUPERSEDED:
                log.info("document %s is gone or superseded; nothing to embed", event.document_id)
            await runtime.storage.delete(event.chunks_path)
            return
        if kb is None:
            await self._fail(event, delivery, KnowledgeBaseGoneError())
            return
        chunks: list[str] = json.loads(await runtime.storage.get(event.chunks_path))
        try:
            client = await self._clients.for_collection(kb, runtime.sessionmaker)
            started = time.perf_counter()
            embeddings = await client.embed(chunks)
            STAGE_SECONDS.labels("embed").observe(time.perf_counter() - started)
            TOKENS.labels(kb.embedding_provider).inc(client.count_tokens(chunks))
        except AppError as exc:
            await self._fail(event, delivery, exc)
            return
        except Exception as exc:
            PROVIDER_ERRORS.labels(type(exc).__name__).inc()
            raise
        await self.bulk.maybe_enter(event.collection_name, kb)
        started = time.perf_counter()
        kb_id = kb.id
        indexed = await unit.commit_attempt(
            lambda s, doc: write_index(s, doc, event, kb_id, chunks, embeddings)
        )
        if indexed is None:
            return  # processed already, deleted while indexing, or failed in the unit
        self.bulk.wrote()
        crash_point("embedder.after_commit")
        STAGE_SECONDS.labels("write").observe(time.perf_counter() - started)
        # The chunk set served its purpose (the vectors and the parsed text remain); a crash
        # before this line leaves it to the redelivery, which removes it.
        await runtime.storage.delete(event.chunks_path)
        CHUNKS.inc(indexed.chunk_count)
        DOCUMENTS.labels("index", "ok").inc()

    async def give_up(self, event: DocumentParsed, delivery: Delivery, exc: BaseException) -> None:
        """Every attempt failed on something transient (the provider, storage, the database):
        the document ends ``error`` instead of ``processing`` for ever."""
        await self._fail(event, delivery, GaveUp(Stage.INDEX, exc, delivery.attempt))

    async def _fail(self, event: DocumentParsed, delivery: Delivery, exc: BaseException) -> None:
        unit = AttemptUnit(
            self._runtime.sessionmaker, delivery, event.document_id, event.attempt_id
        )
        if await unit.commit_failure(Stage.INDEX, exc, event.collection_name) is None:
            return
        await self._runtime.storage.delete(event.chunks_path)
        DOCUMENTS.labels("index", "error").inc()
