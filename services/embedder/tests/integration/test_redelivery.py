"""The embedder's handler is idempotent against redelivery.

The real ``EmbedderHandler`` with the local model on a fresh database of the test
Postgres and local storage. A redelivery after the commit (same event id), a second
``DocumentParsed`` for the same attempt (another event id), and two deliveries racing
each other with both embeddings done before either writes, all leave exactly one chunk
set, one ``DocumentIndexed`` and the tracking row ``done``.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from docproc_common.embedding.client import EmbeddingClient, EmbeddingClients
from docproc_common.embedding.local_model import InputKind
from docproc_common.runtime import Runtime
from docproc_common.settings import Settings
from docproc_embedder.handler import EmbedderHandler

from .conftest import assert_one_chunk_set, delivery, parsed_document, put_chunks

pytestmark = pytest.mark.integration


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

    async def embed(self, texts: list[str], kind: InputKind = "passage") -> npt.NDArray[np.float32]:
        vectors = await self.inner.embed(texts, kind)
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
