"""Bulk mode against real Postgres + pgvector: chunk sets written to the side table are
found by every search mode while it lasts, the fold (index build, moves, swap) leaves the
same top-k and the same table, a drop mid-bulk leaves nothing, and a fold that dies half-way
loses and doubles nothing when it runs again."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import numpy as np
import pytest
from docproc_common import bulkload
from docproc_common.db.engine import create_engine, create_sessionmaker
from docproc_common.settings import DatabaseSettings
from docproc_common.vectorstore import delete_documents, drop_table, ensure_table, write_chunks
from docproc_testing.db import create_test_database
from docproc_testing.rows import chunk_stamp
from docproc_upload.search.service import search_collection
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

pytestmark = pytest.mark.integration

KB = uuid.uuid4()
DIM = 32
BUILD = bulkload.IndexBuild(maintenance_work_mem="64MB", parallel_workers=0)


@pytest.fixture
async def engine(infra: dict[str, str]) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(
        DatabaseSettings(url=await create_test_database(infra["DATABASE__URL"]), pool_size=4)
    )
    yield engine
    await engine.dispose()


@pytest.fixture
def sessions(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return create_sessionmaker(engine)


def clusters(n: int, seed: int) -> np.ndarray:
    """``n`` clusters of 5 near-identical unit vectors: each cluster is the clear top 5 of a
    query at its centre, for HNSW and exact scan alike."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n, DIM))
    v = np.repeat(centres, 5, axis=0) + rng.normal(scale=0.01, size=(5 * n, DIM))
    out: np.ndarray = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
    return out


async def write_documents(
    sessions: async_sessionmaker[AsyncSession], name: str, vectors: np.ndarray, word: str
) -> list[uuid.UUID]:
    """One document (its own transaction, as the embedder writes) per 25 vectors."""
    ids = []
    for start in range(0, len(vectors), 25):
        doc = uuid.uuid4()
        part = vectors[start : start + 25]
        async with sessions() as s, s.begin():
            await ensure_table(s, name, DIM)
            chunks = [f"{word} chunk {start + i}" for i in range(len(part))]
            await write_chunks(s, name, doc, chunks, part, chunk_stamp(KB))
        ids.append(doc)
    return ids


async def scalar(sessions: async_sessionmaker[AsyncSession], sql: str) -> object:
    async with sessions() as s:
        return (await s.execute(text(sql))).scalar()


async def top(
    sessions: async_sessionmaker[AsyncSession], name: str, query: np.ndarray, **kw: object
) -> list[str]:
    async with sessions() as s:
        hits = await search_collection(s, name, query, knowledge_base_ids=[KB], top_k=5, **kw)  # type: ignore[arg-type]
    return [h.content for h in hits]


async def loaded(
    sessions: async_sessionmaker[AsyncSession], indexed: int = 120, pending: int = 160
) -> tuple[str, np.ndarray]:
    """A collection of ``indexed`` clusters (600 rows by default: above the exact-scan size,
    analyzed) put in bulk mode, then ``pending`` more clusters written to its side table."""
    name = f"bulk_{uuid.uuid4().hex[:8]}"
    vectors = clusters(indexed + pending, seed=1)
    await write_documents(sessions, name, vectors[: 5 * indexed], "indexed")
    async with sessions() as s, s.begin():
        await s.execute(text(f"ANALYZE rag_{name}"))
        assert await bulkload.enter(s, name, DIM)
        assert not await bulkload.enter(s, name, DIM)
    await write_documents(sessions, name, vectors[5 * indexed :], "pending")
    return name, vectors


async def test_searches_in_bulk_mode_find_the_side_tables_rows(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    name, vectors = await loaded(sessions)
    assert await scalar(sessions, f"SELECT count(*) FROM ONLY docproc_bulk.rag_{name}") == 800
    assert await scalar(sessions, f"SELECT count(*) FROM ONLY rag_{name}") == 600
    for cluster in (120, 200, 279):  # clusters written in bulk mode
        first = 5 * cluster - 600
        expected = {f"pending chunk {i}" for i in range(first, first + 5)}
        assert set(await top(sessions, name, vectors[5 * cluster])) == expected
    # an indexed cluster is still found beside them
    assert set(await top(sessions, name, vectors[0])) == {f"indexed chunk {i}" for i in range(5)}
    keyword = await top(sessions, name, None, mode="keyword", text_query="pending")
    assert len(keyword) == 5 and all(c.startswith("pending") for c in keyword)
    hybrid = await top(sessions, name, vectors[605], mode="hybrid", text_query="pending 5")
    assert hybrid[0] == "pending chunk 5"
    async with sessions() as s:
        assert await bulkload.index_state(s, name, [KB]) == ("loading", 800)
        assert await bulkload.index_state(s, name, [uuid.uuid4()]) == ("loading", 0)


async def test_the_fold_leaves_the_same_top_k_and_the_same_table(
    sessions: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    name, vectors = await loaded(sessions)
    queries = [vectors[5 * c] for c in (0, 60, 119, 120, 200, 279)]
    before = [await top(sessions, name, q) for q in queries]
    reference = f"ref_{uuid.uuid4().hex[:8]}"
    async with sessions() as s, s.begin():
        await ensure_table(s, reference, DIM)
    indexes = """SELECT array_agg(replace(indexname, '{t}', '') ORDER BY indexname),
        array_agg(replace(indexdef, '{t}', '') ORDER BY indexname) FROM pg_indexes
        WHERE schemaname = 'public' AND tablename = 'rag_{t}'"""

    assert await bulkload.fold(engine, name, BUILD) == "folded"

    assert [await top(sessions, name, q) for q in queries] == before
    async with sessions() as s:
        assert not await bulkload.in_bulk(s, name)
        assert await bulkload.index_state(s, name, [KB]) == ("ready", 0)
        ours = (await s.execute(text(indexes.format(t=name)))).one()
        theirs = (await s.execute(text(indexes.format(t=reference)))).one()
        plan = (
            await s.execute(
                text(
                    f"EXPLAIN SELECT id FROM rag_{name} "
                    f"ORDER BY embedding <=> '[{','.join(['1'] * DIM)}]' LIMIT 5"
                )
            )
        ).all()
    assert ours == theirs  # every index of a table ensure_table creates, by the same name
    assert "hnsw" in " ".join(r[0] for r in plan) or "embedding_idx" in " ".join(r[0] for r in plan)
    assert await scalar(sessions, f"SELECT count(*) FROM rag_{name}") == 1400
    assert await scalar(sessions, f"SELECT count(DISTINCT id) FROM rag_{name}") == 1400
    assert await bulkload.fold(engine, name, BUILD) == "not_bulk"


async def test_a_drop_mid_bulk_leaves_nothing(
    sessions: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    name, _ = await loaded(sessions)
    async with sessions() as s, s.begin():
        docs = (
            await s.execute(text(f"SELECT DISTINCT document_id FROM ONLY docproc_bulk.rag_{name}"))
        ).scalars()
        # a knowledge base's teardown (not the last on the name) reaches the side table
        assert await delete_documents(s, name, list(docs)[:3]) == 75
    assert await scalar(sessions, f"SELECT count(*) FROM ONLY docproc_bulk.rag_{name}") == 725
    async with sessions() as s, s.begin():
        await drop_table(s, name)  # the last base's teardown
    assert await scalar(sessions, f"SELECT to_regclass('rag_{name}')") is None
    assert await scalar(sessions, f"SELECT to_regclass('docproc_bulk.rag_{name}')") is None
    assert await bulkload.fold(engine, name, BUILD) == "not_bulk"


async def test_a_fold_that_dies_half_way_loses_and_doubles_nothing(
    sessions: async_sessionmaker[AsyncSession],
    engine: AsyncEngine,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name, vectors = await loaded(sessions)
    queries = [vectors[5 * c] for c in (0, 119, 130, 279)]
    before = [await top(sessions, name, q) for q in queries]
    # an index build that died leaves an invalid index under the name the fold builds
    async with engine.connect() as c:
        conn = await c.execution_options(isolation_level="AUTOCOMMIT")
        with pytest.raises(Exception, match="could not create unique index"):
            await conn.execute(
                text(
                    f"CREATE UNIQUE INDEX CONCURRENTLY rag_{name}_embedding_idx "
                    f"ON docproc_bulk.rag_{name} (knowledge_base_id)"
                )
            )

    async def crash(engine: AsyncEngine, collection: str) -> None:
        raise ConnectionError("killed before the swap")

    monkeypatch.setattr(bulkload, "MOVE_BATCH_ROWS", 64)
    monkeypatch.setattr(bulkload, "_swap", crash)
    with pytest.raises(ConnectionError):
        await bulkload.fold(engine, name, BUILD)
    # every row once, in one table or the other, and found meanwhile
    assert await scalar(sessions, f"SELECT count(*) FROM rag_{name}") == 1400
    assert await scalar(sessions, f"SELECT count(DISTINCT id) FROM rag_{name}") == 1400
    assert [await top(sessions, name, q) for q in queries] == before
    async with sessions() as s:
        assert await bulkload.index_state(s, name, [KB]) == ("loading", 1400)

    monkeypatch.undo()
    assert await bulkload.fold(engine, name, BUILD) == "folded"
    assert await scalar(sessions, f"SELECT count(*) FROM rag_{name}") == 1400
    assert await scalar(sessions, f"SELECT count(DISTINCT id) FROM rag_{name}") == 1400
    assert [await top(sessions, name, q) for q in queries] == before
    assert (
        await scalar(
            sessions,
            "SELECT bool_and(indisvalid) FROM pg_index "
            f"WHERE indrelid = to_regclass('public.rag_{name}')",
        )
        is True
    )


async def test_a_small_load_into_a_larger_collection_is_merged_into_it(
    sessions: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    name, vectors = await loaded(sessions, pending=40)  # 600 indexed rows, 200 pending
    queries = [vectors[5 * c] for c in (0, 150)]
    before = [await top(sessions, name, q) for q in queries]
    assert await bulkload.fold(engine, name, BUILD) == "merged"
    assert [await top(sessions, name, q) for q in queries] == before
    assert await scalar(sessions, f"SELECT to_regclass('docproc_bulk.rag_{name}')") is None
    assert await scalar(sessions, f"SELECT count(DISTINCT id) FROM rag_{name}") == 800


async def test_a_halfvec_collection_enters_and_folds_as_halfvec(
    sessions: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    name = f"half_{uuid.uuid4().hex[:8]}"
    async with sessions() as s, s.begin():
        assert await bulkload.enter(s, name, DIM, vector_type="halfvec")  # creates the table
    vectors = clusters(10, seed=2)
    await write_documents(sessions, name, vectors, "pending")
    assert set(await top(sessions, name, vectors[20])) == {
        f"pending chunk {i}" for i in range(20, 25)
    }
    assert await bulkload.fold(engine, name, BUILD) == "folded"
    assert set(await top(sessions, name, vectors[20])) == {
        f"pending chunk {i}" for i in range(20, 25)
    }
    assert (
        await scalar(
            sessions,
            f"SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            f"WHERE attrelid = 'rag_{name}'::regclass AND attname = 'embedding'",
        )
        == f"halfvec({DIM})"
    )
    assert "halfvec_cosine_ops" in str(
        await scalar(
            sessions,
            f"SELECT indexdef FROM pg_indexes WHERE indexname = 'rag_{name}_embedding_idx'",
        )
    )


def test_entry_needs_a_backlog_that_dominates() -> None:
    assert bulkload.should_enter(bulkload.Backlog(100, 0), min_pending=100, ratio=1.0)
    assert not bulkload.should_enter(bulkload.Backlog(99, 0), min_pending=100, ratio=1.0)
    assert not bulkload.should_enter(bulkload.Backlog(500, 501), min_pending=100, ratio=1.0)
