"""The sync stage's decisions on the in-memory unit (``docproc_testing.memory``) and in-memory
runs: a request naming no source and a run whose attempts ran out end the run's log
``error`` with the claim, once; a redelivery after the claim starts no run."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import pytest
from docproc_common.bus.delivery import Delivery
from docproc_common.bus.stage import Unit
from docproc_common.events import SyncRequested
from docproc_sync.handler import NO_SOURCE, SyncStage
from docproc_testing.memory import Memory


@dataclass
class MemoryRuns:
    """``handler.Runs`` in lists: the runs started and the logs ended ``error``. A run claims
    the delivery in its terminal transaction, as ``service.run_source`` does."""

    started: list[tuple[uuid.UUID, uuid.UUID, str | None]] = field(default_factory=list)
    failed: dict[uuid.UUID, str] = field(default_factory=dict)
    lost: BaseException | None = None  # what every run meets (the database went away)

    async def run(
        self,
        unit: Unit[Memory],
        source_id: uuid.UUID,
        log_id: uuid.UUID,
        resume_after: str | None,
    ) -> str:
        self.started.append((source_id, log_id, resume_after))
        if self.lost is not None:
            raise self.lost
        async with unit.writing() as session:
            await unit.claim(session)
        return "done"

    async def fail(self, _session: Memory, log_id: uuid.UUID, error_message: str) -> None:
        self.failed[log_id] = error_message


@dataclass
class Setup:
    memory: Memory = field(default_factory=Memory)
    runs: MemoryRuns = field(default_factory=MemoryRuns)

    @property
    def stage(self) -> SyncStage[Memory]:
        return SyncStage(self.runs)


@pytest.fixture
def setup() -> Setup:
    return Setup()


def delivery(event_id: uuid.UUID | None = None, attempt: int = 1) -> Delivery:
    return Delivery("sync", SyncRequested.TOPIC, event_id or uuid.uuid4(), attempt)


def requested(source: uuid.UUID | None, resume_after: str | None = None) -> SyncRequested:
    return SyncRequested(
        sync_log_id=uuid.uuid4(),
        collection_name="c",
        knowledge_base_id=uuid.uuid4(),
        connector="local",
        config={"path": "/srv/docs"},
        sync_mode="incremental",
        source_id=source,
        resume_after=resume_after,
    )


async def test_a_run_is_started_with_its_slice_and_claims_the_delivery(setup: Setup) -> None:
    event = requested(uuid.uuid4(), resume_after="b/readme.md")
    d = delivery()
    await setup.stage.run(setup.memory.unit(d), event)
    assert setup.runs.started == [(event.source_id, event.sync_log_id, "b/readme.md")]
    assert setup.memory.processed == {("sync", d.event_id)} and setup.runs.failed == {}


async def test_a_redelivery_after_the_claim_starts_no_run(setup: Setup) -> None:
    event, d = requested(uuid.uuid4()), delivery()
    await setup.stage.run(setup.memory.unit(d), event)
    await setup.stage.run(setup.memory.unit(delivery(d.event_id, attempt=2)), event)
    assert len(setup.runs.started) == 1


async def test_a_request_naming_no_source_ends_its_log_error_with_the_claim(setup: Setup) -> None:
    event = requested(None)
    d = delivery()
    await setup.stage.run(setup.memory.unit(d), event)
    assert setup.runs.failed == {event.sync_log_id: NO_SOURCE} and setup.runs.started == []
    assert setup.memory.processed == {("sync", d.event_id)}


async def test_a_run_that_lost_the_database_is_retried_then_given_up_once(setup: Setup) -> None:
    """The run's error is the bus's to retry (nothing claimed); when the attempts run out,
    ``give_up`` ends the log ``error`` naming the error's class only, with the claim, and a
    second ``give_up`` of the same event records nothing."""
    setup.runs.lost = ConnectionResetError("connection to 10.0.0.7:5432 reset")
    event, d = requested(uuid.uuid4()), delivery(attempt=5)
    with pytest.raises(ConnectionResetError):
        await setup.stage.run(setup.memory.unit(d), event)
    assert setup.memory.processed == set() and setup.runs.failed == {}
    await setup.stage.give_up(setup.memory.unit(d), event, setup.runs.lost)
    assert setup.runs.failed == {
        event.sync_log_id: (
            "The run failed (ConnectionResetError); the next run picks up where it stopped"
        )
    }
    assert setup.memory.processed == {("sync", d.event_id)}
    setup.runs.failed.clear()
    await setup.stage.give_up(setup.memory.unit(d), event, setup.runs.lost)
    assert setup.runs.failed == {}  # claimed already: recorded once
