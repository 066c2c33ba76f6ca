"""Retiring earlier failed attempts: by address, error rows only, in the row's own scope; and a
stage's unit of work on the database (``bus.stage.SqlUnit`` under ``bus.stage.run``): claimed
once, written only for the current attempt."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import pytest
from docproc_common.bus.delivery import Delivery
from docproc_common.bus.stage import Outcome, SqlUnit, run
from docproc_common.db.engine import create_engine, create_sessionmaker
from docproc_common.db.models import DocumentStatus, RagDocument
from docproc_common.documents import fail_document
from docproc_common.failures import Stage
from docproc_common.settings import DatabaseSettings
from docproc_testing.db import create_test_database
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

pytestmark = pytest.mark.integration


@pytest.fixture
async def sessionmaker(infra: dict[str, str]) -> AsyncIterator[object]:
    engine = create_engine(DatabaseSettings(url=await create_test_database(infra["DATABASE__URL"])))
    yield create_sessionmaker(engine)
    await engine.dispose()


def row(
    kb: uuid.UUID | None, path: str | None, status: str, name: str = "readme.md"
) -> RagDocument:
    return RagDocument(
        collection_name="c",
        knowledge_base_id=kb,
        filename=name,
        filetype="md",
        status=status,
        source_path=path,
        attempt_id=uuid.uuid4(),
    )


async def test_a_failure_retires_only_earlier_failed_rows_of_the_same_address(
    sessionmaker: object,
) -> None:
    kb, other_kb = uuid.uuid4(), uuid.uuid4()
    rows = {
        "old_error": row(kb, "s3://b/a/readme.md", DocumentStatus.ERROR),
        "live_attempt": row(kb, "s3://b/a/readme.md", DocumentStatus.PROCESSING),
        "done": row(kb, "s3://b/a/readme.md", DocumentStatus.DONE),
        "same_name_other_address": row(kb, "s3://b/b/readme.md", DocumentStatus.ERROR),
        "other_kb": row(other_kb, "s3://b/a/readme.md", DocumentStatus.ERROR),
        "upload_no_address": row(kb, None, DocumentStatus.ERROR),
        "new": row(kb, "s3://b/a/readme.md", DocumentStatus.PROCESSING),
    }
    async with sessionmaker() as s, s.begin():  # type: ignore[operator]
        s.add_all(rows.values())
    new = rows["new"]
    async with sessionmaker() as s, s.begin():  # type: ignore[operator]
        assert await fail_document(s, new.id, new.attempt_id, Stage.PARSE, ValueError("boom"), "c")
    async with sessionmaker() as s:  # type: ignore[operator]
        left = {r.id for r in (await s.execute(select(RagDocument))).scalars()}
        new_row = await s.get(RagDocument, new.id)
    assert rows["old_error"].id not in left
    assert left == {r.id for k, r in rows.items() if k != "old_error"}
    assert new_row is not None
    assert new_row.status == DocumentStatus.ERROR
    assert new_row.error_message == (
        "The document could not be parsed (ValueError) - check that the file opens and is a supported "
        "format, then retry the upload. The worker log has the full error."
    )


async def test_the_first_failure_recorded_keeps_the_row(sessionmaker: object) -> None:
    doc = row(None, None, DocumentStatus.PROCESSING)
    async with sessionmaker() as s, s.begin():  # type: ignore[operator]
        s.add(doc)
    async with sessionmaker() as s, s.begin():  # type: ignore[operator]
        assert await fail_document(s, doc.id, doc.attempt_id, Stage.PARSE, KeyError("x"), "c")
    async with sessionmaker() as s, s.begin():  # type: ignore[operator]
        assert not await fail_document(s, doc.id, doc.attempt_id, Stage.INDEX, TimeoutError(), "c")
    async with sessionmaker() as s:  # type: ignore[operator]
        stored = await s.get(RagDocument, doc.id)
    assert stored is not None
    assert "(KeyError)" in (stored.error_message or "")


@dataclass(frozen=True)
class Attempt:
    document_id: uuid.UUID
    attempt_id: uuid.UUID
    collection_name: str = "c"


class Probe:
    """A stage that reads the row's filename and counts its writes on the row."""

    fails_at = Stage.PARSE
    refuses: tuple[type[Exception], ...] = ()

    def __init__(self, meanwhile: Callable[[], Awaitable[None]] | None = None) -> None:
        self.read_names: list[str] = []
        self.writes: list[uuid.UUID] = []
        self._meanwhile = meanwhile

    async def read(self, _s: AsyncSession, locked: RagDocument, _e: Attempt) -> str:
        self.read_names.append(locked.filename)
        return locked.filename

    async def compute(self, _e: Attempt, _name: str) -> None:
        if self._meanwhile is not None:
            await self._meanwhile()

    async def lock(self, _s: AsyncSession, _e: Attempt) -> None:
        pass

    async def write(self, _s: AsyncSession, locked: RagDocument, _e: Attempt, _c: None) -> None:
        self.writes.append(locked.id)
        locked.chunk_count = len(self.writes)

    async def settled(self, _e: Attempt, _outcome: Outcome) -> None:
        pass


async def test_a_unit_writes_the_current_attempt_once(sessionmaker: object) -> None:
    doc = row(None, None, DocumentStatus.PROCESSING)
    async with sessionmaker() as s, s.begin():  # type: ignore[operator]
        s.add(doc)
    assert doc.attempt_id is not None
    attempt = Attempt(doc.id, doc.attempt_id)
    delivery = Delivery("test", "t", uuid.uuid4(), 1)
    unit = SqlUnit(sessionmaker, delivery)  # type: ignore[arg-type]
    stage = Probe()

    assert await run(unit, stage, attempt) is Outcome.WRITTEN
    assert stage.read_names == ["readme.md"]
    assert await run(unit, stage, attempt) is Outcome.PROCESSED  # a redelivery writes nothing
    retried = SqlUnit(sessionmaker, Delivery("test", "t", uuid.uuid4(), 1))  # type: ignore[arg-type]
    assert await run(retried, stage, Attempt(doc.id, uuid.uuid4())) is Outcome.SUPERSEDED

    async def retry_meanwhile() -> None:
        async with sessionmaker() as s, s.begin():  # type: ignore[operator]
            stored = await s.get(RagDocument, doc.id)
            stored.status = DocumentStatus.PROCESSING
            stored.attempt_id = uuid.uuid4()

    overtaken = SqlUnit(sessionmaker, Delivery("test", "t", uuid.uuid4(), 1))  # type: ignore[arg-type]
    raced = Probe(retry_meanwhile)
    # another attempt between the read and the write: only the claim commits
    assert await run(overtaken, raced, attempt) is Outcome.ABANDONED
    async with sessionmaker() as s:  # type: ignore[operator]
        stored = await s.get(RagDocument, doc.id)
        claims = await s.scalar(select(func.count()).select_from(text("processed_events")))
    assert stage.writes == [doc.id] and raced.writes == []
    assert stored is not None and stored.chunk_count == 1
    assert claims == 2
