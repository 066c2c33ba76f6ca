"""Kafka transport: the outbox sink and the consumer stage runner (aiokafka).

Producer: idempotent, ``acks="all"``. Consumer: one group per service,
``enable_auto_commit=False``; offsets are committed only after the handler's own
database commit. A failing message is retried in place, then republished to
``<topic>.retry.<service>`` with ``x-attempt`` / ``x-not-before`` headers (the
partition is paused until then, never slept on, so the group does not
rebalance), then dead-lettered to ``<topic>.dlq.<service>`` with its origin and
its failure (``bus.dead_letter``: class, sanitised message, last frames).

A runner handles up to ``concurrency`` records at once over all its partitions (the
service's ``ServiceSpec.concurrency``, 1 unless its handler allows overlap); a
partition's records start in offset order, and its offset is committed once the
records of the poll are done, up to the first that raised.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from opentelemetry import propagate, trace
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_common.bus.dead_letter import failure_headers
from docproc_common.bus.delivery import Delivery, Subscription, dlq_topic, retry_topic
from docproc_common.bus.outbox import EVENT_ID_HEADER
from docproc_common.bus.policy import DlqGuard, Outcome, RetryPolicy, handle_with_retries
from docproc_common.bus.relay import OutboxRow
from docproc_common.bus.topics import ensure_topics
from docproc_common.observability import BusMetrics
from docproc_common.settings import KafkaSettings

log = logging.getLogger(__name__)
tracer = trace.get_tracer("docproc.bus")

ATTEMPT = "x-attempt"
NOT_BEFORE = "x-not-before"


def _encode_headers(headers: Mapping[str, str]) -> list[tuple[str, bytes]]:
    return [(k, v.encode()) for k, v in headers.items()]


def _decode_headers(record: ConsumerRecord[Any, Any]) -> dict[str, str]:
    return {k: v.decode(errors="replace") for k, v in (record.headers or ())}


def make_producer(settings: KafkaSettings) -> AIOKafkaProducer:
    return AIOKafkaProducer(
        bootstrap_servers=settings.bootstrap_servers,
        client_id=settings.client_id,
        acks="all",
        enable_idempotence=True,
    )


class KafkaSink:
    """Outbox sink: publish every row and wait for the broker's ack before the relay commits."""

    def __init__(self, producer: AIOKafkaProducer, settings: KafkaSettings) -> None:
        self._producer = producer
        self._settings = settings

    async def publish(self, _session: AsyncSession, rows: Sequence[OutboxRow]) -> None:
        futures = [
            await self._producer.send(
                self._settings.on_broker(row.topic),
                value=json.dumps(row.payload).encode(),
                key=row.key.encode(),
                headers=_encode_headers(row.headers),
            )
            for row in rows
        ]
        await asyncio.gather(*futures)


class KafkaStageRunner:
    def __init__(
        self,
        service: str,
        subscriptions: Sequence[Subscription],
        settings: KafkaSettings,
        metrics: BusMetrics,
        *,
        concurrency: int = 1,
    ) -> None:
        self._service = service
        self._slots = asyncio.Semaphore(concurrency)
        self._settings = settings
        self._metrics = metrics
        self._policy = RetryPolicy(
            settings.max_in_place_retries,
            settings.retry_backoff_s,
            settings.retry_delay_s,
            settings.max_attempts,
        )
        self._guard = DlqGuard(settings.dlq_max_ratio, settings.dlq_window)
        # the broker's topic name -> its subscription and the topic's name in the code
        self._by_topic: dict[str, tuple[Subscription, str]] = {}
        for sub in subscriptions:
            for topic in (sub.topic, retry_topic(sub.topic, service)):
                self._by_topic[settings.on_broker(topic)] = (sub, sub.topic)
        self._paused_until: dict[TopicPartition, float] = {}
        self.consumer: AIOKafkaConsumer | None = None

    async def run(self, stop: asyncio.Event) -> None:
        originals = {orig for _, orig in self._by_topic.values()}
        await ensure_topics(
            self._settings,
            [
                t
                for orig in originals
                for t in (orig, retry_topic(orig, self._service), dlq_topic(orig, self._service))
            ],
        )
        consumer = AIOKafkaConsumer(
            *self._by_topic,
            bootstrap_servers=self._settings.bootstrap_servers,
            client_id=f"{self._settings.client_id}-{self._service}",
            group_id=self._settings.on_broker(self._service),
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_poll_interval_ms=self._settings.max_poll_interval_ms,
        )
        producer = make_producer(self._settings)
        self.consumer = consumer
        await producer.start()
        await consumer.start()
        try:
            while not stop.is_set():
                self._resume_due(consumer)
                batches = await consumer.getmany(
                    timeout_ms=self._settings.poll_timeout_ms,
                    max_records=self._settings.max_records,
                )
                await _all_or_first_error(
                    [
                        self._process_partition(consumer, producer, tp, records)
                        for tp, records in batches.items()
                    ]
                )
                await self._record_lag(consumer)
        finally:
            await consumer.stop()
            await producer.stop()

    def _resume_due(self, consumer: AIOKafkaConsumer) -> None:
        now = time.time()
        due = [tp for tp, until in self._paused_until.items() if until <= now]
        for tp in due:
            del self._paused_until[tp]
        if due:
            consumer.resume(*due)

    async def _record_lag(self, consumer: AIOKafkaConsumer) -> None:
        for tp in consumer.assignment():
            highwater = consumer.highwater(tp)
            if highwater is None:
                continue
            position = await consumer.position(tp)
            self._metrics.lag.labels(tp.topic, str(tp.partition)).set(max(0, highwater - position))

    async def _process_partition(
        self,
        consumer: AIOKafkaConsumer,
        producer: AIOKafkaProducer,
        tp: TopicPartition,
        records: list[ConsumerRecord[Any, Any]],
    ) -> None:
        started: list[asyncio.Task[None]] = []
        try:
            for record in records:
                headers = _decode_headers(record)
                not_before = float(headers.get(NOT_BEFORE, "0"))
                if not_before > time.time():
                    consumer.seek(tp, record.offset)
                    consumer.pause(tp)
                    self._paused_until[tp] = not_before
                    break
                await self._slots.acquire()
                started.append(asyncio.create_task(self._in_slot(producer, record, headers)))
            results = await asyncio.gather(*started, return_exceptions=True)
        finally:  # cancelled while waiting for a slot: the started records go with it
            for task in started:
                task.cancel()
        last_done: int | None = None
        for record, result in zip(records, results, strict=False):
            if isinstance(result, BaseException):
                if last_done is not None:
                    await consumer.commit({tp: last_done + 1})
                raise result
            last_done = record.offset
        if last_done is not None:
            await consumer.commit({tp: last_done + 1})

    async def _in_slot(
        self,
        producer: AIOKafkaProducer,
        record: ConsumerRecord[Any, Any],
        headers: dict[str, str],
    ) -> None:
        try:
            await self._process_record(producer, record, headers)
        finally:
            self._slots.release()

    async def _process_record(
        self,
        producer: AIOKafkaProducer,
        record: ConsumerRecord[Any, Any],
        headers: dict[str, str],
    ) -> None:
        subscription, original = self._by_topic[record.topic]
        attempt = int(headers.get(ATTEMPT, "1"))
        try:
            event_id = uuid.UUID(headers.get(EVENT_ID_HEADER, ""))
        except ValueError:
            event_id = uuid.uuid5(
                uuid.NAMESPACE_URL, f"{record.topic}/{record.partition}/{record.offset}"
            )
        delivery = Delivery(self._service, original, event_id, attempt, headers)
        context = propagate.extract(headers)
        with tracer.start_as_current_span(
            f"{original} process", context=context, kind=trace.SpanKind.CONSUMER
        ) as span:
            span.set_attribute("messaging.destination.name", original)
            span.set_attribute("messaging.consumer.group.name", self._service)
            result = await handle_with_retries(subscription, record.value, delivery, self._policy)
        self._metrics.messages.labels(original, result.outcome.value).inc()
        if result.outcome is Outcome.RETRY:
            out = dict(headers)
            out[ATTEMPT] = str(attempt + 1)
            out[NOT_BEFORE] = str(time.time() + self._policy.delay_s * attempt)
            out["x-error"] = type(result.error).__name__
            await producer.send_and_wait(
                self._settings.on_broker(retry_topic(original, self._service)),
                value=record.value,
                key=record.key,
                headers=_encode_headers(out),
            )
        elif result.outcome is Outcome.DLQ:
            assert result.error is not None
            out = dict(headers)
            out.update(
                {
                    "x-original-topic": record.topic,
                    "x-original-partition": str(record.partition),
                    "x-original-offset": str(record.offset),
                    ATTEMPT: str(attempt),  # the attempts spent, the first one's too
                    **failure_headers(result.error),
                }
            )
            await producer.send_and_wait(
                self._settings.on_broker(dlq_topic(original, self._service)),
                value=record.value,
                key=record.key,
                headers=_encode_headers(out),
            )
        self._guard.record(result.outcome)


async def _all_or_first_error(coroutines: Sequence[Coroutine[Any, Any, None]]) -> None:
    """Run ``coroutines`` together, let all of them finish, then raise the first error."""
    for result in await asyncio.gather(*coroutines, return_exceptions=True):
        if isinstance(result, BaseException):
            raise result
