"""The embedder's write: the table's width is the collection's, every
chunk carries the document's stamps, and a provider's 404 is stored as "model not served".

The real ``EmbedderHandler`` on a fresh database of the test Postgres and a local file store,
its HTTP client calling the scripted OpenAI-compatible stand-in on 127.0.0.1.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import date

import numpy as np
import pytest
from docproc_common.bus.delivery import Delivery
from docproc_common.db.models import DocumentStatus, KnowledgeBase, RagDocument
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.events import DocumentParsed
from docproc_common.runtime import Runtime
from docproc_common.vault import create_secret
from docproc_embedder.handler import EmbedderHandler
from docproc_testing.embedding_standin import StandIn, running_standin, standin_vector
from docproc_testing.rows import knowledge_base, tracking_row
from sqlalchemy import text

pytestmark = pytest.mark.integration

SMALL = "text-embedding-3-small"  # 1536 wide: not the built-in model's 384
KEY = "sk-stamps"


@dataclass(frozen=True)
class Parsed:
    kb: KnowledgeBase
    doc: RagDocument
    event: DocumentParsed


async def parsed(runtime: Runtime, standin: StandIn, chunks: list[str]) -> Parsed:
    """A collection on openai (its key in the vault, its endpoint the stand-in) and one of its
    documents as the parser leaves it: row ``processing``, chunk set in storage, event out."""
    name = f"stamp_{uuid.uuid4().hex[:8]}"
    async with runtime.sessionmaker() as s, s.begin():
        secret = await create_secret(
            s,
            owner_id="alice",
            organization_id="acme",
            name="k",
            kind="api_key",
            value={"api_key": KEY},
            visibility="private",
            master_key=runtime.settings.vault.key(),
            provider="openai",
        )
        kb = knowledge_base(
            name,
            embedding_provider="openai",
            embedding_model=SMALL,
            embedding_dim=1536,
            embedding_secret_id=secret.id,
            embedding_base_url=standin.url,
        )
        s.add(kb)
        await s.flush()
        doc = tracking_row(
            name,
            kb.id,
            "q1-report.md",
            uploaded_by="alice",
            source="s3",
            source_path="s3://reports/finance/q1-report.md",
            content_hash="ab" * 32,
            organizational_unit="finance",
            document_date=date(2024, 3, 31),
        )
        s.add(doc)
        await s.flush()
    chunks_path = f"rag/{name}/chunks/{doc.id}.json"
    await runtime.storage.put(chunks_path, json.dumps(chunks).encode(), "application/json")
    assert doc.attempt_id is not None
    event = DocumentParsed(
        document_id=doc.id,
        attempt_id=doc.attempt_id,
        collection_name=name,
        knowledge_base_id=kb.id,
        chunks_path=chunks_path,
        parsed_path=f"rag/{name}/parsed/{doc.id}.txt",
        chunk_count=len(chunks),
    )
    return Parsed(kb, doc, event)


def delivery() -> Delivery:
    return Delivery("embedder", DocumentParsed.TOPIC, uuid.uuid4(), 1)


async def test_width_from_the_collection_and_every_chunk_stamped(
    runtime: Runtime, clients: EmbeddingClients
) -> None:
    chunks = ["Revenue grew in the first quarter.", "Costs were flat.", "Outlook: stable."]
    with running_standin(dims=1536) as standin:
        p = await parsed(runtime, standin, chunks)
        await EmbedderHandler(runtime, clients)(p.event, delivery())
    embedded = [r for r in standin.requests if r.path == "/v1/embeddings"]
    assert {(r.bearer, r.body["model"]) for r in embedded} == {(KEY, SMALL)}
    table = f"rag_{p.kb.collection_name}"
    async with runtime.sessionmaker() as s:
        doc = await s.get(RagDocument, p.doc.id)
        width = (
            await s.execute(
                text(
                    "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                    "WHERE attrelid = to_regclass(:t) AND attname = 'embedding'"
                ),
                {"t": table},
            )
        ).scalar_one()
        rows = (
            await s.execute(
                text(
                    "SELECT chunk_no, content, embedding, organization_id, knowledge_base_id, "
                    "tracking_id, source, document_type, organizational_unit, document_date, "
                    f"source_path, filename, content_hash, writer_kind FROM {table} "
                    "ORDER BY chunk_no"
                )
            )
        ).all()
    assert doc is not None
    assert (doc.status, doc.error_message, doc.chunk_count) == (DocumentStatus.DONE, None, 3)
    assert width == "vector(1536)"
    assert [r.content for r in rows] == chunks
    for r, chunk in zip(rows, chunks, strict=True):
        assert np.allclose(r.embedding.to_numpy(), standin_vector(chunk, 1536), atol=1e-6)
        assert r.organization_id == "acme"  # the tenant
        assert r.knowledge_base_id == p.kb.id
        assert r.tracking_id == p.doc.id
        assert r.source == "s3"
        assert r.document_type == "md"
        assert r.organizational_unit == "finance"
        assert r.document_date == date(2024, 3, 31)
        assert r.source_path == "s3://reports/finance/q1-report.md"
        assert r.filename == "q1-report.md"
        assert r.content_hash == "ab" * 32
        assert r.writer_kind == "document"


async def test_a_provider_404_is_stored_as_model_not_served(
    runtime: Runtime, clients: EmbeddingClients
) -> None:
    with running_standin(dims=1536, status=404) as standin:
        p = await parsed(runtime, standin, ["Nothing here will be embedded."])
        await EmbedderHandler(runtime, clients)(p.event, delivery())
    async with runtime.sessionmaker() as s:
        doc = await s.get(RagDocument, p.doc.id)
        table = (
            await s.execute(text("SELECT to_regclass(:t)"), {"t": f"rag_{p.kb.collection_name}"})
        ).scalar_one()
    assert doc is not None
    assert (doc.status, doc.chunk_count) == (DocumentStatus.ERROR, 0)
    assert doc.error_message == (
        f"The embedding endpoint of collection '{p.kb.collection_name}' (openai) does not "
        f"serve the model '{SMALL}' (HTTP 404) - move the collection to a provider or "
        "endpoint that serves it"
    )
    assert table is None
