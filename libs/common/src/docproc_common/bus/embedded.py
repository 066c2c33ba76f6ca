"""The embedded transport: the outbox table itself is the bus.

The relay fans each committed outbox row out into one ``embedded_deliveries`` row
per subscribing service, in the same transaction that marks it published, so a
row is delivered exactly once to each consumer's queue. Consumers claim their
rows with ``FOR UPDATE SKIP LOCKED`` and run the very handlers that run behind
Kafka, with the same retry and dead-letter semantics (a dead row stays in the
table, ``dead = true``, for inspection: its ``last_error`` is the failure as
``bus.dead_letter`` keeps it). A consumer claims up to ``concurrency`` rows at once (the
service's ``ServiceSpec.concurrency``) and handles them together.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from opentelemetry import propagate, trace
from sqlalchemy import TextClause, insert, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from docproc_common.bus.dead_letter import failure_text
from docproc_common.bus.delivery import Delivery, Subscription
from docproc_common.bus.policy import (
    DlqGuard,
    HandlingResult,
    Outcome,
    RetryPolicy,
    handle_with_retries,
)
from docproc_common.bus.relay import OutboxRow
from docproc_common.db.models import EmbeddedDelivery
from docproc_common.observability import BusMetrics

log = logging.getLogger(__name__)
EMBEDDED_RETRY_POLICY = RetryPolicy(in_place_retries=1, backoff_s=0.2, delay_s=2.0)
tracer = trace.get_tracer("docproc.bus")


class EmbeddedSink:
    def __init__(self, subscribers: Mapping[str, Sequence[str]]) -> None:
        self._subscribers = subscribers

    async def publish(self, session: AsyncSession, rows: Sequence[OutboxRow]) -> None:
        values = [
            {
                "consumer": consumer,
                "topic": row.topic,
                "key": row.key,
                "event_id": row.event_id,
                "payload": row.payload,
                "headers": row.headers,
            }
            for row in rows
            for consumer in self._subscribers.get(row.topic, ())
        ]
        if values:
            await session.execute(insert(EmbeddedDelivery), values)


class EmbeddedStageRunner:
    def __init__(
        self,
        service: str,
        subscriptions: Sequence[Subscription],
        sessionmaker: async_sessionmaker[AsyncSession],
        metrics: BusMetrics,
        *,
        policy: RetryPolicy = EMBEDDED_RETRY_POLICY,
        guard: DlqGuard | None = None,
        interval_s: float = 0.2,
        concurrency: int = 1,
    ) -> None:
        self._service = service
        self._concurrency = concurrency
        self._by_topic = {s.topic: s for s in subscriptions}
        self._sessionmaker = sessionmaker
        self._metrics = metrics
        self._policy = policy
        self._guard = guard or DlqGuard(max_ratio=0.5, window=20)
        self._interval_s = interval_s

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            handled = await self.process_batch()
            if not handled:
                try:
                    await asyncio.wait_for(stop.wait(), self._interval_s)
                except TimeoutError:
                    pass

    async def process_batch(self) -> bool:
        """Claim up to ``concurrency`` due rows, handle them together, record each outcome."""
        async with self._sessionmaker() as session, session.begin():
            rows = (
                await session.execute(
                    text(
                        "SELECT id, topic, event_id, payload, headers, attempts "
                        "FROM embedded_deliveries WHERE consumer = :c AND done_at IS NULL "
                        "AND NOT dead AND not_before <= now() ORDER BY id LIMIT :n "
                        "FOR UPDATE SKIP LOCKED"
                    ),
                    {"c": self._service, "n": self._concurrency},
                )
            ).all()
            if not rows:
                return False
            results = await asyncio.gather(*(self._handle(*row) for row in rows))
            for (row_id, _, _, _, _, attempts), result in zip(rows, results, strict=True):
                await session.execute(*self._record(row_id, attempts, result))
        for result in results:
            self._guard.record(result.outcome)
        return True

    async def _handle(
        self,
        _row_id: int,
        topic: str,
        event_id: uuid.UUID,
        payload: Any,
        headers: dict[str, str],
        attempts: int,
    ) -> HandlingResult:
        subscription = self._by_topic[topic]
        delivery = Delivery(self._service, topic, event_id, attempts + 1, headers)
        with tracer.start_as_current_span(
            f"{topic} process", context=propagate.extract(headers), kind=trace.SpanKind.CONSUMER
        ):
            result = await handle_with_retries(subscription, payload, delivery, self._policy)
        self._metrics.messages.labels(topic, result.outcome.value).inc()
        return result

    def _record(
        self, row_id: int, attempts: int, result: HandlingResult
    ) -> tuple[TextClause, dict[str, object]]:
        """The update that records ``result`` on the delivery row."""
        error = None if result.error is None else type(result.error).__name__
        if result.outcome is Outcome.OK:
            sql = "UPDATE embedded_deliveries SET done_at = now(), attempts = :a WHERE id = :id"
            params: dict[str, object] = {"a": attempts + 1, "id": row_id}
        elif result.outcome is Outcome.RETRY:
            sql = (
                "UPDATE embedded_deliveries SET attempts = :a, last_error = :e, "
                "not_before = now() + :delay WHERE id = :id"
            )
            delay = timedelta(seconds=self._policy.delay_s * (attempts + 1))
            params = {"a": attempts + 1, "e": error, "delay": delay, "id": row_id}
        else:
            assert result.error is not None
            sql = (
                "UPDATE embedded_deliveries SET attempts = :a, last_error = :e, dead = true, "
                "done_at = now() WHERE id = :id"
            )
            params = {"a": attempts + 1, "e": failure_text(result.error), "id": row_id}
        return text(sql), params
