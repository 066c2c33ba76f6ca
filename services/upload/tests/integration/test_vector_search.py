"""Reading the runtime vector tables (``docproc_upload.search``): search filters, date
ranges and the knowledge-base scope applied before top-k; counts, facets and what keeps the
last bases' table read the chunks a search reads."""

from __future__ import annotations

import uuid
from datetime import date

import pytest
from docproc_common.runtime import Runtime
from docproc_common.vectorstore import ensure_table, write_chunks
from docproc_testing.rows import chunk_stamp, unit_vectors
from docproc_upload.knowledge_bases.repository import holds_unfiled_beyond
from docproc_upload.search.repository import SearchFilters, count_vectors, filter_values
from docproc_upload.search.service import search_collection
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

pytestmark = pytest.mark.integration


@pytest.fixture
def sessions(runtime: Runtime) -> async_sessionmaker[AsyncSession]:
    """The module's fresh database (conftest's ``runtime``); each test has its own table."""
    return runtime.sessionmaker


async def test_a_selective_filter_still_fills_the_top_k(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    name = f"sel_{uuid.uuid4().hex[:8]}"
    kb = uuid.uuid4()
    vectors = unit_vectors(2000, 7)
    async with sessions() as s, s.begin():
        await ensure_table(s, name, 384)
        await write_chunks(
            s, name, uuid.uuid4(), [f"c{i}" for i in range(1980)], vectors[:1980], chunk_stamp(kb)
        )
        await write_chunks(
            s,
            name,
            uuid.uuid4(),
            [f"rare{i}" for i in range(20)],
            vectors[1980:],
            chunk_stamp(kb, document_type="rare"),
        )
    async with sessions() as s, s.begin():
        hits = await search_collection(
            s,
            name,
            vectors[0],
            knowledge_base_ids=[kb],
            top_k=10,
            filters=SearchFilters(document_type=["rare"]),
        )
        other_kb = await search_collection(
            s, name, vectors[0], knowledge_base_ids=[uuid.uuid4()], top_k=10
        )
    assert len(hits) == 10
    assert all(h.content.startswith("rare") for h in hits)
    assert other_kb == []


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
                chunk_stamp(kb, filename=filename, document_type=doctype, document_date=day),
            )

    async def found(**filters: object) -> set[str]:
        async with sessions() as s, s.begin():
            hits = await search_collection(
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
            chunk_stamp(big, filename="big.txt", organizational_unit="sales"),
        )
        await write_chunks(
            s,
            name,
            uuid.uuid4(),
            [f"small{i}" for i in range(len(small_vectors))],
            small_vectors,
            chunk_stamp(small, filename="small.txt", organizational_unit="legal"),
        )

    async def page(kbs: list[uuid.UUID], top_k: int) -> list[str]:
        async with sessions() as s, s.begin():
            # the query is one of the big base's own chunks: its nearest neighbours are all big's
            hits = await search_collection(
                s, name, big_vectors[0], knowledge_base_ids=kbs, top_k=top_k
            )
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


async def test_count_and_facets_read_the_chunks_search_reads(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    """An app-scoped base's search also reads the operator's unfiled global chunks; its count
    and its facets take exactly those too, and nothing else unfiled."""
    name = f"opscope_{uuid.uuid4().hex[:8]}"
    app = uuid.uuid4()
    unfiled = {"knowledge_base_id": None, "organization_id": None}
    sets = {
        "own": (chunk_stamp(app, organization_id=None, organizational_unit="own"), 2),
        "operator": (
            chunk_stamp(app, **unfiled, writer_kind="operator", organizational_unit="op"),
            3,
        ),
        "unknown": (chunk_stamp(app, **unfiled, organizational_unit="unknown"), 4),
        "tenant": (chunk_stamp(app, knowledge_base_id=None, organizational_unit="tenant"), 5),
    }
    async with sessions() as s, s.begin():
        await ensure_table(s, name, 384)
        for i, (label, (st, n)) in enumerate(sets.items()):
            vectors = unit_vectors(n, 20 + i)
            await write_chunks(s, name, uuid.uuid4(), [label] * n, vectors, st)
    query = unit_vectors(1, 30)[0]
    async with sessions() as s, s.begin():
        for include, labels, units in (
            (False, {"own"}, ["own"]),
            (True, {"own", "operator"}, ["op", "own"]),
        ):
            hits = await search_collection(
                s, name, query, knowledge_base_ids=[app], top_k=50, include_operator=include
            )
            assert {h.content for h in hits} == labels
            assert await count_vectors(s, name, [app], include_operator=include) == len(hits)
            assert await filter_values(s, name, [app], include_operator=include) == units


async def test_what_keeps_the_last_bases_table_is_unfiled_content_they_do_not_take(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    name = f"beyond_{uuid.uuid4().hex[:8]}"
    unfiled = {"knowledge_base_id": None}

    async def beyond(*, operator: bool, orgs: list[str]) -> bool:
        async with sessions() as s:
            return await holds_unfiled_beyond(s, name, operator=operator, organization_ids=orgs)

    assert await beyond(operator=False, orgs=[]) is False  # no table
    async with sessions() as s, s.begin():
        await ensure_table(s, name, 384)
        await write_chunks(
            s, name, uuid.uuid4(), ["filed"], unit_vectors(1, 40), chunk_stamp(uuid.uuid4())
        )
    assert await beyond(operator=False, orgs=[]) is False  # a filed chunk is some base's
    sets = [
        {**unfiled, "organization_id": None, "writer_kind": "operator"},
        {**unfiled, "organization_id": "acme"},
        {**unfiled, "organization_id": "globex"},
    ]
    async with sessions() as s, s.begin():
        for i, kw in enumerate(sets):
            vectors = unit_vectors(1, 41 + i)
            await write_chunks(
                s, name, uuid.uuid4(), ["unfiled"], vectors, chunk_stamp(uuid.uuid4(), **kw)
            )
    assert await beyond(operator=True, orgs=["acme", "globex"]) is False
    assert await beyond(operator=False, orgs=["acme", "globex"]) is True  # the operator's
    assert await beyond(operator=True, orgs=["acme"]) is True  # another tenant's
    async with sessions() as s, s.begin():  # a legacy chunk of unknown origin: nobody takes it
        legacy = chunk_stamp(uuid.uuid4(), **unfiled, organization_id=None)
        await write_chunks(s, name, uuid.uuid4(), ["legacy"], unit_vectors(1, 45), legacy)
    assert await beyond(operator=True, orgs=["acme", "globex"]) is True
