"""``SyncRequested`` -> one slice of one run of the source it names (``service.run_source``).

The run is idempotent by construction (claims and stored hashes skip what is
already there), so a redelivery after a crash re-runs and finishes what is
missing; so does the retry of a run that lost its database connection (a reset, a
restart), which the bus makes until its attempts are spent (``give_up``: the run
ends ``error``). A run commits in several transactions, so it is a ``UnitStage``: it
receives the delivery's unit and claims it in the run's terminal transaction, with the
final log row or with the event that continues a long run in its next slice
(``resume_after``), so no message holds the consumer longer than a slice. Its runs and
their logs go through ``Runs`` (``service.SqlRuns``), so its decisions are unit tests on the
in-memory unit (``tests/unit/test_sync_stage.py``).
"""

from __future__ import annotations

import logging
import uuid
from typing import Generic, Protocol, TypeVar

from docproc_common.bus.stage import Unit, commit, was_processed
from docproc_common.events import SyncRequested

from docproc_sync.failures import run_failed

log = logging.getLogger(__name__)

S = TypeVar("S")

NO_SOURCE = "A sync run names its source; this request named none"


class Runs(Protocol[S]):
    """Where the sync stage's runs go: ``service.SqlRuns``, or a stage test's in memory."""

    async def run(
        self, unit: Unit[S], source_id: uuid.UUID, log_id: uuid.UUID, resume_after: str | None
    ) -> str:
        """One slice of the run (``service.run_source``), claimed in its terminal transaction;
        its status."""
        ...

    async def fail(self, session: S, log_id: uuid.UUID, error_message: str) -> None:
        """End the run's log ``error`` saying ``error_message``."""
        ...


class SyncStage(Generic[S]):
    def __init__(self, runs: Runs[S]) -> None:
        self._runs = runs

    async def run(self, unit: Unit[S], event: SyncRequested) -> None:
        if await was_processed(unit):
            return
        if event.source_id is None:
            await commit(unit, lambda s: self._runs.fail(s, event.sync_log_id, NO_SOURCE))
            return
        status = await self._runs.run(unit, event.source_id, event.sync_log_id, event.resume_after)
        log.info("sync run %s of source %s: %s", event.sync_log_id, event.source_id, status)

    async def give_up(self, unit: Unit[S], event: SyncRequested, exc: BaseException) -> None:
        """Every attempt of the run lost the database (a run retries only that): it ends
        ``error`` instead of ``running`` for ever; the next run picks up where it stopped."""
        await commit(unit, lambda s: self._runs.fail(s, event.sync_log_id, run_failed(exc)))
