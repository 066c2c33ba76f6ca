from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from docproc_common.bus.delivery import Delivery
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.events import DocumentIndexed, DocumentParsed
from docproc_common.runtime import Runtime
from docproc_embedder.handler import vector_document_id
from docproc_testing.rows import knowledge_base, tracking_row
from docproc_testing.runtime import fresh_runtime
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker


@pytest.fixture(scope="module")
async def runtime(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Runtime]:
    async with fresh_runtime(tmp_path_factory.mktemp("media")) as rt:
        yield rt


@pytest.fixture(scope="module")
async def clients(runtime: Runtime) -> AsyncIterator[EmbeddingClients]:
    c = EmbeddingClients(runtime.settings)
    yield c
    await c.aclose()


MINILM = "sentence-transformers/all-MiniLM-L6-v2"
CHUNKS = [f"Paragraph {i}: the capybara is the largest rodent, number {i}." for i in range(7)]


async def parsed_document(runtime: Runtime) -> DocumentParsed:
    """A knowledge base, its tracking row waiting for one attempt, and that attempt's chunk set."""
    name = f"redeliv_{uuid.uuid4().hex[:8]}"
    async with runtime.sessionmaker() as s, s.begin():
        kb = knowledge_base(
            name, embedding_provider="local", embedding_model=MINILM, embedding_dim=384
        )
        s.add(kb)
        await s.flush()
        event = await add_processing(s, name, kb.id, len(CHUNKS))
    await put_chunks(runtime, event)
    return event


async def add_processing(
    s: AsyncSession, name: str, kb_id: uuid.UUID, chunk_count: int
) -> DocumentParsed:
    """A tracking row of knowledge base ``kb_id`` (collection ``name``) waiting for a new
    attempt, added in ``s``, and that attempt's event of ``chunk_count`` chunks."""
    attempt = uuid.uuid4()
    doc = tracking_row(name, kb_id, "capybara.txt", attempt_id=attempt)
    s.add(doc)
    await s.flush()
    return DocumentParsed(
        document_id=doc.id,
        attempt_id=attempt,
        collection_name=name,
        knowledge_base_id=kb_id,
        chunks_path=f"rag/{name}/chunks/{doc.id}/{attempt}.json",
        parsed_path=f"rag/{name}/parsed/{doc.id}.txt",
        chunk_count=chunk_count,
    )


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
