"""Bulk mode through the real ``EmbedderHandler``: a collection whose backlog reaches
``bulk_enter_backlog`` enters it, the document's chunk set goes to the side table in the
document's own transaction, a redelivery adds nothing, and the sweep folds the collection
once its backlog has drained, the chunk set intact."""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid

import pytest
from docproc_common import bulkload
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.runtime import Runtime
from docproc_embedder import app
from docproc_embedder.bulk import BulkMode
from docproc_embedder.handler import EmbedderHandler
from prometheus_client import REGISTRY
from sqlalchemy import text

from .conftest import (
    CHUNKS,
    add_processing,
    assert_one_chunk_set,
    delivery,
    one,
    parsed_document,
    put_chunks,
)

pytestmark = pytest.mark.integration


def with_embedder(runtime: Runtime, **embedder: object) -> Runtime:
    e = runtime.settings.embedder.model_copy(update=embedder)
    return dataclasses.replace(
        runtime, settings=runtime.settings.model_copy(update={"embedder": e})
    )


def bulk_at(runtime: Runtime, backlog: int) -> BulkMode:
    return BulkMode(with_embedder(runtime, bulk_enter_backlog=backlog))


async def test_a_backlog_puts_the_collection_in_bulk_mode_until_the_sweep_folds_it(
    runtime: Runtime, clients: EmbeddingClients
) -> None:
    handler = EmbedderHandler(runtime, clients, bulk_at(runtime, backlog=1))
    event = await parsed_document(runtime)
    name = event.collection_name
    event_id = uuid.uuid4()

    await handler(event, delivery(event_id))
    await assert_one_chunk_set(runtime, event)
    (side,) = await one(runtime.sessionmaker, f"SELECT count(*) FROM ONLY docproc_bulk.rag_{name}")
    assert side == len(CHUNKS)

    await put_chunks(runtime, event)  # a redelivery after the commit
    await handler(event, delivery(event_id, attempt=2))
    await assert_one_chunk_set(runtime, event)

    await handler.bulk.sweep()  # nothing pending any more: the fold
    await assert_one_chunk_set(runtime, event)
    async with runtime.sessionmaker() as s:
        assert not await bulkload.in_bulk(s, name)


async def test_no_backlog_no_bulk_mode(runtime: Runtime, clients: EmbeddingClients) -> None:
    handler = EmbedderHandler(runtime, clients, bulk_at(runtime, backlog=2))
    event = await parsed_document(runtime)
    await handler(event, delivery(uuid.uuid4()))
    await assert_one_chunk_set(runtime, event)
    async with runtime.sessionmaker() as s:
        assert not await bulkload.in_bulk(s, event.collection_name)


async def test_the_sweep_leaves_an_explicit_entry_waiting_for_its_load(
    runtime: Runtime, clients: EmbeddingClients
) -> None:
    """``docproc rag-bulk`` before a reindex: nothing is pending yet, nothing written."""
    handler = EmbedderHandler(runtime, clients)
    event = await parsed_document(runtime)
    name = event.collection_name
    async with runtime.sessionmaker() as s, s.begin():
        await s.execute(
            text("UPDATE rag_documents SET status = 'done' WHERE id = :d"), {"d": event.document_id}
        )
        assert await bulkload.enter(s, name, 384)
    await handler.bulk.sweep()
    async with runtime.sessionmaker() as s:
        assert await bulkload.in_bulk(s, name)


async def test_the_pending_rows_gauge_is_the_total_of_the_collections_in_bulk_mode(
    runtime: Runtime, clients: EmbeddingClients
) -> None:
    """Exported with no label: a collection's name is a tenant's (issue 25, item 11)."""
    handler = EmbedderHandler(runtime, clients, bulk_at(runtime, backlog=1))
    event = await parsed_document(runtime)
    await handler(event, delivery(uuid.uuid4()))
    async with runtime.sessionmaker() as s, s.begin():
        # a second document still to come: the sweep leaves the collection loading
        await add_processing(s, event.collection_name, event.knowledge_base_id, len(CHUNKS))
    await handler.bulk.sweep()
    async with runtime.sessionmaker() as s:
        assert await bulkload.in_bulk(s, event.collection_name)
        rows = [await bulkload.side_rows(s, name) for name in await bulkload.side_tables(s)]
    assert sum(rows) >= len(CHUNKS)
    assert REGISTRY.get_sample_value("docproc_embedder_bulk_rows_pending") == sum(rows)


async def test_the_embedder_folds_a_load_once_its_writes_settle_not_a_period_later(
    runtime: Runtime,
) -> None:
    """The service's own handler and sweep task, with an hour between periodic sweeps: the
    load's last document is followed by its fold within seconds (before, by the next
    period: up to ``bulk_check_interval_s`` added to every bulk load)."""
    spec = app.build(with_embedder(runtime, bulk_enter_backlog=1, bulk_check_interval_s=3600.0))
    (subscription,) = spec.subscriptions
    sweep_task = spec.tasks[-1]  # after warm_model
    stop = asyncio.Event()
    sweeping = asyncio.create_task(sweep_task(stop))
    try:
        event = await parsed_document(runtime)
        await subscription.handler(event, delivery(uuid.uuid4()))
        async with runtime.sessionmaker() as s:
            assert await bulkload.in_bulk(s, event.collection_name)
        deadline = time.monotonic() + 120  # generous on a loaded host; the period is 3600 s
        while time.monotonic() < deadline:
            async with runtime.sessionmaker() as s:
                if not await bulkload.in_bulk(s, event.collection_name):
                    break
            await asyncio.sleep(0.2)
        await assert_one_chunk_set(runtime, event)
        async with runtime.sessionmaker() as s:
            assert not await bulkload.in_bulk(s, event.collection_name)
    finally:
        stop.set()
        await sweeping
        for close in spec.on_shutdown:
            await close()
