"""A stage's unit of work: the claim, the current-attempt lock, the handler's writes, one commit.

A stage handler reads outside any transaction (a slow parse or embedding holds no
lock), then hands its writes to the unit as a plain function of the session (and of
the locked tracking row): the unit opens the transaction, claims the delivery
(``Delivery.claim``), locks the row if it still waits for this attempt
(``documents.lock_current_attempt``), runs the writes, whose output events go to the
outbox in that very transaction (``bus.outbox.enqueue``), and commits. Nothing is
written when the event was processed before; when the attempt is no longer current
only the claim commits. The consumer commits the offset after the unit returns.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from docproc_common.bus.delivery import Delivery
from docproc_common.db.models import RagDocument
from docproc_common.documents import fail_document, lock_current_attempt
from docproc_common.failures import Stage

T = TypeVar("T")


class Stale(enum.Enum):
    """Why a read of the current attempt found nothing to work on."""

    PROCESSED = "processed"  # this consumer committed the event before (a redelivery)
    SUPERSEDED = "superseded"  # the row was deleted, retried or finished meanwhile


@dataclass(frozen=True, slots=True)
class Unit:
    """The unit of work of one delivery: ``commit`` claims it and runs the writes."""

    sessionmaker: async_sessionmaker[AsyncSession]
    delivery: Delivery

    async def processed(self) -> bool:
        """Whether the event was processed before: a handler skips its reads then."""
        async with self.sessionmaker() as session:
            return await self.delivery.already_processed(session)

    async def commit(self, write: Callable[[AsyncSession], Awaitable[T]]) -> T | None:
        """Claim, ``write``, commit: ``write``'s result, or None (nothing written) when the
        event was processed before. ``write`` returns something other than None."""
        async with self.sessionmaker() as session, session.begin():
            if not await self.delivery.claim(session):
                return None
            return await write(session)


@dataclass(frozen=True, slots=True)
class AttemptUnit(Unit):
    """A pipeline stage's unit: its writes run only while the row waits for this attempt."""

    document_id: uuid.UUID
    attempt_id: uuid.UUID

    async def read(self, read: Callable[[AsyncSession, RagDocument], Awaitable[T]]) -> T | Stale:
        """``read`` of the current attempt's row, in a session that commits nothing."""
        async with self.sessionmaker() as session:
            if await self.delivery.already_processed(session):
                return Stale.PROCESSED
            doc = await lock_current_attempt(session, self.document_id, self.attempt_id)
            if doc is None:
                return Stale.SUPERSEDED
            return await read(session, doc)

    async def commit_attempt(
        self, write: Callable[[AsyncSession, RagDocument], Awaitable[T]]
    ) -> T | None:
        """Claim, lock the current attempt's row, ``write`` it, commit: ``write``'s result, or
        None when the event was processed before or the attempt is no longer current (the
        claim then commits alone: a redelivery has nothing to do either)."""

        async def locked(session: AsyncSession) -> T | None:
            doc = await lock_current_attempt(session, self.document_id, self.attempt_id)
            return None if doc is None else await write(session, doc)

        return await self.commit(locked)

    async def commit_failure(
        self, stage: Stage, exc: BaseException, collection_name: str
    ) -> bool | None:
        """Claim and turn the attempt ``error`` at ``stage`` (``documents.fail_document``), commit:
        whether this recorded the failure, or None when the event was processed before."""
        return await self.commit(
            lambda s: fail_document(
                s, self.document_id, self.attempt_id, stage, exc, collection_name
            )
        )
