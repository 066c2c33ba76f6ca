"""Transactional outbox: an event is a row written in the same transaction as the rows it describes.

Nothing publishes before commit. A relay (``docproc_common.bus.relay``) moves
committed rows to the transport: Kafka in a distributed deployment, per-consumer
delivery rows in the embedded one.
"""

from __future__ import annotations

import uuid

from opentelemetry import propagate
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_common.db.models import OutboxEvent
from docproc_common.events import Event

EVENT_ID_HEADER = "event-id"
EVENT_TYPE_HEADER = "event-type"


async def enqueue(session: AsyncSession, event: Event) -> uuid.UUID:
    """Add ``event`` to the outbox inside the caller's transaction; returns its id."""
    event_id = uuid.uuid4()
    headers: dict[str, str] = {EVENT_ID_HEADER: str(event_id), EVENT_TYPE_HEADER: event.TOPIC}
    propagate.inject(headers)
    await session.execute(
        insert(OutboxEvent).values(
            event_id=event_id,
            topic=event.TOPIC,
            key=event.key(),
            payload=event.model_dump(mode="json"),
            headers=headers,
        )
    )
    return event_id
