"""The scheduled runs of every evaluation set, and the gauge they feed
(``docproc_retrieval_ndcg_at_10{collection_id, mode}``): a background loop of each upload
replica, the edge that owns its transactions as a route does.

Every ``EVALUATIONS__CHECK_INTERVAL_S`` a replica runs each set with no scheduled run in the
last ``EVALUATIONS__SCHEDULE_INTERVAL_S``; the set's run lock (``service.exclusive_run``)
and a second look under it make one run of a set per interval whichever replica gets
there first. A run that fails is kept with its error, so the set waits for the next
interval rather than failing on every check. Then every replica sets the gauge from the
newest scheduled run of each set that scored (``service.gauge_values``), so each exports
the same figures whichever ran them.
"""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime, timedelta

from docproc_common.embedding.client import EmbeddingClients
from docproc_common.errors import NotFound
from docproc_common.periodic import Task, periodic
from docproc_common.runtime import Runtime

from docproc_upload.evaluations import repository, service
from docproc_upload.metrics import RETRIEVAL_NDCG
from docproc_upload.search.service import PlanCache

log = logging.getLogger(__name__)


async def run_scheduled(
    runtime: Runtime,
    clients: EmbeddingClients,
    plans: PlanCache | None,
    evaluation_id: uuid.UUID,
    before: datetime,
) -> bool:
    """Run one set if it is still due (no scheduled run since ``before``) and no other run
    holds it; whether it ran (and was kept, scored or failed)."""
    try:
        async with service.exclusive_run(runtime, evaluation_id):
            async with runtime.sessionmaker() as session:
                error: Exception | None = None
                async with session.begin():
                    found = await repository.due_evaluation(session, evaluation_id, before)
                    if found is None:
                        return False
                    evaluation, kb = found
                    started = datetime.now(UTC)
                    try:
                        run = await service.plan_run(session, clients, kb, evaluation)
                    except Exception as exc:  # noqa: BLE001 - kept with the run, as below
                        error = exc
                if error is None:
                    try:
                        scored = await service.score(runtime, run, plans)
                    except Exception as exc:  # noqa: BLE001 - one base's failure stops no other
                        error = exc
                async with session.begin():
                    if error is None:
                        await service.record_run(session, None, run, scored)
                    else:
                        log.warning(
                            "the scheduled run of evaluation %s failed",
                            evaluation_id,
                            exc_info=error,
                        )
                        await service.record_failure(session, kb, evaluation, started, error)
    except (service.RunInProgress, NotFound):  # another run holds it; it was deleted meanwhile
        return False
    return True


async def refresh_gauge(runtime: Runtime) -> None:
    async with runtime.sessionmaker() as session:
        values = service.gauge_values(await repository.latest_scheduled_scores(session))
    RETRIEVAL_NDCG.clear()
    for (kb_id, mode), value in values.items():
        RETRIEVAL_NDCG.labels(kb_id, mode).set(value)


async def run_due(
    runtime: Runtime, clients: EmbeddingClients, plans: PlanCache | None, interval_s: float
) -> int:
    """The gauge refreshed from the runs kept (a replica just started exports the figures
    at once, not after its first runs), every set due now run (``run_scheduled``), then the
    gauge refreshed again; how many ran."""
    await refresh_gauge(runtime)
    before = datetime.now(UTC) - timedelta(seconds=interval_s)
    async with runtime.sessionmaker() as session:
        due = await repository.due_evaluations(session, before)
    ran = 0
    for evaluation_id in due:
        ran += await run_scheduled(runtime, clients, plans, evaluation_id, before)
    await refresh_gauge(runtime)
    return ran


def scheduled_runs(runtime: Runtime, clients: EmbeddingClients, plans: PlanCache) -> list[Task]:
    """The loop, when ``EVALUATIONS__SCHEDULE_INTERVAL_S`` asks for one."""
    settings = runtime.settings.evaluations
    if not settings.schedule_interval_s:
        return []

    async def tick() -> None:
        await run_due(runtime, clients, plans, settings.schedule_interval_s)

    return [periodic("the scheduled evaluation runs", tick, settings.check_interval_s, log)]
