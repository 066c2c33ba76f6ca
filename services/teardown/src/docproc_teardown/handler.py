"""``CollectionDeleted`` and ``DocumentDeleted`` as claim stages (``docproc_common.bus.stage``).

Each is claimed like every other consumer's event: a redelivery after the commit is
absorbed by the claim and touches nothing. A collection's teardown reads its reservation
(its files), deletes the files with no session open, then drops and releases in the
claim's transaction (``service.drop``); a reservation another worker holds, or one
finished already, is left to it (only the claim commits). A deleted document's files go
first, then its chunks, with the claim.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar

from docproc_common.bus.stage import ClaimHandler, Outcome
from docproc_common.events import CollectionDeleted, DocumentDeleted
from docproc_common.runtime import Runtime
from docproc_common.storage import AsyncStorage

from docproc_teardown.service import Plan, SqlReservations, delete_files

S = TypeVar("S")
S_contra = TypeVar("S_contra", contravariant=True)


class Reservations(Protocol[S_contra]):
    """Where the teardown's reads and writes go: ``service.SqlReservations``, or a stage
    test's in memory."""

    async def plan(self, session: S_contra, teardown_id: uuid.UUID) -> Plan | None: ...
    async def drop(self, session: S_contra, teardown_id: uuid.UUID) -> bool: ...
    async def delete_chunks(
        self, session: S_contra, collection: str, vector_document_ids: Sequence[uuid.UUID]
    ) -> None: ...


class CollectionTeardownStage(Generic[S]):
    def __init__(self, storage: AsyncStorage, reservations: Reservations[S]) -> None:
        self._storage = storage
        self._reservations = reservations

    async def read(self, session: S, event: CollectionDeleted) -> Plan | None:
        return await self._reservations.plan(session, event.teardown_id)

    async def compute(self, _event: CollectionDeleted, files: Plan | None) -> bool:
        if files is not None:
            await delete_files(self._storage, files)
        return files is not None

    async def write(self, session: S, event: CollectionDeleted, planned: bool) -> None:
        if planned:
            await self._reservations.drop(session, event.teardown_id)

    async def settled(self, _event: CollectionDeleted, _outcome: Outcome) -> None:
        pass


class DocumentTeardownStage(Generic[S]):
    def __init__(self, storage: AsyncStorage, reservations: Reservations[S]) -> None:
        self._storage = storage
        self._reservations = reservations

    async def read(self, _session: S, _event: DocumentDeleted) -> None:
        return None

    async def compute(self, event: DocumentDeleted, _read: None) -> None:
        for path in event.storage_paths:
            await self._storage.delete(path)

    async def write(self, session: S, event: DocumentDeleted, _computed: None) -> None:
        await self._reservations.delete_chunks(
            session, event.collection_name, event.vector_document_ids
        )

    async def settled(self, _event: DocumentDeleted, _outcome: Outcome) -> None:
        pass


def collection_deleted(runtime: Runtime) -> ClaimHandler[CollectionDeleted, Plan | None, bool]:
    stage = CollectionTeardownStage(runtime.storage, SqlReservations())
    return ClaimHandler(runtime.sessionmaker, stage)


def document_deleted(runtime: Runtime) -> ClaimHandler[DocumentDeleted, None, None]:
    return ClaimHandler(
        runtime.sessionmaker, DocumentTeardownStage(runtime.storage, SqlReservations())
    )
