"""A base's hybrid blend (``hybrid_vector_weight``), through the upload app in-process on a
fresh database: the product's when it names none, all vector at 1, all keyword at 0, back
to the product's at null, and a weight outside 0-1 refused naming the field, nothing kept."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import numpy as np
import pytest
from docproc_common.auth import EDIT, SECRETS_VIEW, VIEW
from docproc_common.runtime import Runtime, build_app
from docproc_common.vectorstore import ensure_table, write_chunks
from docproc_testing.embedding_standin import StandIn, running_standin, standin_vector
from docproc_testing.rows import chunk_stamp
from docproc_testing.runtime import api_client, fresh_runtime
from docproc_upload.app import build
from sqlalchemy import text

pytestmark = pytest.mark.integration

SMALL = "text-embedding-3-small"
QUERY = "winter penguins"
#: Chunks the two rankings order differently: the stand-in's vectors do not read words.
TEXTS = [
    "Penguins in winter: penguins huddle through the winter.",
    "Winter closes the harbour.",
    "A capybara is a large rodent.",
    "Kafka topics are partitioned logs.",
    "Penguins live in the south.",
    "The office closes at noon.",
]


@pytest.fixture(scope="module")
def embeddings() -> Iterator[StandIn]:
    with running_standin(dims=1536, models=[SMALL]) as s:
        yield s


@pytest.fixture(scope="module")
async def runtime(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Runtime]:
    embedder = {"allowed_base_urls": ["http://127.0.0.1"], "probe_timeout_s": 2}
    async with fresh_runtime(tmp_path_factory.mktemp("media"), embedder=embedder) as rt:
        yield rt


@pytest.fixture(scope="module")
def alice(runtime: Runtime) -> httpx.AsyncClient:
    app = build_app(runtime, [build(runtime)], [], "docproc-test")
    return api_client(app, "alice", "acme", (VIEW, EDIT, SECRETS_VIEW))


async def base_body(c: httpx.AsyncClient, embeddings: StandIn, **extra: Any) -> dict[str, Any]:
    name = f"hw_{uuid.uuid4().hex[:8]}"
    key = {"name": f"key_{name}", "kind": "api_key", "provider": "openai"}
    r = await c.post("/secrets", json={**key, "value": {"api_key": "sk-test"}})
    assert r.status_code == 201, r.text
    return {
        "name": name,
        "collection_name": name,
        "embedding_provider": "openai",
        "embedding_model": SMALL,
        "embedding_secret_id": r.json()["id"],
        "embedding_base_url": embeddings.url,
        **extra,
    }


@pytest.fixture(scope="module")
async def kb(runtime: Runtime, alice: httpx.AsyncClient, embeddings: StandIn) -> dict[str, Any]:
    """A base on the embedding stand-in holding ``TEXTS`` (one chunk each)."""
    r = await alice.post("/kb", json=await base_body(alice, embeddings))
    assert r.status_code == 201, r.text
    created = dict(r.json())
    name = created["collection_name"]
    async with runtime.sessionmaker() as s, s.begin():
        await ensure_table(s, name, 1536, vector_type=created["vector_type"])
        for t in TEXTS:
            vector = np.array([standin_vector(t, 1536)], dtype=np.float32)
            await write_chunks(s, name, uuid.uuid4(), [t], vector, chunk_stamp(created["id"]))
    return created


async def order(c: httpx.AsyncClient, kb: dict[str, Any], mode: str) -> list[int]:
    body = {"query": QUERY, "collections": [kb["collection_name"]], "top_k": 6, "mode": mode}
    r = await c.post("/rag/search", json=body)
    assert r.status_code == 200, r.text
    return [TEXTS.index(h["content"]) for h in r.json()["results"]]


async def weigh(c: httpx.AsyncClient, kb: dict[str, Any], weight: float | None) -> None:
    r = await c.patch(f"/kb/{kb['id']}", json={"hybrid_vector_weight": weight})
    assert r.status_code == 200, r.text
    assert r.json()["hybrid_vector_weight"] == weight


async def test_a_base_chooses_how_hybrid_blends_its_rankings(
    runtime: Runtime, alice: httpx.AsyncClient, kb: dict[str, Any]
) -> None:
    assert kb["hybrid_vector_weight"] is None
    vector, keyword = await order(alice, kb, "vector"), await order(alice, kb, "keyword")
    assert keyword[:3] == [0, 1, 4]  # the chunks holding the query's words, by BM25
    assert vector[:3] != keyword[:3]  # the test can tell the rankings apart
    blended = await order(alice, kb, "hybrid")
    try:
        await weigh(alice, kb, 1.0)
        assert await order(alice, kb, "hybrid") == vector
        await weigh(alice, kb, 0.0)
        assert (await order(alice, kb, "hybrid"))[:3] == keyword[:3]
    finally:
        await weigh(alice, kb, None)
    assert await order(alice, kb, "hybrid") == blended
    got = await alice.get(f"/kb/{kb['id']}")
    assert got.json()["hybrid_vector_weight"] is None
    async with runtime.sessionmaker() as s:
        changes = [
            dict(d)
            for (d,) in await s.execute(
                text(
                    "SELECT details FROM audit_log WHERE target = :t "
                    "AND action = 'kb.hybrid_vector_weight_changed' ORDER BY id"
                ),
                {"t": kb["id"]},
            )
        ]
    assert changes == [
        {"from": None, "to": 1.0},
        {"from": 1.0, "to": 0.0},
        {"from": 0.0, "to": None},
    ]


@pytest.mark.parametrize("weight", [1.5, -0.1, "heavy"])
async def test_a_weight_outside_zero_to_one_is_refused_naming_the_field(
    alice: httpx.AsyncClient, kb: dict[str, Any], embeddings: StandIn, weight: object
) -> None:
    body = await base_body(alice, embeddings, hybrid_vector_weight=weight)
    created = await alice.post("/kb", json=body)
    assert created.status_code == 422, created.text
    fields = {f["field"] for f in created.json()["error"]["details"]["fields"]}
    assert fields == {"hybrid_vector_weight"}
    names = {b["name"] for b in (await alice.get("/kb")).json()}
    assert body["name"] not in names  # nothing kept
    patched = await alice.patch(f"/kb/{kb['id']}", json={"hybrid_vector_weight": weight})
    assert patched.status_code == 422, patched.text
    assert {f["field"] for f in patched.json()["error"]["details"]["fields"]} == {
        "hybrid_vector_weight"
    }
    assert (await alice.get(f"/kb/{kb['id']}")).json()["hybrid_vector_weight"] is None
