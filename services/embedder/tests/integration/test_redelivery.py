"""The embedder's handler is idempotent against redelivery.

The real ``EmbedderHandler`` with the local model on a fresh database of the test
Postgres and local storage. A redelivery after the commit (same event id), a second
``DocumentParsed`` for the same attempt (another event id), and two deliveries racing
each other with both embeddings done before either writes, all leave exactly one chunk
set, one ``DocumentIndexed`` and the tracking row ``done``.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from docproc_common.bus.delivery import Delivery
from docproc_common.db.models import DocumentStatus, RagDocument
from docproc_common.embedding.client import EmbeddingClient, EmbeddingClients
from docproc_common.events import DocumentIndexed, DocumentParsed
from docproc_common.runtime import Runtime
from docproc_common.settings import Settings
from docproc_embedder.handler import EmbedderHandler, vector_document_id
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from .conftest import org_kb

pytestmark = pytest.mark.integration

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
CHUNKS = [f"Paragraph {i}: the capybara is the largest rodent, number {i}." for i in range(7)]


async def parsed_document(runtime: Runtime) -> DocumentParsed:
    """A knowledge base, its tracking row waiting for one attempt, and that attempt's chunk set."""
    name = f"redeliv_{uuid.uuid4().hex[:8]}"
    attempt = uuid.uuid4()
    async with runtime.sessionmaker() as s, s.begin():
        kb = org_kb(name, embedding_provider="local", embedding_model=MINILM, embedding_dim=384)
        s.add(kb)
        await s.flush()
        doc = RagDocument(
            collection_name=name,
            knowledge_base_id=kb.id,
            organization_id="acme",
            filename="capybara.txt",
            filetype="txt",
            status=DocumentStatus.PROCESSING,
            attempt_id=attempt,
        )
        s.add(doc)
        await s.flush()
        event = DocumentParsed(
            document_id=doc.id,
            attempt_id=attempt,
            collection_name=name,
            knowledge_base_id=kb.id,
            chunks_path=f"rag/{name}/chunks/{doc.id}/{attempt}.json",
            parsed_path=f"rag/{name}/parsed/{doc.id}.txt",
            chunk_count=len(CHUNKS),
        )
    await put_chunks(runtime, event)
    return event


async def put_chunks(runtime: Runtime, event: DocumentParsed) -> None:
    # Put back before every redelivery, so a broken guard shows up as a second copy or
    # a rewrite, not as a missing file.
    await runtime.storage.put(event.chunks_path, json.dumps(CHUNKS).encode(), "application/json")


def delivery(event_id: uuid.UUID, attempt: int = 1) -> Delivery:
    return Delivery(
        consumer="embedder", topic=DocumentParsed.TOPIC, event_id=event_id, attempt=attempt
    )


async def one(sessions: async_sessionmaker[AsyncSession], sql: str, **params: Any) -> Any:
    async with sessions() as s:
        return (await s.execute(text(sql), params)).one()


async def assert_one_chunk_set(runtime: Runtime, event: DocumentParsed) -> None:
    sessions = runtime.sessionmaker
    vdid = vector_document_id(event)
    rows, chunk_numbers, sets, vector_docs = await one(
        sessions,
        f"SELECT count(*), count(DISTINCT chunk_no), count(DISTINCT document_id), "
        f"array_agg(DISTINCT document_id) FROM rag_{event.collection_name}",
    )
    assert (rows, chunk_numbers, sets) == (len(CHUNKS), len(CHUNKS), 1)
    assert vector_docs == [vdid]
    status, chunk_count, stored_vdid, error, completed = await one(
        sessions,
        "SELECT status, chunk_count, vector_document_id, error_message, completed_at "
        "FROM rag_documents WHERE id = :d",
        d=event.document_id,
    )
    assert (status, chunk_count, stored_vdid, error) == ("done", len(CHUNKS), vdid, None)
    assert completed is not None
    (indexed,) = await one(
        sessions,
        "SELECT count(*) FROM outbox WHERE topic = :t AND payload->>'document_id' = :d",
        t=DocumentIndexed.TOPIC,
        d=str(event.document_id),
    )
    assert indexed == 1


async def test_a_redelivery_after_the_commit_adds_no_second_copy(
    runtime: Runtime, clients: EmbeddingClients
) -> None:
    handler = EmbedderHandler(runtime, clients)
    event = await parsed_document(runtime)
    event_id = uuid.uuid4()
    await handler(event, delivery(event_id))
    await assert_one_chunk_set(runtime, event)
    assert not await runtime.storage.exists(event.chunks_path)  # the set served its purpose

    # Kafka redelivers the same message (offset not committed before a crash) ...
    await put_chunks(runtime, event)
    await handler(event, delivery(event_id, attempt=2))
    await assert_one_chunk_set(runtime, event)

    # ... and a second DocumentParsed for the very same attempt (another event id) arrives
    await handler(event, delivery(uuid.uuid4()))
    await assert_one_chunk_set(runtime, event)


class GatedClients(EmbeddingClients):
    """The real clients, but each embedding waits until every racing delivery has embedded."""

    def __init__(self, settings: Settings, barrier: asyncio.Barrier) -> None:
        super().__init__(settings)
        self.barrier = barrier

    async def for_collection(self, kb: Any, session: Any) -> EmbeddingClient:
        return GatedClient(await super().for_collection(kb, session), self.barrier)


class GatedClient:
    def __init__(self, inner: EmbeddingClient, barrier: asyncio.Barrier) -> None:
        self.inner = inner
        self.barrier = barrier
        self.dimensions = inner.dimensions

    async def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        vectors = await self.inner.embed(texts)
        await asyncio.wait_for(self.barrier.wait(), 60)
        return vectors

    def count_tokens(self, texts: list[str]) -> int:
        return self.inner.count_tokens(texts)


@pytest.mark.parametrize("same_event_id", [True, False], ids=["same-event", "same-attempt"])
async def test_two_deliveries_racing_after_both_embedded_write_one_set(
    runtime: Runtime, same_event_id: bool
) -> None:
    gated = GatedClients(runtime.settings, asyncio.Barrier(2))
    try:
        handler = EmbedderHandler(runtime, gated)
        event = await parsed_document(runtime)
        first = uuid.uuid4()
        second = first if same_event_id else uuid.uuid4()
        await asyncio.wait_for(
            asyncio.gather(
                handler(event, delivery(first)), handler(event, delivery(second, attempt=2))
            ),
            120,
        )
    finally:
        await gated.aclose()
    await assert_one_chunk_set(runtime, event)
