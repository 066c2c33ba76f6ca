"""The sync service as a ``ServiceSpec``."""

from __future__ import annotations

from docproc_common.bus.delivery import Subscription
from docproc_common.events import SyncRequested
from docproc_common.runtime import Runtime, ServiceSpec

from docproc_sync.handler import SyncHandler

NAME = "sync"


def build(runtime: Runtime) -> ServiceSpec:
    return ServiceSpec(
        name=NAME, subscriptions=[Subscription(SyncRequested.TOPIC, SyncHandler(runtime))]
    )
