"""Retiring earlier failed attempts: by address, error rows only, in the row's own scope; and a
stage's unit of work (``bus.unit``): claimed once, written only for the current attempt."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from docproc_common.bus.delivery import Delivery
from docproc_common.bus.unit import AttemptUnit, Stale
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


async def test_a_unit_writes_the_current_attempt_once(sessionmaker: object) -> None:
    doc = row(None, None, DocumentStatus.PROCESSING)
    async with sessionmaker() as s, s.begin():  # type: ignore[operator]
        s.add(doc)
    assert doc.attempt_id is not None
    delivery = Delivery("test", "t", uuid.uuid4(), 1)
    unit = AttemptUnit(sessionmaker, delivery, doc.id, doc.attempt_id)  # type: ignore[arg-type]
    writes: list[uuid.UUID] = []

    async def write(_s: AsyncSession, locked: RagDocument) -> str:
        writes.append(locked.id)
        locked.chunk_count = len(writes)
        return "written"

    async def filename(_s: AsyncSession, locked: RagDocument) -> str:
        return locked.filename

    assert await unit.read(filename) == "readme.md"
    assert await unit.commit_attempt(write) == "written"
    assert await unit.read(filename) is Stale.PROCESSED
    assert await unit.commit_attempt(write) is None  # a redelivery writes nothing
    retried = AttemptUnit(
        sessionmaker, Delivery("test", "t", uuid.uuid4(), 1), doc.id, uuid.uuid4()
    )  # type: ignore[arg-type]
    assert await retried.read(filename) is Stale.SUPERSEDED
    assert await retried.commit_attempt(write) is None  # another attempt: only the claim commits
    async with sessionmaker() as s:  # type: ignore[operator]
        stored = await s.get(RagDocument, doc.id)
        claims = await s.scalar(select(func.count()).select_from(text("processed_events")))
    assert writes == [doc.id]
    assert stored is not None and stored.chunk_count == 1
    assert claims == 2
