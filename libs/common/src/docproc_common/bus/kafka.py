"""Kafka transport: the outbox sink and the consumer stage runner (aiokafka).

Producer: idempotent, ``acks="all"``. Consumer: one group per service,
``enable_auto_commit=False``; offsets are committed only after the handler's own
database commit. A failing message is retried in place, then republished to
``<topic>.retry.<service>`` with ``x-attempt`` / ``x-not-before`` headers (the
partition is paused until then, never slept on, so the group does not
rebalance), then dead-lettered to ``<topic>.dlq.<service>`` with its origin and
its failure (``bus.dead_letter``: class, sanitised message, last frames). A hand-off
to either topic that the broker cannot take (away, no leader, the topic's partitions
not known to the producer yet) is tried again until it can, the record in flight: an
outage never stops the process.

A runner handles up to ``concurrency`` records at once over all its partitions (the
service's ``ServiceSpec.concurrency``, 1 unless its handler allows overlap); a
partition's records start in offset order, and its offset is committed once the
records of the poll are done, up to the first that raised.

A rebalance (a consumer joins or leaves the group, or this one was silent longer than
``max_poll_interval_ms`` and was dropped from it) revokes partitions: their records not
yet started are left, those in flight get ``revoke_grace_s`` to finish, the offset of
what is done is committed, and the rest are cancelled. Their handlers run again at the
partition's next owner (they are idempotent: claim, current-attempt lock). A commit the
group refuses because it has moved on (``CommitFailedError``, ``IllegalStateError``) is
logged, never fatal: the process keeps consuming what it is assigned next.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiokafka import (
    AIOKafkaConsumer,
    AIOKafkaProducer,
    ConsumerRebalanceListener,
    ConsumerRecord,
    TopicPartition,
)
from aiokafka.errors import CommitFailedError, IllegalStateError, KafkaError, KafkaTimeoutError
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
#: How long the group waits for a member to rejoin, past the grace of its revoked records
REJOIN_MARGIN_MS = 10_000
#: The pause between tries of a retry or dead-letter hand-off the broker did not take
HAND_OFF_BACKOFF_S = 1.0


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
        request_timeout_ms=settings.producer_timeout_ms,
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


@dataclass(eq=False)
class _PartitionWork:
    """The records of one poll of one partition that were started, in offset order."""

    tp: TopicPartition
    started: list[tuple[int, asyncio.Task[None]]] = field(default_factory=list)
    revoked: bool = False  # the partition was revoked: start nothing more, commit nothing

    def tasks(self) -> list[asyncio.Task[None]]:
        return [task for _, task in self.started]

    def next_offset(self) -> int | None:
        """The offset to commit: past the records done without error from the first on."""
        offset = None
        for record_offset, task in self.started:
            if not task.done() or task.cancelled() or task.exception() is not None:
                break
            offset = record_offset + 1
        return offset

    def first_error(self) -> BaseException | None:
        for _, task in self.started:
            if not task.cancelled() and (error := task.exception()) is not None:
                return error
        return None


class _Revoker(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, runner: KafkaStageRunner, consumer: AIOKafkaConsumer) -> None:
        self._runner = runner
        self._consumer = consumer

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        await self._runner.revoke(self._consumer, revoked)

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        log.info("%s assigned %s", self._runner.service, sorted(assigned))


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
        self.service = service
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
        self._in_flight: dict[TopicPartition, _PartitionWork] = {}
        self.consumer: AIOKafkaConsumer | None = None

    async def run(self, stop: asyncio.Event) -> None:
        originals = {orig for _, orig in self._by_topic.values()}
        await ensure_topics(
            self._settings,
            [
                t
                for orig in originals
                for t in (orig, retry_topic(orig, self.service), dlq_topic(orig, self.service))
            ],
        )
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self._settings.bootstrap_servers,
            client_id=f"{self._settings.client_id}-{self.service}",
            group_id=self._settings.on_broker(self.service),
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_poll_interval_ms=self._settings.max_poll_interval_ms,
            rebalance_timeout_ms=int(self._settings.revoke_grace_s * 1000) + REJOIN_MARGIN_MS,
        )
        consumer.subscribe(list(self._by_topic), listener=_Revoker(self, consumer))
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

    async def revoke(self, consumer: AIOKafkaConsumer, revoked: set[TopicPartition]) -> None:
        """The rebalance listener's half: called before the group reassigns ``revoked``."""
        for tp in revoked:
            self._paused_until.pop(tp, None)
        works = [work for tp, work in self._in_flight.items() if tp in revoked]
        for work in works:
            work.revoked = True
        tasks = [task for work in works for task in work.tasks()]
        if not tasks:
            return
        log.info(
            "%s: partitions %s revoked with %d records in flight; they get %.1f s to finish",
            self.service,
            sorted(work.tp for work in works),
            sum(not task.done() for task in tasks),
            self._settings.revoke_grace_s,
        )
        await asyncio.wait(tasks, timeout=self._settings.revoke_grace_s)
        offsets = {work.tp: o for work in works if (o := work.next_offset()) is not None}
        abandoned = [task for task in tasks if not task.done()]
        for task in abandoned:
            task.cancel()
        await asyncio.gather(*abandoned, return_exceptions=True)
        if abandoned:
            log.warning(
                "%s: %d records of revoked partitions abandoned; their next owner handles them",
                self.service,
                len(abandoned),
            )
        await self._commit(consumer, offsets)

    async def _commit(self, consumer: AIOKafkaConsumer, offsets: dict[TopicPartition, int]) -> None:
        """Commit ``offsets``, unless the group has moved on: then the records past the
        committed offsets are the partition's next owner's to handle (again)."""
        if not offsets:
            return
        try:
            await consumer.commit(offsets)
        except (CommitFailedError, IllegalStateError) as exc:
            log.warning(
                "%s: offsets %s not committed (%s: %s); the partitions' owner after the "
                "rebalance handles those records again",
                self.service,
                offsets,
                type(exc).__name__,
                exc,
            )

    async def _record_lag(self, consumer: AIOKafkaConsumer) -> None:
        for tp in consumer.assignment():
            try:
                highwater = consumer.highwater(tp)
                if highwater is None:
                    continue
                position = await consumer.position(tp)
            except IllegalStateError:  # revoked meanwhile
                continue
            self._metrics.lag.labels(tp.topic, str(tp.partition)).set(max(0, highwater - position))

    async def _process_partition(
        self,
        consumer: AIOKafkaConsumer,
        producer: AIOKafkaProducer,
        tp: TopicPartition,
        records: list[ConsumerRecord[Any, Any]],
    ) -> None:
        work = self._in_flight[tp] = _PartitionWork(tp)
        try:
            for record in records:
                if work.revoked:
                    break
                headers = _decode_headers(record)
                not_before = float(headers.get(NOT_BEFORE, "0"))
                if not_before > time.time():
                    consumer.seek(tp, record.offset)
                    consumer.pause(tp)
                    self._paused_until[tp] = not_before
                    break
                await self._slots.acquire()
                if work.revoked:  # while waiting for a slot
                    self._slots.release()
                    break
                task = asyncio.create_task(self._in_slot(producer, record, headers))
                work.started.append((record.offset, task))
            await asyncio.gather(*work.tasks(), return_exceptions=True)
        finally:  # cancelled while waiting for a slot: the started records go with it
            for task in work.tasks():
                task.cancel()
            del self._in_flight[tp]
        if work.revoked:
            return  # the revocation committed what was done
        await self._commit(consumer, {tp: o} if (o := work.next_offset()) is not None else {})
        if (error := work.first_error()) is not None:
            raise error

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
        delivery = Delivery(self.service, original, event_id, attempt, headers)
        context = propagate.extract(headers)
        with tracer.start_as_current_span(
            f"{original} process", context=context, kind=trace.SpanKind.CONSUMER
        ) as span:
            span.set_attribute("messaging.destination.name", original)
            span.set_attribute("messaging.consumer.group.name", self.service)
            result = await handle_with_retries(subscription, record.value, delivery, self._policy)
        self._metrics.messages.labels(original, result.outcome.value).inc()
        if result.outcome is Outcome.RETRY:
            out = dict(headers)
            out[ATTEMPT] = str(attempt + 1)
            out[NOT_BEFORE] = str(time.time() + self._policy.delay_s * attempt)
            out["x-error"] = type(result.error).__name__
            await self._hand_off(producer, retry_topic(original, self.service), record, out)
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
            await self._hand_off(producer, dlq_topic(original, self.service), record, out)
        self._guard.record(result.outcome)

    async def _hand_off(
        self,
        producer: AIOKafkaProducer,
        topic: str,
        record: ConsumerRecord[Any, Any],
        headers: dict[str, str],
    ) -> None:
        """Publish ``record`` to its retry or dead-letter ``topic``, trying again for as long
        as the broker cannot take it (unreachable, no leader, the topic's partitions not
        known yet): the record stays in flight, its offset uncommitted, and the process
        keeps running; a revocation or the process's stop cancels it like any record."""
        while True:
            try:
                await producer.send_and_wait(
                    self._settings.on_broker(topic),
                    value=record.value,
                    key=record.key,
                    headers=_encode_headers(headers),
                )
                return
            except KafkaError as exc:
                if not (exc.retriable or isinstance(exc, KafkaTimeoutError)):
                    raise
                log.warning(
                    "%s: %s not handed to %s yet (%r); trying again in %.0f s",
                    self.service,
                    headers.get(EVENT_ID_HEADER, f"{record.topic}/{record.offset}"),
                    topic,
                    exc,
                    HAND_OFF_BACKOFF_S,
                )
                await asyncio.sleep(HAND_OFF_BACKOFF_S)


async def _all_or_first_error(coroutines: Sequence[Coroutine[Any, Any, None]]) -> None:
    """Run ``coroutines`` together, let all of them finish, then raise the first error."""
    for result in await asyncio.gather(*coroutines, return_exceptions=True):
        if isinstance(result, BaseException):
            raise result
