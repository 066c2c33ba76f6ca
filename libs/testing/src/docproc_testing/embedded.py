"""Rows of the embedded bus (``embedded_deliveries``) as tests put them there."""

from __future__ import annotations

import uuid

from docproc_common.db.models import EmbeddedDelivery
from docproc_common.events import Event


def delivery(consumer: str, event: Event) -> EmbeddedDelivery:
    """``event`` waiting for ``consumer``, under a fresh event id."""
    return EmbeddedDelivery(
        consumer=consumer,
        topic=event.TOPIC,
        key=event.key(),
        event_id=uuid.uuid4(),
        payload=event.model_dump(mode="json"),
    )
