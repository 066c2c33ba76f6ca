"""Finishing a teardown that drops a table: the rows it leaves behind, their files, redelivery,
and the hourly sweep that finishes a reservation whose run was lost."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from docproc_common.db.models import CollectionTeardown, DocumentStatus, RagDocument
from docproc_common.runtime import Runtime
from docproc_common.vectorstore import ensure_table, table_exists, write_chunks
from docproc_teardown.service import LEFT_BEHIND, finish, sweep_once
from docproc_testing.rows import chunk_stamp, tracking_row
from docproc_testing.runtime import fresh_runtime
from sqlalchemy import func, select, update

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
async def runtime(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Runtime]:
    async with fresh_runtime(tmp_path_factory.mktemp("media")) as rt:
        yield rt


async def a_table(runtime: Runtime, name: str) -> None:
    stamp = chunk_stamp(uuid.uuid4(), filename="gone.txt")
    vectors = np.random.default_rng(1).normal(size=(2, 384)).astype(np.float32)
    async with runtime.sessionmaker() as s, s.begin():
        await ensure_table(s, name, 384)
        await write_chunks(s, name, uuid.uuid4(), ["a", "b"], vectors, stamp)


async def reserve(runtime: Runtime, name: str, paths: list[str]) -> uuid.UUID:
    async with runtime.sessionmaker() as s, s.begin():
        reservation = CollectionTeardown(collection_name=name, drop_table=True, storage_paths=paths)
        s.add(reservation)
        await s.flush()
        return reservation.id


def stored(runtime: Runtime, path: str) -> bool:
    return Path(runtime.settings.storage.media_dir, path).exists()


async def test_a_dropped_table_fails_the_rows_it_leaves_and_keeps_their_files(
    runtime: Runtime,
) -> None:
    name = f"left_{uuid.uuid4().hex[:8]}"
    await a_table(runtime, name)
    gone, kept, stray = (f"rag/{name}/{uuid.uuid4().hex}_{n}.txt" for n in ("gone", "kept", "x"))
    for path in (gone, kept, stray):
        await runtime.storage.put(path, b"text")
    async with runtime.sessionmaker() as s, s.begin():
        left = [
            tracking_row(
                name,
                None,
                "theirs.txt",
                DocumentStatus.DONE,
                organization_id="globex",
                storage_path=kept,
                vector_document_id=uuid.uuid4(),
                chunk_count=4,
            ),
            tracking_row(
                name,
                None,
                "failed.txt",
                DocumentStatus.ERROR,
                organization_id="globex",
                error_message="The document could not be parsed (ValueError) - ...",
            ),
        ]
        s.add_all(left)
    teardown = await reserve(runtime, name, [gone])
    assert await finish(runtime, teardown) is True
    async with runtime.sessionmaker() as s:
        assert not await table_exists(s, name)
        rows = {
            r.filename: r
            for r in (
                await s.execute(select(RagDocument).where(RagDocument.collection_name == name))
            ).scalars()
        }
        assert await s.get(CollectionTeardown, teardown) is None
    theirs = rows["theirs.txt"]
    assert (theirs.status, theirs.error_message, theirs.chunk_count) == ("error", LEFT_BEHIND, 0)
    assert theirs.vector_document_id is None
    assert theirs.completed_at is not None
    # a row that had already failed keeps its own diagnosis
    assert rows["failed.txt"].error_message.startswith("The document could not be parsed")
    assert not stored(runtime, gone)
    assert stored(runtime, kept)
    assert stored(runtime, stray)  # no sweep of the name's files while a row keeps one
    assert await finish(runtime, teardown) is False  # a redelivery finds nothing to do


async def test_with_no_row_left_every_file_under_the_name_goes(runtime: Runtime) -> None:
    name = f"swept_{uuid.uuid4().hex[:8]}"
    await a_table(runtime, name)
    stray = f"rag/{name}/chunks/{uuid.uuid4().hex}.json"
    await runtime.storage.put(stray, b"[]")
    assert await finish(runtime, await reserve(runtime, name, [])) is True
    assert not stored(runtime, stray)
    async with runtime.sessionmaker() as s:
        assert not await table_exists(s, name)


async def test_the_sweep_takes_only_reservations_older_than_an_hour(runtime: Runtime) -> None:
    """A reservation an hour old lost its teardown run and the sweep finishes it; a younger
    one is a teardown still under way (or about to be), left to its own worker."""
    lost, live = f"lost_{uuid.uuid4().hex[:8]}", f"live_{uuid.uuid4().hex[:8]}"
    for name in (lost, live):
        await a_table(runtime, name)
    old = await reserve(runtime, lost, [])
    fresh = await reserve(runtime, live, [])
    async with runtime.sessionmaker() as s, s.begin():
        await s.execute(
            update(CollectionTeardown)
            .where(CollectionTeardown.id == old)
            .values(created_at=func.now() - timedelta(hours=1, minutes=1))
        )
    assert await sweep_once(runtime) == 1
    async with runtime.sessionmaker() as s:
        assert await s.get(CollectionTeardown, old) is None
        assert not await table_exists(s, lost)
        assert await s.get(CollectionTeardown, fresh) is not None
        assert await table_exists(s, live)
    assert await finish(runtime, fresh) is True  # its own run, as the event would
