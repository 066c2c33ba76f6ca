"""The runtime vector tables: concurrent first writers, batched writes, redelivery, stamps."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import numpy as np
import pytest
from docproc_common.db.engine import create_engine, create_sessionmaker
from docproc_common.settings import DatabaseSettings
from docproc_common.testing.db import create_test_database
from docproc_common.vectorstore import ChunkStamp, SearchFilters, ensure_table, search, write_chunks
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


def stamp(kb: uuid.UUID, **kw: object) -> ChunkStamp:
    base: dict[str, object] = {
        "knowledge_base_id": kb,
        "organization_id": "acme",
        "tracking_id": uuid.uuid4(),
        "source": "upload",
        "document_type": "txt",
        "organizational_unit": None,
        "document_date": None,
        "source_path": None,
        "filename": "f.txt",
        "content_hash": None,
        "writer_kind": "document",
    }
    return ChunkStamp(**{**base, **kw})  # type: ignore[arg-type]


def unit_vectors(n: int, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


async def test_concurrent_first_writers_create_one_table_without_errors(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    name = f"race_{uuid.uuid4().hex[:8]}"
    kb = uuid.uuid4()

    async def writer(i: int) -> None:
        async with sessions() as s, s.begin():
            await ensure_table(s, name, 384)
            await write_chunks(s, name, uuid.uuid4(), [f"doc {i}"], unit_vectors(1, i), stamp(kb))

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
        "embedding_idx": "hnsw (embedding vector_cosine_ops)",
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
    }


async def test_a_rewrite_of_the_same_document_replaces_its_set(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    name = f"redo_{uuid.uuid4().hex[:8]}"
    kb, doc = uuid.uuid4(), uuid.uuid4()
    for _ in range(2):  # a redelivered event
        async with sessions() as s, s.begin():
            await ensure_table(s, name, 384)
            await write_chunks(s, name, doc, ["a", "b", "c"], unit_vectors(3), stamp(kb))
    async with sessions() as s:
        rows = (
            await s.execute(text(f"SELECT count(*), count(DISTINCT chunk_no) FROM rag_{name}"))
        ).one()
    assert tuple(rows) == (3, 3)


async def test_a_selective_filter_still_fills_the_top_k(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    name = f"sel_{uuid.uuid4().hex[:8]}"
    kb = uuid.uuid4()
    vectors = unit_vectors(2000, 7)
    async with sessions() as s, s.begin():
        await ensure_table(s, name, 384)
        await write_chunks(
            s, name, uuid.uuid4(), [f"c{i}" for i in range(1980)], vectors[:1980], stamp(kb)
        )
        await write_chunks(
            s,
            name,
            uuid.uuid4(),
            [f"rare{i}" for i in range(20)],
            vectors[1980:],
            stamp(kb, document_type="rare"),
        )
    async with sessions() as s, s.begin():
        hits = await search(
            s,
            name,
            vectors[0],
            knowledge_base_ids=[kb],
            top_k=10,
            filters=SearchFilters(document_type=["rare"]),
        )
        other_kb = await search(s, name, vectors[0], knowledge_base_ids=[uuid.uuid4()], top_k=10)
    assert len(hits) == 10
    assert all(h.content.startswith("rare") for h in hits)
    assert other_kb == []
