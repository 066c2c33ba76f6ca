"""``docproc dlq list`` / ``docproc dlq replay``: the dead letters on Kafka, and re-driving one.

A dead letter is a message a stage gave up on, on ``<topic>.dlq.<service>`` with its
origin (``x-original-topic/partition/offset``), its failure (``x-error-class``,
``x-error-message``, ``x-error-frames``), the attempts it had (``x-attempt``) and its
trace context (``traceparent``). Replaying one sends it (or a corrected payload) to
``<topic>.retry.<service>``, which only that stage consumes, as a first attempt, marked
``x-replayed-from: <dlq topic>:<partition>:<offset>``; a dead letter already replayed is
refused, so a fixed message is re-driven once. The stage's idempotency claim still
holds: an event it recorded before giving up (a document it turned ``error``) stays a
no-op, and such a document is retried with ``POST /rag/documents/{id}/retry``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from docproc_common.bus.delivery import dlq_topic, retry_topic
from docproc_common.bus.kafka import ATTEMPT, NOT_BEFORE, make_producer
from docproc_common.bus.topics import SUBSCRIBERS
from docproc_common.errors import InvalidInput, NotFound
from docproc_common.settings import KafkaSettings

REPLAYED_FROM = "x-replayed-from"
_FAILURE = ("x-error-class", "x-error-message", "x-error-frames", "x-error")
_ORIGIN = ("x-original-topic", "x-original-partition", "x-original-offset")


@dataclass(frozen=True, slots=True)
class DeadLetter:
    dlq: str  # the DLQ topic's name in the code
    topic: str  # the topic the stage consumes
    service: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes
    headers: dict[str, str]

    @property
    def address(self) -> str:
        return f"{self.dlq}:{self.partition}:{self.offset}"


def dead_letter_topics(service: str | None = None) -> list[tuple[str, str, str]]:
    """(DLQ topic, the topic it is for, the service) for every subscription."""
    return [
        (dlq_topic(topic, svc), topic, svc)
        for topic, services in SUBSCRIBERS.items()
        for svc in services
        if service in (None, svc)
    ]


async def _read(
    settings: KafkaSettings, topics: list[str]
) -> AsyncIterator[tuple[str, TopicPartition, object]]:
    """Every message now on ``topics`` (names in the code), oldest first per partition."""
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.bootstrap_servers)
    await admin.start()
    try:
        present = set(await admin.list_topics())
        by_broker = {settings.on_broker(t): t for t in topics if settings.on_broker(t) in present}
        described = await admin.describe_topics(list(by_broker)) if by_broker else []
    finally:
        await admin.close()
    tps = [TopicPartition(t["topic"], p["partition"]) for t in described for p in t["partitions"]]
    if not tps:
        return
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.bootstrap_servers,
        enable_auto_commit=False,
        group_id=None,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        starts = await consumer.beginning_offsets(tps)
        todo = {}
        for tp in tps:  # an explicit seek: seek_to_beginning can lose to the first reset
            if ends[tp] > starts[tp]:
                consumer.seek(tp, starts[tp])
                todo[tp] = ends[tp]
        while todo:
            batches = await consumer.getmany(*todo, timeout_ms=1000)
            for tp, records in batches.items():
                for record in records:
                    if record.offset < todo.get(tp, 0):
                        yield by_broker[tp.topic], tp, record
            for tp in list(todo):
                if await consumer.position(tp) >= todo[tp]:
                    del todo[tp]
    finally:
        await consumer.stop()


async def dead_letters(settings: KafkaSettings, service: str | None = None) -> list[DeadLetter]:
    """Every dead letter of ``service`` (default: all), oldest first per partition."""
    meta = {dlq: (topic, svc) for dlq, topic, svc in dead_letter_topics(service)}
    out: list[DeadLetter] = []
    async for name, tp, record in _read(settings, list(meta)):
        topic, svc = meta[name]
        out.append(
            DeadLetter(
                name,
                topic,
                svc,
                tp.partition,
                record.offset,  # type: ignore[attr-defined]
                record.key,  # type: ignore[attr-defined]
                record.value or b"",  # type: ignore[attr-defined]
                {k: v.decode(errors="replace") for k, v in record.headers or ()},  # type: ignore[attr-defined]
            )
        )
    return out


async def replayed(settings: KafkaSettings, letter: DeadLetter) -> bool:
    """Whether ``letter`` was replayed already (its mark is on the retry topic)."""
    async for _, _, record in _read(settings, [retry_topic(letter.topic, letter.service)]):
        for k, v in record.headers or ():  # type: ignore[attr-defined]
            if k == REPLAYED_FROM and v.decode(errors="replace") == letter.address:
                return True
    return False


async def replay(settings: KafkaSettings, address: str, payload: bytes | None = None) -> DeadLetter:
    """Send the dead letter at ``address`` (``<dlq topic>:<partition>:<offset>``, as ``dlq
    list`` shows it) back to its stage once, with ``payload`` instead of its own if given."""
    dlq, partition, offset = _parse_address(address)
    letters = [
        d
        for d in await dead_letters(settings)
        if (d.dlq, d.partition, d.offset) == (dlq, partition, offset)
    ]
    if not letters:
        raise NotFound(f"No dead letter at {address}")
    letter = letters[0]
    if await replayed(settings, letter):
        raise InvalidInput(f"The dead letter at {address} was replayed already")
    headers = {
        k: v
        for k, v in letter.headers.items()
        if k not in _FAILURE and k not in _ORIGIN and k != NOT_BEFORE
    }
    headers[ATTEMPT] = "1"
    headers[REPLAYED_FROM] = letter.address
    producer: AIOKafkaProducer = make_producer(settings)
    await producer.start()
    try:
        await producer.send_and_wait(
            settings.on_broker(retry_topic(letter.topic, letter.service)),
            value=letter.value if payload is None else payload,
            key=letter.key,
            headers=[(k, v.encode()) for k, v in headers.items()],
        )
    finally:
        await producer.stop()
    return letter


def _parse_address(address: str) -> tuple[str, int, int]:
    dlq, _, rest = address.partition(":")
    partition, _, offset = rest.partition(":")
    known = {d for d, _, _ in dead_letter_topics()}
    if dlq not in known or not partition.isdigit() or not offset.isdigit():
        raise InvalidInput(
            f"Expected <dlq topic>:<partition>:<offset> as 'docproc dlq list' shows it, "
            f"with one of: {', '.join(sorted(known))}"
        )
    return dlq, int(partition), int(offset)
