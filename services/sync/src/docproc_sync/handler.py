"""``SyncRequested`` -> one slice of one run of the source it names (``service.run_source``).

The run is idempotent by construction (claims and stored hashes skip what is
already there), so a redelivery after a crash re-runs and finishes what is
missing; so does the retry of a run that lost its database connection (a reset, a
restart), which the bus makes until its attempts are spent (``give_up``: the run
ends ``error``). A run commits in several transactions, so it is a ``UnitStage``: it
receives the delivery's unit and claims it in the run's terminal transaction, with the
final log row or with the event that continues a long run in its next slice
(``resume_after``), so no message holds the consumer longer than a slice.
"""

from __future__ import annotations

import logging

from docproc_common.bus.stage import Unit, commit, was_processed
from docproc_common.events import SyncRequested
from docproc_common.runtime import Runtime
from docproc_common.settings import SyncSettings
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_sync import repository
from docproc_sync.service import run_failed, run_source

log = logging.getLogger(__name__)


class SyncStage:
    def __init__(self, runtime: Runtime, settings: SyncSettings) -> None:
        self._runtime = runtime
        self._settings = settings

    async def run(self, unit: Unit[AsyncSession], event: SyncRequested) -> None:
        if await was_processed(unit):
            return
        if event.source_id is None:
            await commit(
                unit,
                lambda s: repository.finish_log(
                    s,
                    event.sync_log_id,
                    "error",
                    error_message="A sync run names its source; this request named none",
                ),
            )
            return
        status = await run_source(
            self._runtime,
            self._settings,
            event.source_id,
            event.sync_log_id,
            resume_after=event.resume_after,
            unit=unit,
        )
        log.info("sync run %s of source %s: %s", event.sync_log_id, event.source_id, status)

    async def give_up(
        self, unit: Unit[AsyncSession], event: SyncRequested, exc: BaseException
    ) -> None:
        """Every attempt of the run lost the database (a run retries only that): it ends
        ``error`` instead of ``running`` for ever; the next run picks up where it stopped."""
        await commit(
            unit,
            lambda s: repository.finish_log(
                s, event.sync_log_id, "error", error_message=run_failed(exc)
            ),
        )
