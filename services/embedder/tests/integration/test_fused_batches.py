"""Documents embedded at once share the local model's calls, and each still gets its own set.

The real ``EmbedderHandler`` behind the embedded bus's runner with ``concurrency=4``, the
local model, a fresh database of the test Postgres and local storage: four documents in
one claimed batch are embedded in fewer model calls than documents, every document is
written in its own transaction (its set, its row ``done``, its ``DocumentIndexed``), and
every stored vector equals the one its document gets embedded alone, window by window
without padding.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest
from docproc_common.bus.delivery import Subscription
from docproc_common.bus.embedded import EmbeddedStageRunner
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.embedding.local_model import InputKind, LocalMiniLM
from docproc_common.events import DocumentIndexed, DocumentParsed
from docproc_common.observability import BusMetrics
from docproc_common.runtime import Runtime
from docproc_embedder.handler import EmbedderHandler
from docproc_testing.embedded import delivery
from docproc_testing.rows import knowledge_base
from sqlalchemy import text

from .conftest import add_processing

pytestmark = pytest.mark.integration

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
WORDS = "capybara river grass herd water rodent swim wetland savanna burrow".split()


def chunks_of(document: int, count: int) -> list[str]:
    """Chunks of a knowledge-base shape: one window and a tail, of lengths that differ."""
    return [
        " ".join(WORDS[(document + c + i) % len(WORDS)] for i in range(250 + 23 * c))
        for c in range(count)
    ] + [f"Document {document} ends here."]


async def parsed(runtime: Runtime, name: str, kb_id: uuid.UUID, chunks: list[str]) -> uuid.UUID:
    """A tracking row waiting for one attempt, its chunk set, and its delivery row."""
    async with runtime.sessionmaker() as s, s.begin():
        event = await add_processing(s, name, kb_id, len(chunks))
        s.add(delivery("embedder", event))
    await runtime.storage.put(event.chunks_path, json.dumps(chunks).encode(), "application/json")
    return event.document_id


async def test_documents_in_one_batch_share_model_calls_and_keep_their_own_vectors(
    runtime: Runtime, clients: EmbeddingClients, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"fused_{uuid.uuid4().hex[:8]}"
    async with runtime.sessionmaker() as s, s.begin():
        kb = knowledge_base(
            name, embedding_provider="local", embedding_model=MINILM, embedding_dim=384
        )
        s.add(kb)
    documents = {
        await parsed(runtime, name, kb.id, chunks): chunks
        for chunks in (chunks_of(d, n) for d, n in enumerate((3, 6, 1, 4)))
    }

    model = clients.local()._model
    calls: list[int] = []
    embed = model.embed

    def counting(
        texts: Sequence[str], *, truncate: bool = False, kind: InputKind = "passage"
    ) -> npt.NDArray[np.float32]:
        assert kind == "passage"  # chunks are passages
        calls.append(len(texts))
        return embed(texts, truncate=truncate, kind=kind)

    monkeypatch.setattr(model, "embed", counting)
    handler = EmbedderHandler(runtime, clients)
    runner = EmbeddedStageRunner(
        "embedder",
        [Subscription(DocumentParsed.TOPIC, handler, give_up=handler.give_up)],
        runtime.sessionmaker,
        BusMetrics("embedder_fused_test"),
        concurrency=4,
    )
    assert await runner.process_batch()
    assert 0 < len(calls) < len(documents), calls  # the later documents shared one call
    assert sum(calls) == sum(len(c) for c in documents.values())

    unbatched = LocalMiniLM(threads=2, batch_tokens=1)  # one model call per window, no padding
    async with runtime.sessionmaker() as s:
        for document_id, chunks in documents.items():
            status, chunk_count, vdid = (
                await s.execute(
                    text(
                        "SELECT status, chunk_count, vector_document_id FROM rag_documents "
                        "WHERE id = :d"
                    ),
                    {"d": document_id},
                )
            ).one()
            assert (status, chunk_count) == ("done", len(chunks))
            rows = (
                await s.execute(
                    text(
                        f"SELECT embedding::text FROM rag_{name} WHERE document_id = :v "
                        "ORDER BY chunk_no"
                    ),
                    {"v": vdid},
                )
            ).scalars()
            stored = np.array([json.loads(r) for r in rows], dtype=np.float32)
            alone = unbatched.embed(chunks)
            assert stored.shape == alone.shape
            assert np.max(np.abs(stored - alone)) <= 1e-6
            (indexed,) = (
                await s.execute(
                    text(
                        "SELECT count(*) FROM outbox WHERE topic = :t "
                        "AND payload->>'document_id' = :d"
                    ),
                    {"t": DocumentIndexed.TOPIC, "d": str(document_id)},
                )
            ).one()
            assert indexed == 1
        (sets,) = (
            await s.execute(text(f"SELECT count(DISTINCT document_id) FROM rag_{name}"))
        ).one()
    assert sets == len(documents)
