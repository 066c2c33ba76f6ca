"""Durable deletion: finish a committed teardown reservation, then release its name.

Files first (deleting a missing file is a no-op), then in one transaction the
table drop (or the deleted knowledge base's chunks, when the table stays) and the
release of the reservation. A crash anywhere leaves the reservation, which a
redelivery or the hourly sweep finishes. The events run these steps as claim stages
(``handler``); the sweep runs them itself (``finish``).

The rows a dropped table leaves on the name (another tenant's unfiled documents,
which the deleting caller had no authority over) keep their files and are marked
``error`` in the drop's transaction, instead of staying ``done`` with a chunk count
nothing is behind.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from docproc_common.faultpoints import crash_point
from docproc_common.periodic import Task, periodic
from docproc_common.runtime import Runtime
from docproc_common.storage import AsyncStorage
from docproc_common.vectorstore import delete_documents, drop_table
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_teardown import repository
from docproc_teardown.metrics import OLDEST, PENDING, TEARDOWNS

log = logging.getLogger(__name__)

SWEEP_AFTER = timedelta(hours=1)
LEFT_BEHIND = (
    "The collection's vector table was deleted with its last knowledge base, so nothing "
    "is indexed for this document any more - upload it again (a synced document is "
    "indexed again by its next sync)"
)


@dataclass(frozen=True, slots=True)
class Plan:
    """The files a reservation takes: its paths, and every file under the name when nothing
    else holds it (``sweep``)."""

    paths: list[str]
    sweep: str | None


async def plan(session: AsyncSession, teardown_id: uuid.UUID) -> Plan | None:
    """The reservation's files, or None when it is finished or another worker holds it."""
    reservation = await repository.lock_reservation(session, teardown_id)
    if reservation is None:
        return None
    name = reservation.collection_name
    sweeps = reservation.drop_table and not await repository.keeps_files(session, name)
    return Plan(list(reservation.storage_paths), f"rag/{name}" if sweeps else None)


async def delete_files(storage: AsyncStorage, files: Plan) -> None:
    """Before the drop: deleting a missing file is a no-op, so a retry repeats it."""
    for path in files.paths:
        await storage.delete(path)
    if files.sweep is not None:  # nothing else holds the name or a file under it: all go
        await storage.delete_prefix(files.sweep)


async def drop(session: AsyncSession, teardown_id: uuid.UUID) -> bool:
    """The table drop (or the deleted base's chunks) and the release, in the caller's
    transaction; False when the reservation is finished or another worker holds it."""
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
    # counted as its transaction ends (a crash before the release counts nothing)
    TEARDOWNS.labels("ok").inc()
    log.info("teardown %s of %s finished", teardown_id, reservation.collection_name)
    return True


class SqlReservations:
    """The teardown's ``handler.Reservations`` on the database."""

    async def plan(self, session: AsyncSession, teardown_id: uuid.UUID) -> Plan | None:
        return await plan(session, teardown_id)

    async def drop(self, session: AsyncSession, teardown_id: uuid.UUID) -> bool:
        return await drop(session, teardown_id)

    async def delete_chunks(
        self, session: AsyncSession, collection: str, vector_document_ids: Sequence[uuid.UUID]
    ) -> None:
        await delete_documents(session, collection, vector_document_ids)


async def finish(runtime: Runtime, teardown_id: uuid.UUID) -> bool:
    """The sweep's finish of a reservation: its files, then the drop and the release."""
    async with runtime.sessionmaker() as session:
        files = await plan(session, teardown_id)
        await session.rollback()
    if files is None:
        return False  # finished already, or another worker holds it
    await delete_files(runtime.storage, files)
    async with runtime.sessionmaker() as session, session.begin():
        return await drop(session, teardown_id)


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
