"""Durable deletion: finish a committed teardown reservation, then release its name.

Files first (deleting a missing file is a no-op), then in one transaction the
table drop (or the deleted knowledge base's chunks, when the table stays) and the
release of the reservation. A crash anywhere leaves the reservation, which a
redelivery or the hourly sweep finishes.

The rows a dropped table leaves on the name (another tenant's unfiled documents,
which the deleting caller had no authority over) keep their files and are marked
``error`` in the drop's transaction, instead of staying ``done`` with a chunk count
nothing is behind.
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta

from docproc_common.bus.delivery import Delivery
from docproc_common.events import CollectionDeleted, DocumentDeleted
from docproc_common.faultpoints import crash_point
from docproc_common.periodic import Task, periodic
from docproc_common.runtime import Runtime
from docproc_common.vectorstore import delete_documents, drop_table

from docproc_teardown import repository
from docproc_teardown.metrics import OLDEST, PENDING, TEARDOWNS

log = logging.getLogger(__name__)

SWEEP_AFTER = timedelta(hours=1)
LEFT_BEHIND = (
    "The collection's vector table was deleted with its last knowledge base, so nothing "
    "is indexed for this document any more - upload it again (a synced document is "
    "indexed again by its next sync)"
)


async def finish(runtime: Runtime, teardown_id: uuid.UUID) -> bool:
    async with runtime.sessionmaker() as session:
        reservation = await repository.lock_reservation(session, teardown_id)
        if reservation is None:
            return False  # finished already, or another worker holds it
        paths = list(reservation.storage_paths)
        drops_table, name = reservation.drop_table, reservation.collection_name
        sweeps_files = drops_table and not await repository.keeps_files(session, name)
        await session.rollback()
    for path in paths:
        await runtime.storage.delete(path)
    if sweeps_files:  # nothing else holds the name or a file under it: every file goes
        await runtime.storage.delete_prefix(f"rag/{name}")
    async with runtime.sessionmaker() as session, session.begin():
        reservation = await repository.lock_reservation(session, teardown_id)
        if reservation is None:
            return False
        if reservation.drop_table:
            await drop_table(session, reservation.collection_name)
            await repository.fail_left_behind(session, reservation.collection_name, LEFT_BEHIND)
        else:
            ids = [uuid.UUID(v) for v in reservation.vector_document_ids]
            await delete_documents(session, reservation.collection_name, ids)
            if reservation.knowledge_base_id is not None:
                await repository.delete_knowledge_base_chunks(
                    session, reservation.collection_name, reservation.knowledge_base_id
                )
        crash_point("teardown.mid_drop")
        await repository.release(session, teardown_id)
    TEARDOWNS.labels("ok").inc()
    log.info("teardown %s of %s finished", teardown_id, reservation.collection_name)
    return True


class CollectionDeletedHandler:
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    async def __call__(self, event: CollectionDeleted, _delivery: Delivery) -> None:
        await finish(self._runtime, event.teardown_id)


class DocumentDeletedHandler:
    """Remove the chunks and files of deleted documents; idempotent by construction."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    async def __call__(self, event: DocumentDeleted, _delivery: Delivery) -> None:
        for path in event.storage_paths:
            await self._runtime.storage.delete(path)
        async with self._runtime.sessionmaker() as session, session.begin():
            await delete_documents(session, event.collection_name, event.vector_document_ids)


async def sweep_once(runtime: Runtime, older_than: timedelta = SWEEP_AFTER) -> int:
    async with runtime.sessionmaker() as session:
        ids = await repository.overdue(session, older_than)
    finished = 0
    for teardown_id in ids:
        try:
            finished += await finish(runtime, teardown_id)
        except Exception as exc:  # noqa: BLE001 - one failure must not stop the sweep
            log.exception("sweep could not finish teardown %s", teardown_id)
            TEARDOWNS.labels("error").inc()
            async with runtime.sessionmaker() as session, session.begin():
                await repository.record_failure(session, teardown_id, type(exc).__name__)
    return finished


def sweeper(runtime: Runtime, interval_s: float = 3600.0) -> Task:
    async def tick() -> None:
        await sweep_once(runtime)
        async with runtime.sessionmaker() as session:
            count, age = await repository.pending(session)
        PENDING.set(count)
        OLDEST.set(age)

    return periodic("the teardown sweep", tick, interval_s, log)
