"""What a search costs: one statement once the planner's estimates are known, the HNSW
statement carrying its own ``hnsw.*`` settings (no ``SET``, no transaction), a deliberate
exact scan on a small table, and a table dropped under cached estimates found empty."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
import pytest
from docproc_common.db.engine import create_engine, create_sessionmaker
from docproc_common.settings import DatabaseSettings
from docproc_common.vectorstore import VectorType, drop_table, embedding_index_sql, ensure_table
from docproc_testing.db import create_test_database
from docproc_testing.rows import unit_vectors
from docproc_upload.search.repository import SearchFilters
from docproc_upload.search.service import (
    EXACT_BELOW_ROWS,
    PlanCache,
    ef_search_for,
    search_collection,
)
from pgvector.asyncpg import register_vector
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

pytestmark = pytest.mark.integration

KB = uuid.uuid4()


@pytest.fixture
async def engine(infra: dict[str, str]) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(DatabaseSettings(url=await create_test_database(infra["DATABASE__URL"])))
    yield engine
    await engine.dispose()


class Statements:
    def __init__(self, engine: AsyncEngine) -> None:
        self.sent: list[str] = []
        event.listen(engine.sync_engine, "before_cursor_execute", self._seen)

    def _seen(self, _c: Any, _cur: Any, statement: str, *_: Any) -> None:
        self.sent.append(statement)


async def fill(
    engine: AsyncEngine,
    name: str,
    rows: int,
    tagged_share: float = 0.0,
    vector_type: VectorType = "vector",
) -> None:
    """``rows`` one-chunk documents; ``tagged_share`` of them ``document_type`` 'tagged'."""
    async with create_sessionmaker(engine)() as s, s.begin():
        await ensure_table(s, name, 384, vector_type=vector_type)
        await s.execute(text(f"DROP INDEX rag_{name}_embedding_idx"))  # built after the load
    vectors = unit_vectors(rows, 1)
    rng = np.random.default_rng(2)
    records = [
        (
            uuid.uuid4(),
            uuid.uuid4(),
            0,
            f"chunk {i}",
            vectors[i],
            KB,
            "tagged" if rng.random() < tagged_share else "txt",
        )
        for i in range(rows)
    ]
    async with engine.connect() as conn:
        raw = (await conn.get_raw_connection()).driver_connection
        await register_vector(raw)
        await raw.copy_records_to_table(
            f"rag_{name}",
            records=records,
            columns=[
                "id",
                "document_id",
                "chunk_no",
                "content",
                "embedding",
                "knowledge_base_id",
                "document_type",
            ],
        )
        await conn.commit()
        await conn.execute(text(embedding_index_sql(f"rag_{name}", vector_type)))
        await conn.execute(text(f"ANALYZE rag_{name}"))
        await conn.commit()


@asynccontextmanager
async def autocommit(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    async with engine.connect() as conn:
        yield await conn.execution_options(isolation_level="AUTOCOMMIT")


async def test_a_repeated_search_is_one_statement_with_its_own_settings(
    engine: AsyncEngine,
) -> None:
    name = f"cost_{uuid.uuid4().hex[:8]}"
    await fill(engine, name, EXACT_BELOW_ROWS + 1000)
    plans = PlanCache()
    statements = Statements(engine)
    query = unit_vectors(1, 9)[0]
    async with autocommit(engine) as conn:
        first = await search_collection(
            conn, name, query, knowledge_base_ids=[KB], top_k=10, plans=plans
        )
        statements.sent.clear()
        again = await search_collection(
            conn, name, query, knowledge_base_ids=[KB], top_k=10, plans=plans
        )
    assert [h.chunk_id for h in again] == [h.chunk_id for h in first]
    assert len(again) == 10
    (sent,) = statements.sent  # no estimate, no SET, no BEGIN/COMMIT
    assert "ORDER BY embedding <=>" in sent and "set_config('hnsw.ef_search'" in sent


async def test_the_hnsw_statement_runs_under_its_settings(engine: AsyncEngine) -> None:
    """A filter keeping ~10% of the rows: ef_search 100 is enough candidates on average, but
    the first 100 alone often hold fewer than 10 matches; the iterative scan the statement
    turns on fills every page from the index, so the exact scan never has to complete one."""
    name = f"edge_{uuid.uuid4().hex[:8]}"
    rows = EXACT_BELOW_ROWS + 3000
    await fill(engine, name, rows, tagged_share=0.1)
    assert ef_search_for(rows, 10, 0.1 * rows) == 100
    assert ef_search_for(rows, 10, 0.01 * rows) == 400  # a 1% filter looks further
    assert ef_search_for(rows, 60) == 120
    statements = Statements(engine)
    async with autocommit(engine) as conn:
        # outside it, the connection keeps pgvector's defaults
        assert (await conn.execute(text("SHOW hnsw.ef_search"))).scalar() == "40"
        for seed in range(20):
            hits = await search_collection(
                conn,
                name,
                unit_vectors(1, 100 + seed)[0],
                knowledge_base_ids=[KB],
                top_k=10,
                filters=SearchFilters(document_type=["tagged"]),
            )
            assert len(hits) == 10
        assert (await conn.execute(text("SHOW hnsw.iterative_scan"))).scalar() == "off"
    hnsw = [s for s in statements.sent if "ORDER BY embedding <=>" in s]
    exact = [s for s in statements.sent if "OFFSET 0" in s]
    assert len(hnsw) == 20
    assert exact == []


async def test_a_small_table_is_an_exact_scan(engine: AsyncEngine) -> None:
    name = f"small_{uuid.uuid4().hex[:8]}"
    await fill(engine, name, EXACT_BELOW_ROWS // 2)
    statements = Statements(engine)
    async with autocommit(engine) as conn:
        hits = await search_collection(
            conn, name, unit_vectors(1, 5)[0], knowledge_base_ids=[KB], top_k=5
        )
    assert len(hits) == 5
    assert [s for s in statements.sent if "OFFSET 0" in s]
    assert not [s for s in statements.sent if "ORDER BY embedding <=>" in s]


async def test_a_table_dropped_under_cached_estimates_is_found_empty(engine: AsyncEngine) -> None:
    name = f"gone_{uuid.uuid4().hex[:8]}"
    await fill(engine, name, 50)
    plans = PlanCache()
    query = unit_vectors(1, 3)[0]
    async with autocommit(engine) as conn:
        assert await search_collection(
            conn, name, query, knowledge_base_ids=[KB], top_k=5, plans=plans
        )
        async with create_sessionmaker(engine)() as s, s.begin():
            await drop_table(s, name)
        assert (
            await search_collection(
                conn, name, query, knowledge_base_ids=[KB], top_k=5, plans=plans
            )
            == []
        )
        assert (await conn.execute(text("SELECT 1"))).scalar() == 1  # nothing left aborted
        assert (
            await search_collection(
                conn, name, query, knowledge_base_ids=[KB], top_k=5, plans=plans
            )
            == []
        )


async def test_a_halfvec_table_is_searched_as_a_vector_table_is(engine: AsyncEngine) -> None:
    """The same rows stored as ``halfvec`` and as ``vector``: the halfvec table's column and
    HNSW index are halfvec's, and on both the HNSW plan (a large table) and the exact scan
    (a selective filter) find the chunk a query was drawn from first."""
    rows = EXACT_BELOW_ROWS + 1000
    names = {t: f"{t}_{uuid.uuid4().hex[:8]}" for t in ("vector", "halfvec")}
    for vector_type, name in names.items():
        await fill(engine, name, rows, tagged_share=0.01, vector_type=vector_type)
    stored = unit_vectors(rows, 1)
    statements = Statements(engine)
    async with autocommit(engine) as conn:
        column, opclass = (
            await conn.execute(
                text(
                    "SELECT format_type(a.atttypid, a.atttypmod), o.opcname FROM pg_attribute a "
                    "JOIN pg_index i ON i.indrelid = a.attrelid AND i.indexrelid = "
                    "to_regclass(:i) JOIN pg_opclass o ON o.oid = i.indclass[0] "
                    "WHERE a.attrelid = to_regclass(:t) AND a.attname = 'embedding'"
                ),
                {"t": f"rag_{names['halfvec']}", "i": f"rag_{names['halfvec']}_embedding_idx"},
            )
        ).one()
        assert (column, opclass) == ("halfvec(384)", "halfvec_cosine_ops")
        tagged = [
            int(r[0].split()[1])
            for r in await conn.execute(
                text(f"SELECT content FROM rag_{names['halfvec']} WHERE document_type = 'tagged'")
            )
        ]
        assert tagged
        for name in names.values():
            for i in (3, 700, 1400):
                statements.sent.clear()
                hits = await search_collection(
                    conn, name, stored[i], knowledge_base_ids=[KB], top_k=10
                )
                assert len(hits) == 10
                assert (hits[0].content, round(hits[0].score, 2)) == (f"chunk {i}", 1.0)
                assert [s for s in statements.sent if "ORDER BY embedding <=>" in s]  # HNSW
            statements.sent.clear()
            hits = await search_collection(
                conn,
                name,
                stored[tagged[0]],
                knowledge_base_ids=[KB],
                top_k=5,
                filters=SearchFilters(document_type=["tagged"]),
            )
            assert (hits[0].content, round(hits[0].score, 2)) == (f"chunk {tagged[0]}", 1.0)
            assert [s for s in statements.sent if "OFFSET 0" in s]  # the exact scan answered
