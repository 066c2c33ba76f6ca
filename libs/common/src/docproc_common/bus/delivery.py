"""What a handler receives besides the event, and the idempotency gate it commits with."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_common.errors import PermanentError
from docproc_common.events import EVENT_TYPES, Event


@dataclass(frozen=True, slots=True)
class Delivery:
    consumer: str
    topic: str
    event_id: uuid.UUID
    attempt: int
    headers: Mapping[str, str] = field(default_factory=dict)

    async def claim(self, session: AsyncSession) -> bool:
        """Record this event as processed by this consumer, in the caller's transaction.

        False when it already was: the caller must then write nothing (roll back).
        """
        row = await session.execute(
            text(
                "INSERT INTO processed_events (consumer, event_id) VALUES (:c, :e) "
                "ON CONFLICT DO NOTHING RETURNING event_id"
            ),
            {"c": self.consumer, "e": self.event_id},
        )
        return row.first() is not None

    async def already_processed(self, session: AsyncSession) -> bool:
        row = await session.execute(
            text("SELECT 1 FROM processed_events WHERE consumer = :c AND event_id = :e"),
            {"c": self.consumer, "e": self.event_id},
        )
        return row.first() is not None


Handler = Callable[[Any, Delivery], Awaitable[None]]
#: (event, delivery, the last error) -> record the failure; see ``Subscription.give_up``.
GiveUp = Callable[[Any, Delivery, BaseException], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Subscription:
    """One topic a stage consumes and the handler that processes its events."""

    topic: str
    handler: Handler
    give_up: GiveUp | None = None
    """Called before a decoded event is dead-lettered (its attempts spent, or a permanent
    error), so the stage records the failure where people look instead of leaving the
    work in progress; if it raises, the event is retried instead."""

    @property
    def event_type(self) -> type[Event]:
        return EVENT_TYPES[self.topic]

    def decode(self, payload: Mapping[str, Any] | bytes) -> Event:
        try:
            if isinstance(payload, bytes):
                return self.event_type.model_validate_json(payload)
            return self.event_type.model_validate(payload)
        except ValidationError as exc:
            # where and what kind, never the values (a payload may carry a client's text)
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '(message)'}: {e['type']}"
                for e in exc.errors()[:5]
            )
            raise PermanentError(
                f"invalid {self.topic} payload: {exc.error_count()} errors ({problems})"
            ) from exc


def retry_topic(topic: str, consumer: str) -> str:
    return f"{topic}.retry.{consumer}"


def dlq_topic(topic: str, consumer: str) -> str:
    return f"{topic}.dlq.{consumer}"
