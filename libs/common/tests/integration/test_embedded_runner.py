"""The embedded bus on the real database: a dead row keeps its failure as the DLQ headers do;
a consumer handles a batch of rows at once."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from docproc_common.bus.delivery import Delivery, Handler, Subscription
from docproc_common.bus.embedded import EmbeddedStageRunner
from docproc_common.db.models import EmbeddedDelivery
from docproc_common.errors import PermanentError
from docproc_common.events import CollectionDeleted
from docproc_common.observability import BusMetrics
from docproc_common.runtime import Runtime
from docproc_testing.embedded import delivery
from docproc_testing.runtime import fresh_runtime

pytestmark = pytest.mark.integration


def svc_runner(
    runtime: Runtime, handler: Handler, metrics: str, **options: int
) -> EmbeddedStageRunner:
    """The consumer ``svc`` of teardown events on the embedded bus."""
    return EmbeddedStageRunner(
        "svc",
        [Subscription(CollectionDeleted.TOPIC, handler)],
        runtime.sessionmaker,
        BusMetrics(metrics),
        **options,
    )


def refuse() -> None:
    raise PermanentError("GET https://u:pwSECRET@h.internal/x?sig=SIGSECRET refused")


async def test_a_dead_row_has_the_class_a_sanitised_message_and_the_frames(
    tmp_path: Path,
) -> None:
    async def handler(_e: CollectionDeleted, _d: Delivery) -> None:
        refuse()

    event = CollectionDeleted(teardown_id=uuid.uuid4(), collection_name="c_dead")
    async with fresh_runtime(tmp_path) as runtime:
        async with runtime.sessionmaker() as s, s.begin():
            row = delivery("svc", event)
            s.add(row)
        runner = svc_runner(runtime, handler, "svc_embedded_dead")
        assert await runner.process_batch()
        async with runtime.sessionmaker() as s:
            dead = await s.get(EmbeddedDelivery, row.id)
            assert dead is not None
    assert dead.dead
    message, frames = (dead.last_error or "").split("\n")
    assert message == "PermanentError: GET https://<redacted>@h.internal/x?<redacted> refused"
    line = refuse.__code__.co_firstlineno + 1
    assert frames.endswith(f":handler > integration/test_embedded_runner.py:{line}:refuse")


async def test_a_batch_of_rows_is_handled_together(tmp_path: Path) -> None:
    """With concurrency 3 the three due rows are claimed at once and their handlers overlap."""
    started: list[uuid.UUID] = []
    everyone = asyncio.Event()

    async def handler(e: CollectionDeleted, _d: Delivery) -> None:
        started.append(e.teardown_id)
        if len(started) == 3:
            everyone.set()
        await asyncio.wait_for(everyone.wait(), 10)  # only returns if all three run at once

    events = [CollectionDeleted(teardown_id=uuid.uuid4(), collection_name="c") for _ in range(3)]
    async with fresh_runtime(tmp_path) as runtime:
        async with runtime.sessionmaker() as s, s.begin():
            rows = [delivery("svc", e) for e in events]
            s.add_all(rows)
        runner = svc_runner(runtime, handler, "svc_embedded_batch", concurrency=3)
        assert await runner.process_batch()
        assert not await runner.process_batch()  # nothing left
        async with runtime.sessionmaker() as s:
            done = [await s.get(EmbeddedDelivery, row.id) for row in rows]
    assert sorted(started) == sorted(e.teardown_id for e in events)
    assert all(d is not None and d.done_at is not None and not d.dead for d in done)
