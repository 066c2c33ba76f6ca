"""The rerank stage of ``POST /rag/search`` and a base's rerank setting, through the upload
app in-process on a fresh database: off by default (the ranking as it was), the mounted
cross-encoder's order (a tiny one exported here), a provider's order (a strict stand-in of
Cohere's ``/v2/rerank``), the key checked as an embedding key is, and the refusals named."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from docproc_common.auth import EDIT, SECRETS_VIEW, VIEW
from docproc_common.runtime import Runtime, build_app
from docproc_common.vectorstore import ensure_table, write_chunks
from docproc_testing.embedding_standin import StandIn, running_standin, standin_vector
from docproc_testing.rerank_standin import RerankStandIn, running_rerank_standin, standin_score
from docproc_testing.rows import chunk_stamp
from docproc_testing.runtime import api_client, fresh_runtime
from docproc_testing.tiny_rerankers import overlap, tiny_cross_encoder
from docproc_upload.app import build

pytestmark = pytest.mark.integration

SMALL = "text-embedding-3-small"
QUERY = "penguins on the antarctic ice in winter"
TEXTS = [
    "A capybara is a large rodent of South America.",
    "Emperor penguins breed on the antarctic ice in winter.",
    "Penguins live in the southern hemisphere.",
    "Kafka topics are partitioned logs.",
    "Ice shelves of the antarctic coast calve icebergs.",
    "In winter the office closes at noon.",
    "Antarctic krill feed penguins, seals and whales.",
]
TOP_K = 4
Client = Callable[..., httpx.AsyncClient]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_cross_encoder(tmp_path_factory.mktemp("ce"), [QUERY, *TEXTS])


@pytest.fixture(scope="module")
def embeddings() -> Iterator[StandIn]:
    with running_standin(dims=1536, models=[SMALL]) as s:
        yield s


@pytest.fixture(scope="module")
def provider() -> Iterator[RerankStandIn]:
    with running_rerank_standin(flavour="cohere") as s:
        yield s


@pytest.fixture(scope="module")
async def runtime(
    tmp_path_factory: pytest.TempPathFactory, model_dir: Path
) -> AsyncIterator[Runtime]:
    embedder = {
        "allowed_base_urls": ["http://127.0.0.1"],
        "probe_timeout_s": 2,
        "rerank_model_dir": str(model_dir),
    }
    async with fresh_runtime(tmp_path_factory.mktemp("media"), embedder=embedder) as rt:
        yield rt


def client_of(runtime: Runtime) -> Client:
    app = build_app(runtime, [build(runtime)], [], "docproc-test")

    def make(user: str, org: str | None = None, perms: tuple[str, ...] = ()) -> httpx.AsyncClient:
        return api_client(app, user, org, perms)

    return make


@pytest.fixture(scope="module")
def alice(runtime: Runtime) -> httpx.AsyncClient:
    return client_of(runtime)("alice", "acme", (VIEW, EDIT, SECRETS_VIEW))


async def secret(c: httpx.AsyncClient, provider: str, key: str) -> str:
    body = {
        "name": f"key_{uuid.uuid4().hex[:8]}",
        "kind": "api_key",
        "provider": provider,
        "value": {"api_key": key},
    }
    r = await c.post("/secrets", json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


@pytest.fixture(scope="module")
async def kb(runtime: Runtime, alice: httpx.AsyncClient, embeddings: StandIn) -> dict[str, Any]:
    """A base on ``openai`` through the embedding stand-in, holding ``TEXTS`` (one chunk each)."""
    name = f"rr_{uuid.uuid4().hex[:8]}"
    body = {
        "name": name,
        "collection_name": name,
        "embedding_provider": "openai",
        "embedding_model": SMALL,
        "embedding_secret_id": await secret(alice, "openai", "sk-test"),
        "embedding_base_url": embeddings.url,
    }
    r = await alice.post("/kb", json=body)
    assert r.status_code == 201, r.text
    created = dict(r.json())
    assert created["rerank"] is None  # off by default
    kb_id = uuid.UUID(created["id"])
    async with runtime.sessionmaker() as s, s.begin():
        await ensure_table(s, name, 1536, vector_type=created["vector_type"])
        for t in TEXTS:
            vector = np.array([standin_vector(t, 1536)], dtype=np.float32)
            await write_chunks(s, name, uuid.uuid4(), [t], vector, chunk_stamp(kb_id))
    return created


async def search(c: httpx.AsyncClient, kb: dict[str, Any], **body: Any) -> httpx.Response:
    body = {"query": QUERY, "collections": [kb["collection_name"]], "top_k": TOP_K, **body}
    return await c.post("/rag/search", json={"mode": "vector", **body})


async def order(c: httpx.AsyncClient, kb: dict[str, Any], **body: Any) -> list[int]:
    r = await search(c, kb, **body)
    assert r.status_code == 200, r.text
    return [TEXTS.index(h["content"]) for h in r.json()["results"]]


def ranked_by(score: Callable[[str], float]) -> list[int]:
    return sorted(range(len(TEXTS)), key=lambda i: -score(TEXTS[i]))[:TOP_K]


async def set_rerank(c: httpx.AsyncClient, kb: dict[str, Any], rerank: Any) -> httpx.Response:
    return await c.patch(f"/kb/{kb['id']}", json={"rerank": rerank})


def fields(r: httpx.Response) -> set[str]:
    return {f["field"] for f in r.json()["error"]["details"].get("fields", [])}


async def test_off_by_default_the_ranking_is_unchanged(
    alice: httpx.AsyncClient, kb: dict[str, Any]
) -> None:
    query = np.array(standin_vector(QUERY, 1536))
    by_vector = ranked_by(lambda t: float(np.dot(query, standin_vector(t, 1536))))
    assert await order(alice, kb) == by_vector
    assert await order(alice, kb, rerank=False) == by_vector
    refused = await search(alice, kb, rerank=True)
    assert refused.status_code == 409
    assert fields(refused) == {"rerank"}
    assert "has no reranker" in refused.json()["error"]["message"]


async def test_the_mounted_cross_encoder_orders_the_hits(
    alice: httpx.AsyncClient, kb: dict[str, Any]
) -> None:
    before = await order(alice, kb)
    r = await set_rerank(alice, kb, {"provider": "local"})
    assert r.status_code == 200, r.text
    assert r.json()["rerank"]["provider"] == "local"
    try:
        by_model = ranked_by(lambda t: overlap(QUERY, t, [QUERY, *TEXTS]))
        assert by_model != before  # the test can tell the two orders apart
        assert await order(alice, kb) == by_model
        hits = (await search(alice, kb)).json()["results"]
        assert all(0 < h["score"] < 1 for h in hits)  # the model's relevance
        assert await order(alice, kb, rerank=False) == before
        # every mode ends with the stage
        assert (
            await order(alice, kb, mode="keyword", rerank=True)
            == by_model[: len(await order(alice, kb, mode="keyword", rerank=False))]
        )
    finally:
        assert (await set_rerank(alice, kb, None)).status_code == 200
    assert await order(alice, kb) == before


async def test_a_providers_rerank_endpoint_orders_the_hits(
    alice: httpx.AsyncClient, kb: dict[str, Any], provider: RerankStandIn
) -> None:
    setting = {
        "provider": "cohere",
        "model": "rerank-v3.5",
        "secret_id": await secret(alice, "cohere", provider.api_key),
        "base_url": provider.url,
    }
    r = await set_rerank(alice, kb, setting)
    assert r.status_code == 200, r.text
    try:
        assert await order(alice, kb) == ranked_by(lambda t: standin_score(QUERY, t))
        sent = provider.requests[-1].body
        assert sent["model"] == "rerank-v3.5" and sent["query"] == QUERY
        assert sorted(sent["documents"]) == sorted(TEXTS)  # every candidate, up to 50

        # a key the provider rejects: a clear 502 naming the collection, no results
        bad = {**setting, "secret_id": await secret(alice, "cohere", "rk-revoked")}
        assert (await set_rerank(alice, kb, bad)).status_code == 200
        refused = await search(alice, kb)
        assert refused.status_code == 502
        error = refused.json()["error"]
        assert error["code"] == "RERANK_CREDENTIAL_REJECTED"
        assert kb["collection_name"] in error["message"] and "HTTP 401" in error["message"]

        # the key deleted from the vault: refused before any call
        assert (await alice.delete(f"/secrets/{bad['secret_id']}")).status_code == 204
        calls = len(provider.requests)
        gone = await search(alice, kb)
        assert gone.status_code == 409
        assert gone.json()["error"]["code"] == "RERANK_NOT_CONFIGURED"
        assert "the secret was deleted" in gone.json()["error"]["message"]
        assert len(provider.requests) == calls
    finally:
        assert (await set_rerank(alice, kb, None)).status_code == 200


async def test_a_setting_is_checked_as_an_embedding_key_is(
    runtime: Runtime, alice: httpx.AsyncClient, kb: dict[str, Any], provider: RerankStandIn
) -> None:
    make = client_of(runtime)
    own = await secret(alice, "cohere", "rk-alice")
    cohere = {"provider": "cohere", "model": "rerank-v3.5", "base_url": provider.url}
    async with make("bob", "acme", (VIEW, EDIT, SECRETS_VIEW)) as bob:
        bobs = await secret(bob, "cohere", "rk-bob")  # private: alice cannot see it
        cases: list[tuple[Any, str, str]] = [
            ({"provider": "nope"}, "rerank.provider", "Unknown rerank provider"),
            ({**cohere}, "rerank.secret_id", "names the vault key"),
            ({**cohere, "secret_id": bobs}, "rerank.secret_id", "No cohere API key"),
            ({**cohere, "secret_id": str(uuid.uuid4())}, "rerank.secret_id", "No cohere API key"),
            (
                {**cohere, "secret_id": await secret(alice, "openai", "sk")},
                "rerank.secret_id",
                "No cohere API key",
            ),
            ({**cohere, "secret_id": own, "model": None}, "rerank.model", "names the model"),
            (
                {**cohere, "secret_id": own, "base_url": "https://evil.example/v2"},
                "rerank.base_url",
                "not one of cohere's hosts",
            ),
            ({"provider": "tei", "secret_id": own}, "rerank.base_url", "names the address"),
            ({"provider": "local", "secret_id": own}, "rerank.secret_id", "takes no secret_id"),
            ({"provider": "local", "extra": 1}, "rerank.extra", "not valid"),
        ]
        for setting, field, message in cases:
            r = await set_rerank(alice, kb, setting)
            assert r.status_code == (422 if "extra" in setting else 400), (setting, r.text)
            assert field in fields(r), (setting, r.text)
            assert message in r.json()["error"]["message"], (setting, r.text)
        # a key bob may not lend is refused to him even at creation
        name = f"rr_{uuid.uuid4().hex[:8]}"
        created = await bob.post(
            "/kb",
            json={
                "name": name,
                "embedding_provider": "local",
                "embedding_model": "sentence-transformers/all-MiniLM-L6-v2",
                "rerank": {**cohere, "secret_id": own},
            },
        )
        assert created.status_code == 400 and fields(created) == {"rerank.secret_id"}
    assert (await alice.get(f"/kb/{kb['id']}")).json()["rerank"] is None  # nothing changed


async def test_local_needs_a_mounted_model(runtime: Runtime) -> None:
    embedder = runtime.settings.embedder.model_copy(update={"rerank_model_dir": None})
    bare = dataclasses.replace(
        runtime, settings=runtime.settings.model_copy(update={"embedder": embedder})
    )
    async with client_of(bare)("carol", "acme", (VIEW, EDIT)) as carol:
        r = await carol.post(
            "/kb",
            json={
                "name": f"rr_{uuid.uuid4().hex[:8]}",
                "embedding_provider": "local",
                "embedding_model": "sentence-transformers/all-MiniLM-L6-v2",
                "rerank": {"provider": "local"},
            },
        )
    assert r.status_code == 400
    assert fields(r) == {"rerank.provider"}
    assert "mounts no cross-encoder" in r.json()["error"]["message"]


async def test_repointing_a_bound_key_needs_what_binding_it_needs(
    runtime: Runtime, alice: httpx.AsyncClient, provider: RerankStandIn
) -> None:
    """An editor of an organization's base who may not see its reranker's shared key
    (no ``secrets:view``) cannot send that key to another address; nothing changes."""
    body = {
        "name": f"key_{uuid.uuid4().hex[:8]}",
        "kind": "api_key",
        "provider": "cohere",
        "value": {"api_key": "rk-shared"},
        "visibility": "org",
    }
    r = await alice.post("/secrets", json=body)
    assert r.status_code == 201, r.text
    shared = r.json()["id"]
    name = f"rr_{uuid.uuid4().hex[:8]}"
    bound = {"provider": "cohere", "model": "rerank-v3.5", "base_url": provider.url}
    r = await alice.post(
        "/kb",
        json={
            "name": name,
            "collection_name": name,
            "scope": "org",
            "embedding_provider": "local",
            "embedding_model": "sentence-transformers/all-MiniLM-L6-v2",
            "rerank": {**bound, "secret_id": shared},
        },
    )
    assert r.status_code == 201, r.text
    base = r.json()
    async with client_of(runtime)("dave", "acme", (VIEW, EDIT)) as dave:
        elsewhere = {**bound, "secret_id": shared, "base_url": f"{provider.url}/elsewhere"}
        r = await set_rerank(dave, base, elsewhere)
        assert r.status_code == 403, r.text
        assert fields(r) == {"rerank.base_url"}
        # the same key at the same address is his to keep naming
        r = await set_rerank(dave, base, {**bound, "secret_id": shared})
        assert r.status_code == 200, r.text
    assert (await alice.get(f"/kb/{base['id']}")).json()["rerank"] == base["rerank"]
