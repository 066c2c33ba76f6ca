"""One run per source, the scheduler, interrupted runs, a source whose knowledge base is gone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from docproc_common.connectors.runs import lock_key
from docproc_common.db.models import KnowledgeBase, SyncLog, SyncSource
from docproc_common.events import SyncRequested
from docproc_sync.service import run_source, schedule_once
from docproc_sync.testing import SyncBed
from sqlalchemy import select, text

pytestmark = pytest.mark.integration


def share(tmp_path: Path, files: int = 2) -> Path:
    root = tmp_path / "share"
    root.mkdir(exist_ok=True)
    for n in range(files):
        (root / f"f{n}.md").write_text(f"file {n}")
    return root


async def local_source(bed: SyncBed, tmp_path: Path) -> tuple[KnowledgeBase, SyncSource]:
    """An app-wide base and its source on a local share of two files."""
    kb = await bed.kb(scope="app", organization_id=None)
    return kb, await bed.source(kb, "local", {"path": str(share(tmp_path))})


async def logs_of(bed: SyncBed, source_id: object) -> list[SyncLog]:
    async with bed.runtime.sessionmaker() as s:
        rows = await s.execute(
            select(SyncLog).where(SyncLog.source_id == source_id).order_by(SyncLog.started_at)
        )
        return list(rows.scalars())


async def test_a_second_run_while_one_holds_the_lock_is_skipped(
    bed: SyncBed, tmp_path: Path
) -> None:
    kb, src = await local_source(bed, tmp_path)
    async with bed.runtime.engine.connect() as other:
        await other.execute(text("SELECT pg_advisory_lock(:k)"), {"k": lock_key(src.id)})
        await other.commit()
        log = await bed.run(src.id)
        assert log.status == "skipped"
        assert "in progress" in (log.error_message or "")
        await other.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": lock_key(src.id)})
        await other.commit()
    assert await bed.documents(kb.id) == []
    assert (await bed.run(src.id)).status == "done"


async def test_scheduler_queues_due_sources_once(bed: SyncBed, tmp_path: Path) -> None:
    kb, src = await local_source(bed, tmp_path)
    await bed.set_source(src.id, schedule_seconds=3600, last_run_at=None)
    since = await bed.last_event_id()
    await schedule_once(bed.runtime)
    await schedule_once(bed.runtime)  # the queued run is not queued again
    logs = await logs_of(bed, src.id)
    assert [log.status for log in logs] == ["queued"]
    events = await bed.events(SyncRequested.TOPIC, since)
    assert [e["source_id"] for e in events if e["source_id"] == str(src.id)] == [str(src.id)]
    await run_source(bed.runtime, bed.settings, src.id, logs[0].id)
    await schedule_once(bed.runtime)  # ran just now: not due for an hour
    assert len(await logs_of(bed, src.id)) == 1
    await bed.set_source(src.id, last_run_at=datetime.now(UTC) - timedelta(hours=2))
    await schedule_once(bed.runtime)
    assert [log.status for log in await logs_of(bed, src.id)] == ["done", "queued"]


async def test_an_interrupted_run_is_marked_when_the_scheduler_comes_by(
    bed: SyncBed, tmp_path: Path
) -> None:
    kb, src = await local_source(bed, tmp_path)
    log_id = await bed.queue(src.id)
    async with bed.runtime.sessionmaker() as s, s.begin():
        log = await s.get(SyncLog, log_id)
        assert log is not None
        log.status = "running"  # a worker died mid-run: its lock went with its connection
    await bed.set_source(
        src.id, schedule_seconds=300, last_run_at=datetime.now(UTC) - timedelta(hours=1)
    )
    await schedule_once(bed.runtime)
    statuses = {log.id: log.status for log in await logs_of(bed, src.id)}
    assert statuses.pop(log_id) == "error"
    assert list(statuses.values()) == ["queued"]


async def test_a_source_of_a_deleted_knowledge_base_does_not_run(
    bed: SyncBed, tmp_path: Path
) -> None:
    kb, src = await local_source(bed, tmp_path)
    log_id = await bed.queue(src.id)
    await bed.set_source(src.id, knowledge_base_id=None, collection_name=None, active=False)
    await run_source(bed.runtime, bed.settings, src.id, log_id)
    log = await bed.log(log_id)
    assert log.status == "error"
    assert "deactivated" in (log.error_message or "")
    assert await bed.documents(kb.id) == []


async def test_a_long_run_continues_in_slices_counting_each_file_once(
    bed: SyncBed, tmp_path: Path
) -> None:
    sliced = SyncBed(bed.runtime, bed.settings.model_copy(update={"run_slice_s": 1e-6}))
    root = share(tmp_path, files=6)
    kb = await sliced.kb(scope="app", organization_id=None)
    src = await sliced.source(kb, "local", {"path": str(root)})
    since = await sliced.last_event_id()
    log_id = await sliced.queue(src.id)
    statuses = await sliced.drive(src.id, log_id)
    assert statuses == ["continued"] * 5 + ["done"]
    log = await sliced.log(log_id)
    assert (log.status, log.total_files, log.ingested, log.skipped) == ("done", 6, 6, 0)
    resumes = [e["resume_after"] for e in await sliced.events(SyncRequested.TOPIC, since)]
    assert resumes == [None] + [str(root / f"f{n}.md") for n in range(5)]
    await sliced.finish_pipeline(kb.id)
    (root / "f2.md").unlink()
    again = await sliced.run(src.id)
    assert (again.ingested, again.skipped, again.deleted) == (0, 5, 1)
    assert len(await sliced.documents(kb.id)) == 5
