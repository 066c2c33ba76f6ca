"""Runtime tables: created in the writer's one transaction; chunks by binary COPY."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import numpy as np
import pytest
from docproc_common.db.engine import create_engine, create_sessionmaker
from docproc_common.settings import DatabaseSettings
from docproc_common.testing.db import create_test_database
from docproc_common.vectorstore import ChunkStamp, ensure_table, table_exists, write_chunks
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

pytestmark = pytest.mark.integration


@pytest.fixture
async def sessions(infra: dict[str, str]) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_engine(DatabaseSettings(url=await create_test_database(infra["DATABASE__URL"])))
    yield create_sessionmaker(engine)
    await engine.dispose()


def stamp() -> ChunkStamp:
    return ChunkStamp(
        knowledge_base_id=uuid.uuid4(),
        organization_id="acme",
        tracking_id=uuid.uuid4(),
        source="upload",
        document_type="txt",
        organizational_unit=None,
        document_date=None,
        source_path=None,
        filename="f.txt",
        content_hash=None,
        writer_kind="document",
    )


def unit_vectors(n: int, dim: int = 384, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    out: np.ndarray = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


async def relations(s: AsyncSession, table: str) -> set[str]:
    """The table and every index on it, as the catalog knows them."""
    rows = await s.execute(
        text("SELECT relname FROM pg_class WHERE relname = :t OR relname LIKE :p"),
        {"t": table, "p": f"{table}\\_%"},
    )
    return {r for (r,) in rows}


async def test_table_and_indexes_are_created_in_the_writers_transaction(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    name = f"tx_{uuid.uuid4().hex[:8]}"
    table = f"rag_{name}"
    async with sessions() as s:
        await s.begin()
        await ensure_table(s, name, 384)
        inside = await relations(s, table)
        await s.rollback()
    # the table and its indexes existed in the transaction, and went with it
    assert {table, *(f"{table}_{i}_idx" for i in ("embedding", "path", "fname", "hash"))} <= inside
    async with sessions() as s:
        assert not await table_exists(s, name)
        assert await relations(s, table) == set()

    # a first write that fails after creating the table leaves no table behind either
    async def first_write_of_the_wrong_width() -> None:
        async with sessions() as s, s.begin():
            await ensure_table(s, name, 384)
            await write_chunks(s, name, uuid.uuid4(), ["a"], unit_vectors(1, dim=8), stamp())

    with pytest.raises(Exception, match="expected 384 dimensions"):
        await first_write_of_the_wrong_width()
    async with sessions() as s:
        assert await relations(s, table) == set()


async def test_a_document_is_written_by_one_binary_copy(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    name = f"copy_{uuid.uuid4().hex[:8]}"
    table = f"rag_{name}"
    async with sessions() as s, s.begin():
        await ensure_table(s, name, 384)
        # every INSERT statement on the table records the top-level query that caused it
        await s.execute(text("CREATE TABLE statements_seen (query text NOT NULL)"))
        await s.execute(
            text(
                "CREATE FUNCTION note_statement() RETURNS trigger LANGUAGE plpgsql AS $$ "
                "BEGIN INSERT INTO statements_seen VALUES (current_query()); RETURN NULL; END $$"
            )
        )
        await s.execute(
            text(
                f"CREATE TRIGGER {table}_seen AFTER INSERT ON {table} "
                "FOR EACH STATEMENT EXECUTE FUNCTION note_statement()"
            )
        )
    n = 1000
    vectors = unit_vectors(n, seed=3)
    document = uuid.uuid4()
    async with sessions() as s, s.begin():
        written = await write_chunks(
            s, name, document, [f"chunk {i}" for i in range(n)], vectors, stamp()
        )
    assert written == n
    async with sessions() as s:
        seen = [q for (q,) in await s.execute(text("SELECT query FROM statements_seen"))]
        stored = (
            await s.execute(
                text(f"SELECT chunk_no, content, embedding FROM {table} ORDER BY chunk_no")
            )
        ).all()
    assert len(seen) == 1, seen  # one statement for the whole document, not one per chunk
    assert seen[0].lstrip().upper().startswith("COPY ")
    assert "binary" in seen[0].lower()
    assert [r.chunk_no for r in stored] == list(range(n))
    assert [r.content for r in stored] == [f"chunk {i}" for i in range(n)]
    assert np.allclose(np.stack([r.embedding.to_numpy() for r in stored]), vectors, atol=1e-6)
