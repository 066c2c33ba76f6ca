"""``DocumentParsed`` -> embed -> one transaction: chunks, row ``done``, ``DocumentIndexed``.

An ``AttemptStage`` (``docproc_common.bus.stage``): the runner claims, locks the
attempt's row and records failures; ``IndexStage`` decides what is written, ``Index``
(``SqlIndex`` in production) writes it. Exactly-once chunk sets: the chunks of a document
are written with its tracking row's completion and the idempotency claim in one
transaction, after the old set of the same vector document is removed. A document indexed
before (a reindex) loses its earlier set in that transaction, after the new one is
written, so a search sees one set or the other. A crash anywhere before the commit leaves
nothing; a redelivery after it is skipped by the claim and removes the spent chunk set; a
redelivery racing it rewrites the same deterministic set. A row deleted while indexing
gets no chunks, because the write checks for the row under a lock; a knowledge base
deleted or a name reserved by a teardown (``still_wanted``) stops the write, which is
also where the collection enters bulk mode (``bulk``).

Operator content (``docproc_common.operator_content``: a row no base owns, ``writer_kind
operator``) is embedded as ``operator_target`` resolves its name; its write holds the
name's lock (taken before the row's, ``lock``), stamps its chunks with no base and no
organization, and retires the earlier ingests of its address (``Index.complete``).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import numpy as np
import numpy.typing as npt
from docproc_common.bus.stage import AttemptHandler, Outcome
from docproc_common.citations import Citation, citations_key, load_citations
from docproc_common.db.models import KnowledgeBase, RagDocument, WriterKind
from docproc_common.embedding.client import EmbeddingClient, EmbeddingClients, EmbeddingTarget
from docproc_common.errors import AppError, InvalidInput
from docproc_common.events import DocumentIndexed, DocumentParsed
from docproc_common.failures import Stage
from docproc_common.faultpoints import crash_point
from docproc_common.operator_content import operator_target
from docproc_common.runtime import Runtime
from docproc_common.storage import AsyncStorage
from docproc_common.unfiled import is_operator_row
from docproc_common.vectorstore import DEFAULT_TEXT_SEARCH_CONFIG, DEFAULT_VECTOR_TYPE, ChunkStamp

from docproc_embedder.bulk import BulkMode
from docproc_embedder.index import SqlIndex
from docproc_embedder.metrics import CHUNKS, DOCUMENTS, PROVIDER_ERRORS, STAGE_SECONDS, TOKENS

log = logging.getLogger(__name__)

S = TypeVar("S")
S_contra = TypeVar("S_contra", contravariant=True)


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


@dataclass(frozen=True, slots=True)
class Destination:
    """Where a document's chunks go: its base, or (``kb`` None) the name's operator content;
    what embeds them; and the table's shape should the write create it."""

    kb: KnowledgeBase | None
    target: EmbeddingTarget
    text_search_config: str
    vector_type: str

    @classmethod
    def of_base(cls, kb: KnowledgeBase) -> Destination:
        return cls(kb, EmbeddingTarget.of(kb), kb.text_search_config, kb.vector_type)

    @classmethod
    def of_operator(cls, collection: str, kbs: Sequence[KnowledgeBase]) -> Destination:
        """Operator content, embedded as ``operator_target`` says (``InvalidInput`` when the
        bases on the name embed so that it would spend an organization's key)."""
        return cls(
            None,
            operator_target(collection, kbs),
            kbs[0].text_search_config if kbs else DEFAULT_TEXT_SEARCH_CONFIG,
            kbs[0].vector_type if kbs else DEFAULT_VECTOR_TYPE,
        )


class Index(Protocol[S_contra]):
    """Where the index's reads and writes go: ``SqlIndex``, or a stage test's in memory."""

    async def base(self, session: S_contra, kb_id: uuid.UUID) -> KnowledgeBase | None: ...

    async def bases_named(self, session: S_contra, collection: str) -> list[KnowledgeBase]: ...

    async def lock_name(self, session: S_contra, collection: str) -> None:
        """The name's lock (``names.lock_name``), until the transaction ends."""
        ...

    async def lock_base(self, session: S_contra, kb_id: uuid.UUID) -> KnowledgeBase | None:
        """The base, share-locked against a concurrent delete until the transaction ends."""
        ...

    async def reserved(self, session: S_contra, collection: str) -> bool:
        """Whether a teardown holds the name."""
        ...

    async def enter_bulk(self, session: S_contra, collection: str, kb: KnowledgeBase) -> None:
        """Enter bulk mode when the collection's backlog says so (``bulk.BulkMode``)."""
        ...

    async def put(
        self,
        session: S_contra,
        collection: str,
        destination: Destination,
        vector_document_id: uuid.UUID,
        chunks: list[str],
        embeddings: npt.NDArray[np.float32],
        stamp: ChunkStamp,
        citations: list[Citation] | None,
    ) -> int:
        """Write (or rewrite) the chunk set (with each chunk's citation, when the parser
        recorded them); how many chunks it holds."""
        ...

    async def drop(
        self, session: S_contra, collection: str, vector_document_ids: Sequence[uuid.UUID]
    ) -> None: ...

    async def complete(
        self, session: S_contra, row: RagDocument, vector_document_id: uuid.UUID, written: int
    ) -> None:
        """The row ``done`` with its set; the failed attempts, the replaced uploads and (for
        operator content) the earlier ingests of its address it retires."""
        ...

    def wrote(self) -> None:
        """A chunk set was committed."""
        ...


@dataclass(frozen=True, slots=True)
class Embedded:
    destination: Destination
    chunks: list[str]
    embeddings: npt.NDArray[np.float32]
    citations: list[Citation] | None = None


class IndexStage(Generic[S]):
    """The index as an ``AttemptStage``: the row's destination, the embedding, the chunk set."""

    fails_at = Stage.INDEX
    refuses: tuple[type[Exception], ...] = ()

    def __init__(
        self,
        storage: AsyncStorage,
        client_for: Callable[[EmbeddingTarget], Awaitable[EmbeddingClient]],
        index: Index[S],
    ) -> None:
        self._storage = storage
        self._client_for = client_for
        self._index = index

    async def read(self, session: S, row: RagDocument, event: DocumentParsed) -> Destination:
        if is_operator_row(row):
            name = event.collection_name
            return Destination.of_operator(name, await self._index.bases_named(session, name))
        kb = (
            await self._index.base(session, row.knowledge_base_id)
            if row.knowledge_base_id
            else None
        )
        if kb is None:
            raise KnowledgeBaseGoneError()
        return Destination.of_base(kb)

    async def compute(self, event: DocumentParsed, destination: Destination) -> Embedded:
        chunks: list[str] = json.loads(await self._storage.get(event.chunks_path))
        citations = await self._citations(event.chunks_path, len(chunks))
        try:
            client = await self._client_for(destination.target)
            started = time.perf_counter()
            embeddings = await client.embed(chunks)
            STAGE_SECONDS.labels("embed").observe(time.perf_counter() - started)
            TOKENS.labels(destination.target.provider).inc(client.count_tokens(chunks))
        except AppError:
            raise
        except Exception as exc:
            PROVIDER_ERRORS.labels(type(exc).__name__).inc()
            raise
        return Embedded(destination, chunks, embeddings, citations)

    async def _citations(self, chunks_path: str, count: int) -> list[Citation] | None:
        """The citations the parser recorded next to the chunk set; None for a set written
        before citations existed (its chunks are written without them)."""
        key = citations_key(chunks_path)
        if not await self._storage.exists(key):
            return None
        return load_citations(await self._storage.get(key), count)

    async def lock(self, session: S, event: DocumentParsed) -> None:
        """A write no base owns (operator content) holds the name's lock until it commits,
        taken before the row's as every holder of it takes it before rows
        (``names.lock_name``)."""
        if event.knowledge_base_id is None:
            await self._index.lock_name(session, event.collection_name)

    async def write(
        self, session: S, row: RagDocument, event: DocumentParsed, embedded: Embedded
    ) -> DocumentIndexed:
        """The chunk set, the row ``done``, ``DocumentIndexed``; refused (nothing written, the
        row ``error``) when the base is gone or a teardown holds the name."""
        started = time.perf_counter()
        name = event.collection_name
        destination = embedded.destination
        kb = None
        if destination.kb is not None:
            kb = await self._index.lock_base(session, destination.kb.id)
            if kb is None:
                raise KnowledgeBaseGoneError()
            destination = Destination.of_base(kb)
        if await self._index.reserved(session, name):
            raise CollectionReservedError()
        if kb is not None:
            await self._index.enter_bulk(session, name, kb)
        stamp = ChunkStamp(
            knowledge_base_id=kb.id if kb else None,
            organization_id=kb.organization_id if kb else None,
            tracking_id=row.id,
            source=row.source,
            document_type=row.filetype,
            organizational_unit=row.organizational_unit,
            document_date=row.document_date,
            source_path=row.source_path,
            filename=row.filename,
            content_hash=row.content_hash,
            writer_kind=row.writer_kind or WriterKind.DOCUMENT,
        )
        vdid = vector_document_id(event)
        replaced = row.vector_document_id
        written = await self._index.put(
            session,
            name,
            destination,
            vdid,
            embedded.chunks,
            embedded.embeddings,
            stamp,
            embedded.citations,
        )
        if replaced is not None and replaced != vdid:
            # a re-parse (reindex, retry): the set it replaces goes in the same
            # transaction, so a search sees the old set or the new, never neither
            await self._index.drop(session, name, [replaced])
        await self._index.complete(session, row, vdid, written)
        crash_point("embedder.in_transaction")
        STAGE_SECONDS.labels("write").observe(time.perf_counter() - started)
        return DocumentIndexed(
            document_id=row.id, collection_name=name, vector_document_id=vdid, chunk_count=written
        )

    async def settled(self, event: DocumentParsed, outcome: Outcome) -> None:
        """The chunk set served its purpose once the attempt is settled (the vectors and the
        parsed text remain); a crash before its delete leaves it to the redelivery, which
        removes it."""
        if outcome is Outcome.OVERTAKEN:
            return  # the delivery that overtook this one settles it
        if outcome in (Outcome.SUPERSEDED, Outcome.ABANDONED):
            log.info("document %s is gone or superseded; nothing to embed", event.document_id)
        if outcome is Outcome.WRITTEN:
            self._index.wrote()
            crash_point("embedder.after_commit")
        await self._storage.delete(event.chunks_path)
        await self._storage.delete(citations_key(event.chunks_path))
        if outcome is Outcome.WRITTEN:
            CHUNKS.inc(event.chunk_count)
            DOCUMENTS.labels("index", "ok").inc()
        elif outcome is Outcome.FAILED:
            DOCUMENTS.labels("index", "error").inc()


class EmbedderHandler(AttemptHandler[DocumentParsed, Destination, Embedded]):
    """The embedder on the database: ``IndexStage`` over ``SqlIndex`` and ``bulk``."""

    def __init__(
        self, runtime: Runtime, clients: EmbeddingClients, bulk: BulkMode | None = None
    ) -> None:
        self.bulk = bulk or BulkMode(runtime)

        async def client_for(target: EmbeddingTarget) -> EmbeddingClient:
            return await clients.for_collection(target, runtime.sessionmaker)

        stage = IndexStage(runtime.storage, client_for, SqlIndex(self.bulk))
        super().__init__(runtime.sessionmaker, stage)
