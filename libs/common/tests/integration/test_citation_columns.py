"""The citation columns of the runtime vector tables against real Postgres + pgvector: a
table from before them answers searches with no citations until its next write adds the
columns (concurrent writers included), and bulk mode's side table and fold carry them."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from docproc_common import bulkload
from docproc_common.citations import Citation
from docproc_common.db.engine import create_engine, create_sessionmaker, driver_connection
from docproc_common.settings import DatabaseSettings
from docproc_common.vectorstore import (
    CITATION_COLUMNS,
    COLUMNS,
    chunk_records,
    ensure_table,
    has_citation_columns,
    write_chunks,
)
from docproc_testing.db import create_test_database
from docproc_testing.rows import chunk_stamp, unit_vectors
from docproc_upload.search.repository import Hit
from docproc_upload.search.service import search_collection
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

pytestmark = pytest.mark.integration

KB = uuid.uuid4()
DIM = 8
CITED = [Citation(1, 1, 0, 9, ("Intro",)), Citation(1, 2, 11, 40, ("Intro", "Scope"))]


@pytest.fixture
async def engine(infra: dict[str, str]) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(
        DatabaseSettings(url=await create_test_database(infra["DATABASE__URL"]), pool_size=6)
    )
    yield engine
    await engine.dispose()


@pytest.fixture
def sessions(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return create_sessionmaker(engine)


async def table_from_before(sessions: async_sessionmaker[AsyncSession], documents: int) -> str:
    """A collection whose table has no citation columns, holding ``documents`` documents of
    two chunks written as the embedder wrote them then (``old <n>``)."""
    name = f"old_{uuid.uuid4().hex[:8]}"
    old_columns = [c for c in COLUMNS if c not in CITATION_COLUMNS]
    async with sessions() as s, s.begin():
        await ensure_table(s, name, DIM)
        dropped = ", ".join(f"DROP COLUMN {c}" for c in CITATION_COLUMNS)
        await s.execute(text(f"ALTER TABLE rag_{name} {dropped}"))
        for n in range(documents):
            records = chunk_records(
                uuid.uuid4(),
                [f"old {n}", f"old {n} more"],
                unit_vectors(2, n, DIM),
                chunk_stamp(KB),
            )
            conn = await driver_connection(s)
            await conn.copy_records_to_table(
                f"rag_{name}",
                records=[r[: len(old_columns)] for r in records],
                columns=old_columns,
            )
    return name


async def hits(sessions: async_sessionmaker[AsyncSession], name: str) -> dict[str, Hit]:
    async with sessions() as s:
        found = await search_collection(
            s, name, unit_vectors(1, 99, DIM)[0], knowledge_base_ids=[KB], top_k=100
        )
    return {h.content: h for h in found}


async def write(
    sessions: async_sessionmaker[AsyncSession], name: str, word: str, seed: int = 0
) -> None:
    async with sessions() as s, s.begin():
        await write_chunks(
            s,
            name,
            uuid.uuid4(),
            [word, f"{word} more"],
            unit_vectors(2, seed, DIM),
            chunk_stamp(KB),
            CITED,
        )


async def test_a_table_from_before_answers_without_citations_until_its_next_write(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    name = await table_from_before(sessions, 1)
    before = await hits(sessions, name)
    assert set(before) == {"old 0", "old 0 more"}
    assert all(h.citation is None for h in before.values())

    await write(sessions, name, "new")

    async with sessions() as s:
        assert await has_citation_columns(s, f"rag_{name}")
    after = await hits(sessions, name)
    assert after["new"].citation == CITED[0]
    assert after["new more"].citation == CITED[1]
    assert after["old 0"].citation is None  # written before: absent, not wrong
    # a chunk written without citations (an older parser's set) reads as none either
    async with sessions() as s, s.begin():
        await write_chunks(
            s, name, uuid.uuid4(), ["bare"], unit_vectors(1, 5, DIM), chunk_stamp(KB)
        )
    assert (await hits(sessions, name))["bare"].citation is None


async def test_concurrent_first_writers_after_the_upgrade_all_land(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    name = await table_from_before(sessions, 1)
    await asyncio.gather(*(write(sessions, name, f"writer {i}", i) for i in range(5)))
    found = await hits(sessions, name)
    assert {c for c, h in found.items() if h.citation == CITED[0]} == {
        f"writer {i}" for i in range(5)
    }


async def test_bulk_mode_and_its_fold_carry_the_citations(
    sessions: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    name = await table_from_before(sessions, 3)
    async with sessions() as s, s.begin():
        assert await bulkload.enter(s, name, DIM)  # its side table inherits the old shape
    # a fold with nothing written since gives the tables their columns first, then moves
    assert await bulkload.fold(engine, name, bulkload.IndexBuild("64MB", 0)) == "merged"
    async with sessions() as s, s.begin():
        assert await bulkload.enter(s, name, DIM)
    await write(sessions, name, "loaded")  # into the side table
    async with sessions() as s:
        side = await s.execute(
            text(f"SELECT heading_path FROM ONLY docproc_bulk.rag_{name} WHERE content = 'loaded'")
        )
        assert side.scalar() == ["Intro"]
    assert await bulkload.fold(engine, name, bulkload.IndexBuild("64MB", 0)) == "merged"
    found = await hits(sessions, name)
    assert found["loaded more"].citation == CITED[1]
    assert found["old 2"].citation is None
    assert len(found) == 8
