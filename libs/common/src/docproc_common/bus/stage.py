"""A stage is a declaration the runner executes: one claim discipline for every consumer.

A stage declares four plain functions (and what its write locks first), nothing about
transactions:

* ``read(session, row, event) -> R``: what the slow part needs, in the unit's read session
  (it commits nothing and is closed before the slow part);
* ``compute(event, R) -> C``: the slow part (a parse, an embedding, storage I/O), no session;
* ``write(session, row, event, C) -> Event | None``: the writes, inside the unit's
  transaction; the event it returns goes to the outbox in that transaction;
* ``settled(event, outcome)``: cleanup and metrics once the unit has committed (or found
  nothing to do);
* and ``lock(session, event)``: what the write locks before the attempt's row, so that
  every writer on a name locks in one order, the name before its rows (the embedder's
  write of content no base owns takes the name's lock; the other stages take none).

The runner (``run``) owns the rest, the same for every stage: it checks the claim
(``Unit.processed``), reads the row only while it waits for the event's attempt
(``Unit.current``: ``documents.lock_current_attempt``), runs read -> compute -> write,
and commits the writes, the outgoing event and the claim (``Unit.claim``) together. An
event processed before writes nothing; an attempt no longer current commits only the
claim. A document's own error (an ``AppError`` that is no ``RetryableError``, or one of
the stage's ``refuses``) raised by any of the three is recorded once, in the stage's
``fails_at``, with the claim (``documents.fail_document``); anything else is the bus's to
retry, and ``give_up`` records the failure when the attempts run out.

A stage that works on no tracking row (teardown's deletions) is a ``ClaimStage``: the
same functions without the row, run by ``run_claimed`` under the same claim. A stage
whose work spans several transactions (a sync run, slice by slice) is a ``UnitStage``: it
receives the delivery's unit and claims with ``Unit.claim`` in its terminal transaction.

The unit is a protocol so that a stage's decisions run on an in-memory one in the unit
tests (``docproc_testing.memory``); ``SqlUnit`` is the database's.
"""

from __future__ import annotations

import enum
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from docproc_common.bus import outbox
from docproc_common.bus.delivery import Delivery
from docproc_common.db.models import RagDocument
from docproc_common.documents import fail_document, lock_current_attempt
from docproc_common.errors import AppError, RetryableError
from docproc_common.events import Event
from docproc_common.failures import GaveUp, Retried, Stage

log = logging.getLogger(__name__)

S = TypeVar("S")
S_contra = TypeVar("S_contra", contravariant=True)
E_contra = TypeVar("E_contra", contravariant=True)
AE = TypeVar("AE", bound="AttemptEvent")
E = TypeVar("E")
R = TypeVar("R")
C = TypeVar("C")
T = TypeVar("T")


class Outcome(enum.Enum):
    """How a delivery ended, as ``settled`` is told."""

    WRITTEN = "written"  # this delivery committed the stage's writes
    FAILED = "failed"  # this delivery committed the document's failure (the claim with it)
    PROCESSED = "processed"  # an earlier delivery committed the event (a redelivery)
    SUPERSEDED = "superseded"  # the row was deleted, retried or finished before the read
    OVERTAKEN = "overtaken"  # an other delivery of the event committed it meanwhile
    #: the row was deleted, retried or finished between the read and the write: what
    #: ``compute`` stored under the attempt's keys is nobody's, the stage's to remove
    ABANDONED = "abandoned"


class AttemptEvent(Protocol):
    """What an event of a document's attempt carries (``DocumentAccepted``, ``DocumentParsed``)."""

    @property
    def document_id(self) -> uuid.UUID: ...
    @property
    def attempt_id(self) -> uuid.UUID: ...
    @property
    def collection_name(self) -> str: ...


class Unit(Protocol[S]):
    """One delivery's storage as the runner uses it: sessions, the claim, the attempt's row,
    its failure, the outbox. ``S`` is the session type stages receive."""

    def reading(self) -> AbstractAsyncContextManager[S]:
        """A session that commits nothing."""
        ...

    def writing(self) -> AbstractAsyncContextManager[S]:
        """A transaction: committed when the block ends, rolled back when it raises."""
        ...

    async def processed(self, session: S) -> bool: ...

    async def claim(self, session: S) -> bool:
        """Record the delivery's event as processed; False when it already was."""
        ...

    async def current(
        self, session: S, document_id: uuid.UUID, attempt_id: uuid.UUID
    ) -> RagDocument | None:
        """The row, locked, while it still waits for this attempt."""
        ...

    async def fail(
        self,
        session: S,
        document_id: uuid.UUID,
        attempt_id: uuid.UUID,
        stage: Stage,
        exc: BaseException,
        collection_name: str,
    ) -> bool:
        """Turn the attempt ``error`` (three-part message, ``DocumentFailed``); whether it did."""
        ...

    async def enqueue(self, session: S, event: Event) -> None: ...


class AttemptStage(Protocol[S_contra, E_contra, R, C]):
    """A pipeline stage of a document's attempt (module docstring)."""

    @property
    def fails_at(self) -> Stage:
        """The stage a failure is recorded at (``parsed``, ``indexed``)."""
        ...

    @property
    def refuses(self) -> tuple[type[Exception], ...]:
        """Errors besides a non-retryable ``AppError`` that are the document's own."""
        ...

    async def read(self, session: S_contra, row: RagDocument, event: E_contra) -> R: ...
    async def compute(self, event: E_contra, read: R) -> C: ...
    async def lock(self, session: S_contra, event: E_contra) -> None:
        """In the write's transaction, before the row is locked (module docstring)."""
        ...

    async def write(
        self, session: S_contra, row: RagDocument, event: E_contra, computed: C
    ) -> Event | None: ...
    async def settled(self, event: E_contra, outcome: Outcome) -> None: ...


class ClaimStage(Protocol[S_contra, E_contra, R, C]):
    """A stage with no tracking row: claimed like the others; its errors are the bus's."""

    async def read(self, session: S_contra, event: E_contra) -> R: ...
    async def compute(self, event: E_contra, read: R) -> C: ...
    async def write(self, session: S_contra, event: E_contra, computed: C) -> Event | None: ...
    async def settled(self, event: E_contra, outcome: Outcome) -> None: ...


class UnitStage(Protocol[E_contra]):
    """A stage that commits in several transactions of its own and claims the delivery in
    the last one (``Unit.claim``); ``give_up`` records that its attempts ran out."""

    async def run(self, unit: Unit[AsyncSession], event: E_contra) -> None: ...
    async def give_up(
        self, unit: Unit[AsyncSession], event: E_contra, exc: BaseException
    ) -> None: ...


@dataclass(frozen=True, slots=True)
class SqlUnit:
    """The database's unit of one delivery."""

    sessionmaker: async_sessionmaker[AsyncSession]
    delivery: Delivery

    def reading(self) -> AbstractAsyncContextManager[AsyncSession]:
        return self.sessionmaker()

    @asynccontextmanager
    async def writing(self) -> AsyncIterator[AsyncSession]:
        async with self.sessionmaker() as session, session.begin():
            yield session

    async def processed(self, session: AsyncSession) -> bool:
        return await self.delivery.already_processed(session)

    async def claim(self, session: AsyncSession) -> bool:
        return await self.delivery.claim(session)

    async def current(
        self, session: AsyncSession, document_id: uuid.UUID, attempt_id: uuid.UUID
    ) -> RagDocument | None:
        return await lock_current_attempt(session, document_id, attempt_id)

    async def fail(
        self,
        session: AsyncSession,
        document_id: uuid.UUID,
        attempt_id: uuid.UUID,
        stage: Stage,
        exc: BaseException,
        collection_name: str,
    ) -> bool:
        return await fail_document(session, document_id, attempt_id, stage, exc, collection_name)

    async def enqueue(self, session: AsyncSession, event: Event) -> None:
        await outbox.enqueue(session, event)


async def was_processed(unit: Unit[S]) -> bool:
    """Whether the delivery's event was processed before (its reads can be skipped)."""
    async with unit.reading() as session:
        return await unit.processed(session)


async def commit(unit: Unit[S], write: Callable[[S], Awaitable[T]]) -> T | None:
    """Claim and ``write`` in one transaction: ``write``'s result, or None (nothing written)
    when the event was processed before."""
    async with unit.writing() as session:
        if not await unit.claim(session):
            return None
        return await write(session)


async def _read(unit: Unit[S], stage: AttemptStage[S, AE, R, C], event: AE) -> R | Outcome:
    async with unit.reading() as session:
        if await unit.processed(session):
            return Outcome.PROCESSED
        row = await unit.current(session, event.document_id, event.attempt_id)
        if row is None:
            return Outcome.SUPERSEDED
        return await stage.read(session, row, event)


async def _write(
    unit: Unit[S], stage: AttemptStage[S, AE, R, C], event: AE, computed: C
) -> Outcome:
    async with unit.writing() as session:
        if not await unit.claim(session):
            return Outcome.OVERTAKEN
        await stage.lock(session, event)
        row = await unit.current(session, event.document_id, event.attempt_id)
        if row is None:
            return Outcome.ABANDONED  # only the claim commits: a redelivery has nothing to do
        out = await stage.write(session, row, event, computed)
        if out is not None:
            await unit.enqueue(session, out)
        return Outcome.WRITTEN


async def _attempt(unit: Unit[S], stage: AttemptStage[S, AE, R, C], event: AE) -> Outcome:
    read = await _read(unit, stage, event)
    if isinstance(read, Outcome):
        return read
    computed = await stage.compute(event, read)
    return await _write(unit, stage, event, computed)


def _own(stage: AttemptStage[S, AE, R, C], exc: Exception) -> bool:
    """Whether ``exc`` is the document's own: the same bytes would fail the same way."""
    if isinstance(exc, AppError) and not isinstance(exc, RetryableError):
        return True
    return isinstance(exc, stage.refuses)


async def record(
    unit: Unit[S], stage: AttemptStage[S, AE, R, C], event: AE, exc: BaseException
) -> Outcome:
    """Claim and record ``exc`` as the attempt's failure at ``stage.fails_at``, then settle:
    FAILED, or OVERTAKEN when the event was processed before (recorded once)."""

    async def fail(session: S) -> bool:
        return await unit.fail(
            session, event.document_id, event.attempt_id, stage.fails_at, exc, event.collection_name
        )

    outcome = Outcome.OVERTAKEN if await commit(unit, fail) is None else Outcome.FAILED
    await stage.settled(event, outcome)
    return outcome


async def run(unit: Unit[S], stage: AttemptStage[S, AE, R, C], event: AE) -> Outcome:
    """One delivery of ``event`` through ``stage`` (module docstring); anything but the
    document's own error propagates for the bus to retry."""
    try:
        outcome = await _attempt(unit, stage, event)
    except Exception as exc:
        if not _own(stage, exc):
            raise
        log.warning("%s %s failed: %s", stage.fails_at.value, event.document_id, exc)
        return await record(unit, stage, event, exc)
    await stage.settled(event, outcome)
    return outcome


async def give_up(
    unit: Unit[S], stage: AttemptStage[S, AE, R, C], event: AE, exc: BaseException, attempts: int
) -> Outcome:
    """Every attempt failed: the document ends ``error`` instead of ``processing`` for ever,
    saying what a ``Retried`` failure means or how often it failed on something transient."""
    cause = exc.final if isinstance(exc, Retried) else GaveUp(stage.fails_at, exc, attempts)
    return await record(unit, stage, event, cause)


async def run_claimed(unit: Unit[S], stage: ClaimStage[S, E, R, C], event: E) -> Outcome:
    """One delivery through a ``ClaimStage``: nothing (PROCESSED) when an earlier delivery
    committed it, else read -> compute -> write committed with the claim."""
    if await was_processed(unit):
        outcome = Outcome.PROCESSED
    else:
        async with unit.reading() as session:
            read = await stage.read(session, event)
        computed = await stage.compute(event, read)

        async def write(session: S) -> Outcome:
            out = await stage.write(session, event, computed)
            if out is not None:
                await unit.enqueue(session, out)
            return Outcome.WRITTEN

        outcome = await commit(unit, write) or Outcome.OVERTAKEN
    await stage.settled(event, outcome)
    return outcome


ST = TypeVar("ST")


class _OnDatabase(Generic[ST]):
    """A stage of type ``ST`` on the database: a ``SqlUnit`` for each delivery."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], stage: ST) -> None:
        self._sessionmaker = sessionmaker
        self.stage = stage

    def _unit(self, delivery: Delivery) -> SqlUnit:
        return SqlUnit(self._sessionmaker, delivery)


class AttemptHandler(_OnDatabase[AttemptStage[AsyncSession, AE, R, C]]):
    """An ``AttemptStage`` on the database as the bus calls it: the handler of its event type
    in ``bus.topics.subscriptions``, which takes its ``give_up``."""

    async def __call__(self, event: AE, delivery: Delivery) -> None:
        await run(self._unit(delivery), self.stage, event)

    async def give_up(self, event: AE, delivery: Delivery, exc: BaseException) -> None:
        await give_up(self._unit(delivery), self.stage, event, exc, delivery.attempt)


class ClaimHandler(_OnDatabase[ClaimStage[AsyncSession, E, R, C]]):
    """A ``ClaimStage`` on the database as the bus calls it."""

    async def __call__(self, event: E, delivery: Delivery) -> None:
        await run_claimed(self._unit(delivery), self.stage, event)


class UnitHandler(_OnDatabase[UnitStage[E]]):
    """A ``UnitStage`` on the database as the bus calls it: the unit is built here."""

    async def __call__(self, event: E, delivery: Delivery) -> None:
        await self.stage.run(self._unit(delivery), event)

    async def give_up(self, event: E, delivery: Delivery, exc: BaseException) -> None:
        await self.stage.give_up(self._unit(delivery), event, exc)
