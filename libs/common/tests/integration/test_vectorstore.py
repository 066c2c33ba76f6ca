"""The runtime vector tables: creation in the writer's transaction, concurrent first writers,
one binary COPY per document, redelivery, stamps (their reads: upload's
tests/integration/test_vector_search.py)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import numpy as np
import pytest
from docproc_common.db.engine import create_engine, create_sessionmaker
from docproc_common.settings import DatabaseSettings
from docproc_common.vectorstore import ensure_table, table_exists, write_chunks
from docproc_testing.db import create_test_database
from docproc_testing.rows import chunk_stamp, unit_vectors
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

pytestmark = pytest.mark.integration


@pytest.fixture
async def sessions(infra: dict[str, str]) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_engine(
        DatabaseSettings(url=await create_test_database(infra["DATABASE__URL"]), pool_size=12)
    )
    yield create_sessionmaker(engine)
    await engine.dispose()


async def test_concurrent_first_writers_create_one_table_without_errors(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    name = f"race_{uuid.uuid4().hex[:8]}"
    kb = uuid.uuid4()

    async def writer(i: int) -> None:
        async with sessions() as s, s.begin():
            await ensure_table(s, name, 384)
            await write_chunks(
                s, name, uuid.uuid4(), [f"doc {i}"], unit_vectors(1, i), chunk_stamp(kb)
            )

    await asyncio.gather(*(writer(i) for i in range(8)))
    async with sessions() as s:
        count = (await s.execute(text(f"SELECT count(*) FROM rag_{name}"))).scalar()
        indexes = {
            row.indexname.removeprefix(f"rag_{name}_"): row.indexdef.split(" USING ")[1]
            for row in await s.execute(
                text("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = :t"),
                {"t": f"rag_{name}"},
            )
        }
    assert count == 8
    assert indexes == {
        "pkey": "btree (id)",
        "chunk_key": "btree (document_id, chunk_no)",
        "embedding_idx": "hnsw (embedding halfvec_cosine_ops)",  # the default type
        "kb_idx": "btree (knowledge_base_id)",
        "path_idx": "hash (source_path)",
        "fname_idx": "hash (filename)",
        "hash_idx": "hash (content_hash)",
        # the search filters, so a selective one is answered from the matching rows
        "source_idx": "btree (source)",
        "doctype_idx": "btree (document_type)",
        "orgunit_idx": "btree (organizational_unit)",
        "date_idx": "btree (document_date)",
        "parent_idx": "btree (tracking_id)",
        # the keyword half of hybrid search
        "tsv_idx": "gin (content_tsv)",
    }


async def test_first_writers_that_looked_for_the_table_first_create_it_once(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    """As the embedder does (``table_exists``, then ``ensure_table``): the look before the
    lock must not make a writer that waited for the lock create the table again."""
    name = f"race_{uuid.uuid4().hex[:8]}"
    kb = uuid.uuid4()
    looked = asyncio.Barrier(4)

    async def writer(i: int) -> None:
        async with sessions() as s, s.begin():
            assert not await table_exists(s, name)
            await looked.wait()
            await ensure_table(s, name, 384)
            await write_chunks(
                s, name, uuid.uuid4(), [f"doc {i}"], unit_vectors(1, i), chunk_stamp(kb)
            )

    await asyncio.gather(*(writer(i) for i in range(4)))
    async with sessions() as s:
        assert (await s.execute(text(f"SELECT count(*) FROM rag_{name}"))).scalar() == 4


async def test_a_rewrite_of_the_same_document_replaces_its_set(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    name = f"redo_{uuid.uuid4().hex[:8]}"
    kb, doc = uuid.uuid4(), uuid.uuid4()
    for _ in range(2):  # a redelivered event
        async with sessions() as s, s.begin():
            await ensure_table(s, name, 384)
            await write_chunks(s, name, doc, ["a", "b", "c"], unit_vectors(3), chunk_stamp(kb))
    async with sessions() as s:
        rows = (
            await s.execute(text(f"SELECT count(*), count(DISTINCT chunk_no) FROM rag_{name}"))
        ).one()
    assert tuple(rows) == (3, 3)


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
            await write_chunks(
                s, name, uuid.uuid4(), ["a"], unit_vectors(1, dim=8), chunk_stamp(uuid.uuid4())
            )

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
        await ensure_table(s, name, 384, vector_type="vector")  # 4-byte floats, read back exactly
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
            s, name, document, [f"chunk {i}" for i in range(n)], vectors, chunk_stamp(uuid.uuid4())
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
