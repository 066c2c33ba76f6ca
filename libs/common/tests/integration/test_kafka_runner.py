"""The Kafka stage runner against the real broker: commit after handling, retry topic, DLQ, guard."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.structs import RecordMetadata
from docproc_common.bus.dead_letter import FRAMES, MAX_MESSAGE
from docproc_common.bus.delivery import Delivery, Handler, Subscription, dlq_topic
from docproc_common.bus.kafka import KafkaStageRunner, make_producer
from docproc_common.bus.outbox import EVENT_ID_HEADER
from docproc_common.bus.policy import DlqLimitExceededError
from docproc_common.errors import PermanentError
from docproc_common.events import CollectionDeleted
from docproc_common.observability import BusMetrics
from docproc_common.settings import KafkaSettings
from docproc_testing.private_infra import PrivateKafka, private_kafka

pytestmark = pytest.mark.integration
TOPIC = CollectionDeleted.TOPIC


def settings(infra: dict[str, str], **kw: Any) -> KafkaSettings:
    base: dict[str, Any] = {
        "bootstrap_servers": infra["KAFKA__BOOTSTRAP_SERVERS"],
        "max_in_place_retries": 0,
        "retry_backoff_s": 0,
        "retry_delay_s": 0.2,
        "max_attempts": 2,
        "poll_timeout_ms": 100,
    }
    return KafkaSettings(**{**base, **kw})


def stage(
    service: str, handler: Handler, infra: dict[str, str], concurrency: int = 1, **kw: Any
) -> KafkaStageRunner:
    """``service`` consuming TOPIC with ``handler`` on the test broker (``kw``: settings)."""
    return KafkaStageRunner(
        service,
        [Subscription(TOPIC, handler)],
        settings(infra, **kw),
        BusMetrics(service),
        concurrency=concurrency,
    )


async def publish(infra: dict[str, str], event: CollectionDeleted) -> uuid.UUID:
    event_id = uuid.uuid4()
    producer = AIOKafkaProducer(bootstrap_servers=infra["KAFKA__BOOTSTRAP_SERVERS"])
    await producer.start()
    try:
        await producer.send_and_wait(
            TOPIC,
            json.dumps(event.model_dump(mode="json")).encode(),
            key=event.key().encode(),
            headers=[(EVENT_ID_HEADER, str(event_id).encode())],
        )
    finally:
        await producer.stop()
    return event_id


async def publish_together(infra: dict[str, str], events: list[CollectionDeleted]) -> list[Any]:
    """``events`` in one produce request (one key: one partition, consecutive offsets)."""
    producer = AIOKafkaProducer(bootstrap_servers=infra["KAFKA__BOOTSTRAP_SERVERS"])
    await producer.start()
    try:
        acks = [
            await producer.send(
                TOPIC,
                json.dumps(e.model_dump(mode="json")).encode(),
                key=e.key().encode(),
                headers=[(EVENT_ID_HEADER, str(uuid.uuid4()).encode())],
            )
            for e in events
        ]
        return list(await asyncio.gather(*acks))
    finally:
        await producer.stop()


async def run_until(runner: KafkaStageRunner, done: asyncio.Event, timeout: float = 60) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(runner.run(stop))
    try:
        await asyncio.wait_for(done.wait(), timeout)
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


def event() -> CollectionDeleted:
    return CollectionDeleted(teardown_id=uuid.uuid4(), collection_name=f"c_{uuid.uuid4().hex[:8]}")


async def test_a_transient_failure_goes_through_the_retry_topic(infra: dict[str, str]) -> None:
    service = f"svc_{uuid.uuid4().hex[:8]}"
    target = event()
    attempts: list[int] = []
    done = asyncio.Event()

    async def handler(e: CollectionDeleted, d: Delivery) -> None:
        if e.teardown_id != target.teardown_id:
            return
        attempts.append(d.attempt)
        if d.attempt == 1:
            raise TimeoutError("transient")
        done.set()

    runner = stage(service, handler, infra)
    await publish(infra, target)
    await run_until(runner, done)
    assert attempts == [1, 2]


LEAKY = (
    'Could not connect to the endpoint URL: "https://AKIA:wJalrSECRET@s3.internal:9000/'
    'acme-bucket/key.pdf?X-Amz-Signature=SIGSECRET" token=tokSECRET '
) + "x" * 5000


def refuse(message: str) -> None:
    raise PermanentError(message)


async def test_a_permanent_failure_is_dead_lettered_with_its_origin(infra: dict[str, str]) -> None:
    """Origin, class, a sanitised message (no userinfo, query string or token; bounded) and
    the innermost frames, for the operator who reads the DLQ."""
    service = f"svc_{uuid.uuid4().hex[:8]}"
    target = event()
    handled = asyncio.Event()

    async def handler(e: CollectionDeleted, _d: Delivery) -> None:
        if e.teardown_id == target.teardown_id:
            handled.set()
            refuse(LEAKY)

    runner = stage(service, handler, infra)
    event_id = await publish(infra, target)
    await run_until(runner, handled)

    consumer = AIOKafkaConsumer(
        dlq_topic(TOPIC, service),
        bootstrap_servers=infra["KAFKA__BOOTSTRAP_SERVERS"],
        auto_offset_reset="earliest",
        group_id=f"reader_{service}",
    )
    await consumer.start()
    try:
        record = await asyncio.wait_for(consumer.getone(), 30)
    finally:
        await consumer.stop()
    headers = {k: v.decode() for k, v in record.headers}
    assert headers["x-original-topic"] == TOPIC
    assert headers["x-error-class"] == "PermanentError"
    message = headers["x-error-message"]
    assert message.startswith("Could not connect to the endpoint URL: ")
    assert "s3.internal:9000/acme-bucket/key.pdf" in message and "SECRET" not in message
    assert len(message) == MAX_MESSAGE
    frames = headers["x-error-frames"].split(" > ")
    line = refuse.__code__.co_firstlineno + 1
    assert frames[-1] == f"integration/test_kafka_runner.py:{line}:refuse"
    assert frames[-2].endswith(":handler") and len(frames) <= FRAMES
    assert headers[EVENT_ID_HEADER] == str(event_id)
    assert json.loads(record.value)["teardown_id"] == str(target.teardown_id)


async def test_offsets_are_committed_only_after_handling(infra: dict[str, str]) -> None:
    """A consumer stopped after handling commits; a new one in the group does not see the event again."""
    service = f"svc_{uuid.uuid4().hex[:8]}"
    target = event()
    seen: list[uuid.UUID] = []
    done = asyncio.Event()

    async def handler(e: CollectionDeleted, _d: Delivery) -> None:
        seen.append(e.teardown_id)
        if e.teardown_id == target.teardown_id:
            done.set()

    await publish(infra, target)
    first = stage(service, handler, infra)
    await run_until(first, done)
    count = seen.count(target.teardown_id)
    again = asyncio.Event()
    second_target = event()

    async def second_handler(e: CollectionDeleted, d: Delivery) -> None:
        await handler(e, d)
        if e.teardown_id == second_target.teardown_id:
            again.set()

    await publish(infra, second_target)
    second = stage(service, second_handler, infra)
    await run_until(second, again)
    assert seen.count(target.teardown_id) == count == 1


async def test_the_dlq_guard_stops_a_consumer_that_dead_letters_everything(
    infra: dict[str, str],
) -> None:
    service = f"svc_{uuid.uuid4().hex[:8]}"

    async def handler(_e: CollectionDeleted, _d: Delivery) -> None:
        raise PermanentError("bad deploy")

    for _ in range(4):
        await publish(infra, event())
    runner = stage(service, handler, infra, dlq_window=4, dlq_max_ratio=0.5)
    with pytest.raises(DlqLimitExceededError):
        await asyncio.wait_for(runner.run(asyncio.Event()), 60)


async def test_a_consumer_creates_its_retry_and_dlq_topics_as_configured(
    infra: dict[str, str],
) -> None:
    """Not with the broker's defaults: replication 1 in production would lose them."""
    from aiokafka.admin import AIOKafkaAdminClient
    from docproc_common.bus.delivery import retry_topic

    service = f"svc_{uuid.uuid4().hex[:8]}"

    async def handler(e: CollectionDeleted, d: Delivery) -> None:
        return None

    runner = stage(service, handler, infra, topic_partitions=2, topic_replication=1)
    wanted = {retry_topic(TOPIC, service), dlq_topic(TOPIC, service)}
    stop = asyncio.Event()
    task = asyncio.create_task(runner.run(stop))
    admin = AIOKafkaAdminClient(bootstrap_servers=infra["KAFKA__BOOTSTRAP_SERVERS"])
    await admin.start()
    try:
        for _ in range(300):
            if wanted <= set(await admin.list_topics()):
                break
            await asyncio.sleep(0.1)
        described = await admin.describe_topics(sorted(wanted))
    finally:
        await admin.close()
        stop.set()
        await asyncio.wait_for(task, 30)
    assert {t["topic"]: len(t["partitions"]) for t in described} == dict.fromkeys(wanted, 2)


async def test_records_overlap_up_to_the_concurrency_and_commit_in_offset_order(
    infra: dict[str, str],
) -> None:
    """With concurrency 2 the later records of a partition run while the first is still
    handled, never more than two at once, and nothing past the first is committed until
    it is done."""
    service = f"svc_{uuid.uuid4().hex[:8]}"
    collection = f"c_{uuid.uuid4().hex[:8]}"
    marker, first, second, third = (
        CollectionDeleted(teardown_id=uuid.uuid4(), collection_name=collection) for _ in range(4)
    )
    ours = [first.teardown_id, second.teardown_id, third.teardown_id]
    ready, later_done, release, all_done = (asyncio.Event() for _ in range(4))
    finished: list[uuid.UUID] = []
    in_flight = 0
    most = 0

    async def handler(e: CollectionDeleted, _d: Delivery) -> None:
        nonlocal in_flight, most
        if e.teardown_id == marker.teardown_id:
            ready.set()
        if e.teardown_id not in ours:
            return
        in_flight += 1
        most = max(most, in_flight)
        try:
            if e.teardown_id == first.teardown_id:
                await release.wait()
            else:
                await asyncio.sleep(0.2)
        finally:
            in_flight -= 1
        finished.append(e.teardown_id)
        if finished[-2:] == ours[1:]:
            later_done.set()
        if len(finished) == 3:
            all_done.set()

    runner = stage(service, handler, infra, max_records=500, concurrency=2)
    stop = asyncio.Event()
    task = asyncio.create_task(runner.run(stop))
    try:
        await publish(infra, marker)
        await asyncio.wait_for(ready.wait(), 60)  # the group has read the topic's history
        acks: list[RecordMetadata] = await publish_together(infra, [first, second, third])
        tp = TopicPartition(TOPIC, acks[0].partition)
        await asyncio.wait_for(later_done.wait(), 30)
        assert runner.consumer is not None
        assert (await runner.consumer.committed(tp) or 0) <= acks[0].offset
        release.set()
        await asyncio.wait_for(all_done.wait(), 30)
        for _ in range(100):
            if await runner.consumer.committed(tp) == acks[-1].offset + 1:
                break
            await asyncio.sleep(0.1)
        assert await runner.consumer.committed(tp) == acks[-1].offset + 1
    finally:
        release.set()
        stop.set()
        await asyncio.wait_for(task, 30)
    assert most == 2
    assert finished == [second.teardown_id, third.teardown_id, first.teardown_id]


async def test_a_namespaced_runner_uses_its_own_topics_and_group(infra: dict[str, str]) -> None:
    """``KAFKA__NAMESPACE``: installations sharing one cluster never see each other's events;
    the runner creates, reads and commits only ``<namespace>.`` names."""
    namespace = f"ns{uuid.uuid4().hex[:8]}"
    service = f"svc_{uuid.uuid4().hex[:8]}"
    target = event()
    done = asyncio.Event()

    async def handler(e: CollectionDeleted, _d: Delivery) -> None:
        if e.teardown_id == target.teardown_id:
            done.set()

    runner = stage(service, handler, infra, namespace=namespace)
    producer = AIOKafkaProducer(bootstrap_servers=infra["KAFKA__BOOTSTRAP_SERVERS"])
    await producer.start()
    try:
        await producer.send_and_wait(
            f"{namespace}.{TOPIC}",
            json.dumps(target.model_dump(mode="json")).encode(),
            key=target.key().encode(),
            headers=[(EVENT_ID_HEADER, str(uuid.uuid4()).encode())],
        )
    finally:
        await producer.stop()
    await run_until(runner, done)

    admin = AIOKafkaAdminClient(bootstrap_servers=infra["KAFKA__BOOTSTRAP_SERVERS"])
    await admin.start()
    try:
        topics = set(await admin.list_topics())
        committed = await admin.list_consumer_group_offsets(f"{namespace}.{service}")
        plain = await admin.list_consumer_group_offsets(service)
    finally:
        await admin.close()
    assert {
        f"{namespace}.{TOPIC}",
        f"{namespace}.{TOPIC}.retry.{service}",
        f"{namespace}.{TOPIC}.dlq.{service}",
    } <= topics
    assert f"{TOPIC}.retry.{service}" not in topics
    assert {tp.topic for tp in committed} == {f"{namespace}.{TOPIC}"}
    assert not plain


@pytest.fixture
def kafka(tmp_path: Path) -> Iterator[PrivateKafka]:
    """A broker of this test's own (``docproc_testing.private_infra``), to freeze."""
    with private_kafka(tmp_path) as broker:
        yield broker


async def test_a_retry_due_while_the_broker_is_down_waits_for_it(kafka: PrivateKafka) -> None:
    """A handler failing while the broker is unreachable (frozen, SIGSTOP): the runner's
    producer learns a topic's partitions at its first send there (aiokafka), so the hand-off
    to the retry topic fails after ``KAFKA__PRODUCER_TIMEOUT_MS`` (short here) with
    ``UnknownTopicOrPartitionError``, which stopped the runner and with it the process. Now
    the runner keeps trying the hand-off, and once the broker is back the event is redone
    from the retry topic: attempts 1 and 2, each once, and everything read is committed."""
    service = f"svc_{uuid.uuid4().hex[:8]}"
    infra = {"KAFKA__BOOTSTRAP_SERVERS": kafka.bootstrap_servers}
    attempts: list[int] = []
    down, done = asyncio.Event(), asyncio.Event()

    async def handler(_e: CollectionDeleted, d: Delivery) -> None:
        attempts.append(d.attempt)
        if d.attempt > 1:
            done.set()
            return
        if not down.is_set():
            kafka.pause()
            down.set()
        raise ConnectionError("the database went away")

    runner = stage(service, handler, infra, producer_timeout_ms=1000)
    # a broker that has served a producer, as a running one has (on a fresh one the runner's
    # producer happens to fetch every topic's partitions as it starts)
    warm = make_producer(settings(infra))
    await warm.start()
    await warm.stop()
    await publish(infra, event())
    stop = asyncio.Event()
    task = asyncio.create_task(runner.run(stop))
    try:
        await asyncio.wait_for(down.wait(), 60)
        await asyncio.sleep(3)  # the hand-off has failed, more than once
        kafka.resume()
        redone = asyncio.create_task(done.wait())
        await asyncio.wait({task, redone}, timeout=120, return_when=asyncio.FIRST_COMPLETED)
        assert not task.done(), f"the runner stopped: {task!r}"
        assert redone.done(), "attempt 2 never came"
        assert runner.consumer is not None
        ends = await runner.consumer.end_offsets(list(runner.consumer.assignment()))
        for _ in range(300):  # everything read is committed: nothing more is handled
            committed = {tp: await runner.consumer.committed(tp) or 0 for tp in ends}
            if committed == ends:
                break
            await asyncio.sleep(0.1)
        assert committed == ends
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)
    assert attempts == [1, 2]
