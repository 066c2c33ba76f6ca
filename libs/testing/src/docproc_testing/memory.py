"""A stage's unit in memory: its decisions as unit tests that need no database.

``Memory`` is what the unit tests' database holds (the consumers' processed events, the
outbox, tracking rows as plain ``RagDocument`` objects); ``Memory.unit(delivery)`` is a
``docproc_common.bus.stage.Unit`` over it, whose session is the ``Memory`` itself, so a
stage runs on it exactly as on ``SqlUnit``: ``stage.run(memory.unit(d), stage, event)``.
Its transaction is all or nothing as the database's: a write that raises leaves the
claims, the outbox and the rows as they were. ``MemoryStorage`` is an object store in a
dict, for ``AsyncStorage``.
"""

from __future__ import annotations

import copy
import io
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from docproc_common.blocking import BlockingPool
from docproc_common.bus.delivery import Delivery
from docproc_common.db.models import DocumentStatus, RagDocument
from docproc_common.events import DocumentFailed, Event
from docproc_common.failures import Stage, failure_message
from docproc_common.storage import AsyncStorage

_COLUMNS = [a.key for a in RagDocument.__mapper__.column_attrs]


@dataclass
class Memory:
    """The state a stage test's units share."""

    processed: set[tuple[str, uuid.UUID]] = field(default_factory=set)
    outbox: list[Event] = field(default_factory=list)
    rows: dict[uuid.UUID, RagDocument] = field(default_factory=dict)

    def add(self, row: RagDocument) -> RagDocument:
        """Store ``row``, giving it an id when it has none."""
        if row.id is None:
            row.id = uuid.uuid4()
        self.rows[row.id] = row
        return row

    def unit(self, delivery: Delivery) -> MemoryUnit:
        return MemoryUnit(self, delivery)

    def sent(self, kind: type[Event]) -> list[Event]:
        """The outbox's events of ``kind``, oldest first."""
        return [e for e in self.outbox if isinstance(e, kind)]

    def _snapshot(self) -> tuple[Any, ...]:
        rows = {i: {k: copy.copy(getattr(r, k)) for k in _COLUMNS} for i, r in self.rows.items()}
        return set(self.processed), list(self.outbox), dict(self.rows), rows

    def _restore(self, snapshot: tuple[Any, ...]) -> None:
        processed, outbox, rows, columns = snapshot
        self.processed, self.outbox, self.rows = processed, outbox, rows
        for row_id, values in columns.items():
            for key, value in values.items():
                setattr(rows[row_id], key, value)


@dataclass(frozen=True, slots=True)
class MemoryUnit:
    """``bus.stage.Unit`` over a ``Memory``: the session a stage receives is the memory."""

    memory: Memory
    delivery: Delivery

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[Memory]:
        yield self.memory

    @asynccontextmanager
    async def writing(self) -> AsyncIterator[Memory]:
        snapshot = self.memory._snapshot()
        try:
            yield self.memory
        except BaseException:
            self.memory._restore(snapshot)
            raise

    def _key(self) -> tuple[str, uuid.UUID]:
        return self.delivery.consumer, self.delivery.event_id

    async def processed(self, session: Memory) -> bool:
        return self._key() in session.processed

    async def claim(self, session: Memory) -> bool:
        if self._key() in session.processed:
            return False
        session.processed.add(self._key())
        return True

    async def current(
        self, session: Memory, document_id: uuid.UUID, attempt_id: uuid.UUID
    ) -> RagDocument | None:
        row = session.rows.get(document_id)
        if row is None or row.status != DocumentStatus.PROCESSING or row.attempt_id != attempt_id:
            return None
        return row

    async def fail(
        self,
        session: Memory,
        document_id: uuid.UUID,
        attempt_id: uuid.UUID,
        stage: Stage,
        exc: BaseException,
        collection_name: str,
    ) -> bool:
        """``documents.fail_document`` on the row (earlier failed rows are not retired here)."""
        row = await self.current(session, document_id, attempt_id)
        if row is None:
            return False
        message = failure_message(stage, exc)
        row.status = DocumentStatus.ERROR
        row.error_message = message
        row.completed_at = datetime.now(UTC)
        session.outbox.append(
            DocumentFailed(
                document_id=document_id,
                collection_name=collection_name,
                stage=stage.value,
                error_message=message,
            )
        )
        return True

    async def enqueue(self, session: Memory, event: Event) -> None:
        session.outbox.append(event)


class MemoryStorage:
    """``storage.Storage`` in a dict: key -> bytes."""

    backend = "memory"
    encrypted = False

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}

    def put(self, key: str, data: bytes, content_type: str | None = None) -> None:  # noqa: ARG002
        self.objects[key] = data

    def get(self, key: str) -> bytes:
        try:
            return self.objects[key]
        except KeyError:
            raise FileNotFoundError(key) from None

    def open(self, key: str) -> io.BytesIO:
        return io.BytesIO(self.get(key))

    def exists(self, key: str) -> bool:
        return key in self.objects

    def delete(self, key: str) -> None:
        self.objects.pop(key, None)

    def delete_prefix(self, prefix: str) -> int:
        gone = [k for k in self.objects if k == prefix or k.startswith(prefix.rstrip("/") + "/")]
        for key in gone:
            del self.objects[key]
        return len(gone)

    def list_prefix(self, prefix: str) -> list[tuple[str, int]]:
        folder = prefix.rstrip("/") + "/"
        return sorted((k, len(v)) for k, v in self.objects.items() if k.startswith(folder))


@contextmanager
def memory_storage() -> Iterator[tuple[AsyncStorage, MemoryStorage]]:
    """An ``AsyncStorage`` over a fresh ``MemoryStorage`` (and the store, to look into)."""
    store = MemoryStorage()
    pool = BlockingPool(1, name="memory-storage")
    try:
        yield AsyncStorage(store, pool), store
    finally:
        pool.shutdown()
