"""F11: the embedder's group rebalances during a long embed; no process stops, the work of
the revoked partitions is redone by their next owner, every document gets one chunk set.

Two Kafka stage runners of one group (two embedders) with the real ``EmbedderHandler``
and the local model, on the real broker and a fresh database of the test Postgres. The
topic is the test's own (three partitions, one document on each), so no other run on the
shared broker takes part. One embedder's model calls are held (``SlowClients``) so that
its documents are in flight when the group changes: in the first test a second embedder
joins, in the second the slow one is silent past ``max_poll_interval_ms`` and is dropped
from the group by its own consumer.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from aiokafka import AIOKafkaProducer
from docproc_common.bus.delivery import Delivery, Subscription
from docproc_common.bus.kafka import KafkaStageRunner
from docproc_common.bus.outbox import EVENT_ID_HEADER
from docproc_common.embedding.client import EmbeddingClient, EmbeddingClients
from docproc_common.embedding.local_model import InputKind
from docproc_common.events import EVENT_TYPES, DocumentParsed
from docproc_common.observability import BusMetrics
from docproc_common.runtime import Runtime
from docproc_common.settings import KafkaSettings
from docproc_embedder.handler import EmbedderHandler
from docproc_testing.infra import load_infra_env
from sqlalchemy import text

from .conftest import assert_one_chunk_set, parsed_document

pytestmark = pytest.mark.integration
PARTITIONS = 3
Log = list[tuple[str, uuid.UUID, str]]  # (embedder, document, started | done | cancelled)


class SlowClients(EmbeddingClients):
    """The real clients; each embedding first sleeps the ``delay_s`` set when it starts."""

    delay_s = 0.0
    started = 0

    async def for_collection(self, kb: Any, session: Any) -> EmbeddingClient:
        return SlowClient(await super().for_collection(kb, session), self)


class SlowClient:
    def __init__(self, inner: EmbeddingClient, owner: SlowClients) -> None:
        self.inner = inner
        self.owner = owner
        self.dimensions = inner.dimensions

    async def embed(self, texts: list[str], kind: InputKind = "passage") -> npt.NDArray[np.float32]:
        self.owner.started += 1
        await asyncio.sleep(self.owner.delay_s)
        return await self.inner.embed(texts, kind)

    def count_tokens(self, texts: list[str]) -> int:
        return self.inner.count_tokens(texts)


@pytest.fixture
async def slow_clients(runtime: Runtime) -> Any:
    clients = SlowClients(runtime.settings)
    yield clients
    await clients.aclose()


@pytest.fixture
def topic(monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"document.parsed.f11_{uuid.uuid4().hex[:8]}"
    monkeypatch.setitem(EVENT_TYPES, name, DocumentParsed)
    return name


def kafka_settings(**kw: Any) -> KafkaSettings:
    infra = load_infra_env(("kafka",))
    base: dict[str, Any] = {
        "bootstrap_servers": infra["KAFKA__BOOTSTRAP_SERVERS"],
        "poll_timeout_ms": 100,
        "topic_partitions": PARTITIONS,
        "revoke_grace_s": 1.0,
        "retry_delay_s": 0.5,
    }
    return KafkaSettings(**{**base, **kw})


def recorded(name: str, handler: EmbedderHandler, log: Log) -> Callable[..., Awaitable[None]]:
    async def handle(event: DocumentParsed, delivery: Delivery) -> None:
        log.append((name, event.document_id, "started"))
        try:
            await handler(event, delivery)
        except asyncio.CancelledError:
            log.append((name, event.document_id, "cancelled"))
            raise
        log.append((name, event.document_id, "done"))

    return handle


class Embedder:
    """One embedder process's consumer: a Kafka stage runner of the group, run as a task."""

    def __init__(
        self,
        name: str,
        group: str,
        topic: str,
        handler: EmbedderHandler,
        settings: KafkaSettings,
        log: Log,
    ) -> None:
        subscription = Subscription(topic, recorded(name, handler, log), give_up=handler.give_up)
        self.runner = KafkaStageRunner(
            group, [subscription], settings, BusMetrics(group), concurrency=PARTITIONS
        )
        self.topic = topic
        self.stop = asyncio.Event()
        self.task = asyncio.create_task(self.runner.run(self.stop))

    async def assigned(self) -> int:
        """How many partitions of the topic (not of its retry topic) it holds, once it has some."""
        for _ in range(600):
            if self.task.done():
                self.task.result()  # the runner stopped: raise its error
            consumer = self.runner.consumer
            held = (
                [tp for tp in consumer.assignment() if tp.topic == self.topic] if consumer else []
            )
            if held:
                return len(held)
            await asyncio.sleep(0.1)
        raise AssertionError("no partition assigned within 60 s")

    async def close(self) -> None:
        self.stop.set()
        await asyncio.wait_for(self.task, 60)


async def publish_one_per_partition(topic: str, events: list[DocumentParsed]) -> None:
    infra = load_infra_env(("kafka",))
    producer = AIOKafkaProducer(bootstrap_servers=infra["KAFKA__BOOTSTRAP_SERVERS"])
    await producer.start()
    try:
        for partition, event in enumerate(events):
            await producer.send_and_wait(
                topic,
                json.dumps(event.model_dump(mode="json")).encode(),
                key=event.key().encode(),
                partition=partition,
                headers=[(EVENT_ID_HEADER, str(uuid.uuid4()).encode())],
            )
    finally:
        await producer.stop()


async def until(
    condition: Callable[[], Awaitable[bool]], what: str, embedders: list[Embedder]
) -> None:
    for _ in range(1800):
        for embedder in embedders:
            if embedder.task.done():
                embedder.task.result()
                raise AssertionError("an embedder's consumer stopped")
        if await condition():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"not {what} within 180 s")


def all_indexed(runtime: Runtime, events: list[DocumentParsed]) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        async with runtime.sessionmaker() as s:
            done = await s.scalar(
                text("SELECT count(*) FROM rag_documents WHERE id = ANY(:ids) AND status = 'done'"),
                {"ids": [e.document_id for e in events]},
            )
        return done == len(events)

    return check


async def test_a_second_embedder_joining_mid_embed_takes_over_without_a_crash(
    runtime: Runtime, clients: EmbeddingClients, slow_clients: SlowClients, topic: str
) -> None:
    """The first embedder's three documents are mid-embed when a second one joins: their
    partitions are revoked, the embeds abandoned after the grace, and each is redone by
    its partition's owner after the rebalance, the new one among them."""
    group = f"embedder_{uuid.uuid4().hex[:8]}"
    settings = kafka_settings()
    log: Log = []
    events = [await parsed_document(runtime) for _ in range(PARTITIONS)]
    slow_clients.delay_s = 60.0  # longer than the test waits: only a cancel ends it
    # published first, so that its first poll brings all three (a runner polls again once
    # the records of a poll are done)
    await publish_one_per_partition(topic, events)
    first = Embedder("first", group, topic, EmbedderHandler(runtime, slow_clients), settings, log)
    embedders = [first]
    try:
        assert await first.assigned() == PARTITIONS

        async def all_in_flight() -> bool:
            return slow_clients.started == PARTITIONS

        await until(all_in_flight, "embedding all three", embedders)
        slow_clients.delay_s = 0.0  # the embeds after the rebalance are quick
        second = Embedder("second", group, topic, EmbedderHandler(runtime, clients), settings, log)
        embedders.append(second)
        await until(all_indexed(runtime, events), "indexed", embedders)
        assert await second.assigned() >= 1
    finally:
        for embedder in embedders:
            await embedder.close()
    ours = {e.document_id for e in events}
    assert sorted(d for name, d, how in log if name == "first" and how == "cancelled") == sorted(
        ours
    )
    assert any(name == "second" and how == "done" and d in ours for name, d, how in log)
    for event in events:
        await assert_one_chunk_set(runtime, event)


async def test_an_embedder_slower_than_max_poll_interval_leaves_the_group_and_stays_up(
    runtime: Runtime, clients: EmbeddingClients, slow_clients: SlowClients, topic: str
) -> None:
    """Every embed of the slow embedder outlasts its ``max_poll_interval_ms``: its consumer
    leaves the group, the quick one takes the partitions and does the documents, and the
    slow one abandons its embeds, rejoins, and is still running at the end."""
    group = f"embedder_{uuid.uuid4().hex[:8]}"
    log: Log = []
    events = [await parsed_document(runtime) for _ in range(PARTITIONS)]
    ours = {e.document_id for e in events}
    slow_clients.delay_s = 15.0  # past max_poll_interval_ms and the grace after it
    # Its grace outlasts the quick one's heartbeat interval (3 s): the quick one has
    # rejoined alone and taken the partitions before the slow one is back in the group
    slow_settings = kafka_settings(max_poll_interval_ms=4000, revoke_grace_s=5.0)
    slow = Embedder(
        "slow", group, topic, EmbedderHandler(runtime, slow_clients), slow_settings, log
    )
    embedders = [slow]
    try:
        assert await slow.assigned() == PARTITIONS
        # the quick one finishes what it has in flight when the slow one rejoins
        quick_settings = kafka_settings(revoke_grace_s=20.0)
        quick = Embedder(
            "quick", group, topic, EmbedderHandler(runtime, clients), quick_settings, log
        )
        embedders.append(quick)
        await quick.assigned()
        await publish_one_per_partition(topic, events)
        await until(all_indexed(runtime, events), "indexed", embedders)

        async def settled() -> bool:
            quick_done = {d for name, d, how in log if name == "quick" and how == "done"}
            slow = [how for name, _, how in log if name == "slow"]
            return quick_done >= ours and slow.count("started") * 2 == len(slow)

        await until(settled, "settled", embedders)
    finally:
        for embedder in embedders:
            await embedder.close()  # raises what stopped its consumer, if anything did
    assert slow_clients.started >= 1  # the slow one had documents in flight
    # and abandoned each of its embeds (none could finish), before or after they began
    assert [how for name, _, how in log if name == "slow"].count(
        "cancelled"
    ) >= slow_clients.started
    for event in events:
        await assert_one_chunk_set(runtime, event)
