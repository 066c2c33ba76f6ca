"""The outbox relay: moves committed outbox rows to a transport, oldest first.

Rows are claimed with ``FOR UPDATE SKIP LOCKED`` so several relays (one per
pod) share the work without publishing a row twice at once. A crash after the
transport accepted a row and before ``published_at`` was committed publishes it
again: delivery is at-least-once and every consumer is idempotent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from docproc_common.db.engine import backlog
from docproc_common.faultpoints import crash_point
from docproc_common.periodic import FailureStreak, sleep_unless_stopped

log = logging.getLogger(__name__)
RELAY_MAX_WAIT_S = 10.0  # how late a relay notices that its database or broker is back


@dataclass(frozen=True, slots=True)
class OutboxRow:
    id: int
    event_id: Any
    topic: str
    key: str
    payload: dict[str, Any]
    headers: dict[str, str]
    created_at: datetime


class Sink(Protocol):
    async def publish(self, session: AsyncSession, rows: Sequence[OutboxRow]) -> None:
        """Hand ``rows`` to the transport; raise if any was not accepted."""


class OutboxRelay:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        sink: Sink,
        *,
        batch: int = 100,
        interval_s: float = 0.2,
    ) -> None:
        self._sessionmaker = sessionmaker
        self._sink = sink
        self._batch = batch
        self._interval_s = interval_s

    async def relay_once(self) -> int:
        async with self._sessionmaker() as session, session.begin():
            result = await session.execute(
                text(
                    "SELECT id, event_id, topic, key, payload, headers, created_at FROM outbox "
                    "WHERE published_at IS NULL ORDER BY id LIMIT :n FOR UPDATE SKIP LOCKED"
                ),
                {"n": self._batch},
            )
            rows = [OutboxRow(*r) for r in result.all()]
            if not rows:
                return 0
            crash_point("relay.before_publish")
            await self._sink.publish(session, rows)
            crash_point("relay.after_publish")
            await session.execute(
                text("UPDATE outbox SET published_at = now() WHERE id = ANY(:ids)"),
                {"ids": [r.id for r in rows]},
            )
        return len(rows)

    async def run(self, stop: asyncio.Event) -> None:
        """Relay until stopped: straight on while rows move, a short wait when none are
        pending, a backed-off wait (logged once per change of state) while failing."""
        streak = FailureStreak("the outbox relay", log)
        while not stop.is_set():
            try:
                moved = await self.relay_once()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the relay never stops the process
                streak.failed(exc)
                moved = 0
            else:
                streak.recovered()
            if moved == 0:
                await sleep_unless_stopped(stop, streak.wait_s(self._interval_s, RELAY_MAX_WAIT_S))


async def outbox_backlog(session: AsyncSession) -> tuple[int, float]:
    """Unpublished rows and the age in seconds of the oldest one (for metrics and alerts)."""
    return await backlog(session, "outbox", "published_at IS NULL")
