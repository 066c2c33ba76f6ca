"""Search on the real vector tables: date ranges and the knowledge-base scope.

A date range is inclusive and fails closed; the knowledge-base constraint is applied
before top-k (a small base sharing a table with a large one still gets a full page),
on both the HNSW and the exact-scan plans; filter values are those of the given bases only.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import date

import numpy as np
import pytest
from docproc_common.db.engine import create_engine, create_sessionmaker
from docproc_common.settings import DatabaseSettings
from docproc_common.testing.db import create_test_database
from docproc_common.vectorstore import (
    ChunkStamp,
    SearchFilters,
    ensure_table,
    filter_values,
    search,
    write_chunks,
)
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

pytestmark = pytest.mark.integration


@pytest.fixture
async def sessions(infra: dict[str, str]) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_engine(DatabaseSettings(url=await create_test_database(infra["DATABASE__URL"])))
    yield create_sessionmaker(engine)
    await engine.dispose()


def stamp(
    kb: uuid.UUID,
    *,
    filename: str,
    document_type: str = "txt",
    document_date: date | None = None,
    organizational_unit: str | None = None,
) -> ChunkStamp:
    return ChunkStamp(
        knowledge_base_id=kb,
        organization_id="acme",
        tracking_id=uuid.uuid4(),
        source="upload",
        document_type=document_type,
        organizational_unit=organizational_unit,
        document_date=document_date,
        source_path=None,
        filename=filename,
        content_hash=None,
        writer_kind="document",
    )


def unit_vectors(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)
    normalized: np.ndarray = v / np.linalg.norm(v, axis=1, keepdims=True)
    return normalized


async def test_a_date_range_is_inclusive_ands_with_other_fields_and_fails_closed(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    name = f"dates_{uuid.uuid4().hex[:8]}"
    kb = uuid.uuid4()
    docs = {
        "jan.txt": ("txt", date(2024, 1, 1)),
        "jun.txt": ("txt", date(2024, 6, 15)),
        "jun.md": ("md", date(2024, 6, 15)),
        "dec.txt": ("txt", date(2024, 12, 31)),
        "undated.txt": ("txt", None),
    }
    vectors = unit_vectors(len(docs) * 2, 3)
    async with sessions() as s, s.begin():
        await ensure_table(s, name, 384)
        for i, (filename, (doctype, day)) in enumerate(docs.items()):
            await write_chunks(
                s,
                name,
                uuid.uuid4(),
                [f"{filename} one", f"{filename} two"],
                vectors[2 * i : 2 * i + 2],
                stamp(kb, filename=filename, document_type=doctype, document_date=day),
            )

    async def found(**filters: object) -> set[str]:
        async with sessions() as s, s.begin():
            hits = await search(
                s,
                name,
                vectors[0],
                knowledge_base_ids=[kb],
                top_k=50,
                filters=SearchFilters(**filters),  # type: ignore[arg-type]
            )
        return {h.filename or "" for h in hits}

    assert await found() == set(docs)
    # both bounds are inclusive; a chunk without a date never matches a date filter
    assert await found(date_from=date(2024, 6, 15)) == {"jun.txt", "jun.md", "dec.txt"}
    assert await found(date_to=date(2024, 6, 15)) == {"jan.txt", "jun.txt", "jun.md"}
    assert await found(date_from=date(2024, 6, 15), date_to=date(2024, 6, 15)) == {
        "jun.txt",
        "jun.md",
    }
    assert await found(date_from=date(2024, 1, 2), date_to=date(2024, 12, 30)) == {
        "jun.txt",
        "jun.md",
    }
    # AND across fields
    assert await found(date_from=date(2024, 6, 1), document_type=["md"]) == {"jun.md"}
    assert await found(date_to=date(2024, 6, 1), document_type=["md"]) == set()
    # an empty range matches nothing rather than everything
    assert await found(date_from=date(2025, 1, 1), date_to=date(2024, 1, 1)) == set()


async def test_the_knowledge_base_constraint_comes_before_top_k(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    """A small base in a table filled by a large sibling: its caller still gets a full top-k."""
    name = f"kbtop_{uuid.uuid4().hex[:8]}"
    big, small = uuid.uuid4(), uuid.uuid4()
    big_vectors = unit_vectors(3000, 11)
    small_vectors = unit_vectors(15, 12)
    async with sessions() as s, s.begin():
        await ensure_table(s, name, 384)
        await write_chunks(
            s,
            name,
            uuid.uuid4(),
            [f"big{i}" for i in range(len(big_vectors))],
            big_vectors,
            stamp(big, filename="big.txt", organizational_unit="sales"),
        )
        await write_chunks(
            s,
            name,
            uuid.uuid4(),
            [f"small{i}" for i in range(len(small_vectors))],
            small_vectors,
            stamp(small, filename="small.txt", organizational_unit="legal"),
        )

    async def page(kbs: list[uuid.UUID], top_k: int) -> list[str]:
        async with sessions() as s, s.begin():
            # the query is one of the big base's own chunks: its nearest neighbours are all big's
            hits = await search(s, name, big_vectors[0], knowledge_base_ids=kbs, top_k=top_k)
        return [h.content for h in hits]

    for plan in ("never analyzed (HNSW first)", "analyzed (planner may pick the exact scan)"):
        ten = await page([small], 10)
        assert len(ten) == 10, plan
        assert all(c.startswith("small") for c in ten), plan
        everything = await page([small], 50)
        assert sorted(everything) == sorted(f"small{i}" for i in range(15)), plan
        assert all(c.startswith("big") for c in await page([big], 10)), plan
        assert await page([uuid.uuid4()], 10) == [], plan
        async with sessions() as s, s.begin():
            await s.execute(text(f"ANALYZE rag_{name}"))

    async with sessions() as s:
        assert await filter_values(s, name, [small]) == ["legal"]
        assert await filter_values(s, name, [big]) == ["sales"]
        assert await filter_values(s, name, [big, small]) == ["legal", "sales"]
        assert await filter_values(s, name, [uuid.uuid4()]) == []
