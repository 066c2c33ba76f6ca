"""The sync service as a ``ServiceSpec``: the run consumer, the scheduler and the reconciler."""

from __future__ import annotations

import logging

from docproc_common.bus.stage import UnitHandler
from docproc_common.bus.topics import subscriptions
from docproc_common.events import SyncRequested
from docproc_common.periodic import periodic
from docproc_common.runtime import Runtime, ServiceSpec

from docproc_sync.handler import SyncStage
from docproc_sync.service import SqlRuns, reconcile_once, schedule_once

NAME = "sync"
log = logging.getLogger(__name__)


def build(runtime: Runtime) -> ServiceSpec:
    settings = runtime.settings.sync
    handler = UnitHandler(runtime.sessionmaker, SyncStage(SqlRuns(runtime, settings)))
    return ServiceSpec(
        name=NAME,
        keys=frozenset({"vault"}),  # the sources' credentials, the embedding keys
        subscriptions=subscriptions(NAME, {SyncRequested: handler}),
        tasks=[
            periodic(
                "the sync scheduler",
                lambda: schedule_once(runtime),
                settings.scheduler_interval_s,
                log,
            ),
            periodic(
                "the sync reconciler",
                lambda: reconcile_once(runtime),
                settings.reconcile_interval_s,
                log,
            ),
        ],
    )
