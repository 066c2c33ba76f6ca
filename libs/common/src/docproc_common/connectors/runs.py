"""The run protocol shared by the API (which queues runs) and the sync service (which runs them).

A run is a ``sync_logs`` row and its ``SyncRequested`` event, written in one
transaction. Its status moves ``queued`` -> ``running`` -> ``done`` | ``error`` |
``cancelled`` (``cancelling`` while a cancel waits for the files in flight), or
``skipped`` when another run of the same source already holds its lock. One run
per source at a time is a Postgres advisory lock on the source, held by the run's
own connection, so a crashed worker releases it with its connection.
"""

from __future__ import annotations

import uuid

from sqlalchemy import func
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_common.bus.outbox import enqueue
from docproc_common.db.models import SyncLog, SyncSource
from docproc_common.events import SyncRequested


def lock_key(source_id: uuid.UUID) -> int:
    """The advisory-lock key that makes one run per source at a time."""
    return int.from_bytes(uuid.uuid5(source_id, "sync-run").bytes[:8], "big", signed=True)


async def queue_run(session: AsyncSession, source: SyncSource) -> SyncLog:
    """A ``queued`` log and its ``SyncRequested``, in the caller's transaction.

    The event names the source, not its configuration: the worker reads the row
    (and opens its secret) itself, so an edit between queueing and running wins.
    """
    if source.knowledge_base_id is None or source.collection_name is None:
        raise ValueError("a source filed under no knowledge base does not run")
    log = SyncLog(
        source_id=source.id,
        collection_name=source.collection_name,
        mode=source.sync_mode,
        status="queued",
    )
    session.add(log)
    await session.flush()
    source.last_run_at = func.now()
    await enqueue(
        session,
        SyncRequested(
            sync_log_id=log.id,
            collection_name=source.collection_name,
            knowledge_base_id=source.knowledge_base_id,
            connector=source.connector,
            config={},
            sync_mode=source.sync_mode,
            source_id=source.id,
            organizational_unit=source.organizational_unit,
        ),
    )
    return log
