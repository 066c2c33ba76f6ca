"""The vault API, embedding choices at creation, provider moves, endpoints, and resolution.

The upload service's routers in-process (ASGI) on a fresh database of the test
Postgres; HTTP endpoints are a scripted stand-in on 127.0.0.1.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import os
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from docproc_common.auth import EDIT, SECRETS_VIEW, VIEW
from docproc_common.db.models import AuditLog, EmbeddingEndpoint, Secret
from docproc_common.egress import pinned
from docproc_common.embedding.client import (
    CredentialSource,
    EmbeddingNotConfiguredError,
    EmbeddingTarget,
    resolve_embedding,
)
from docproc_common.runtime import Runtime, build_app
from docproc_common.settings import Settings
from docproc_common.vault import create_secret, open_secret, rewrap_all
from docproc_testing.embedding_standin import StandIn, running_standin
from docproc_testing.runtime import api_client, fresh_runtime
from docproc_upload.app import build
from pydantic import SecretStr
from sqlalchemy import func, select, text

pytestmark = pytest.mark.integration

Client = Callable[..., httpx.AsyncClient]
SMALL = "text-embedding-3-small"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
NO_KEY = "No openai API key with this id was found in the vault"


def uniq(prefix: str = "c") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
async def runtime(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Runtime]:
    # the stand-ins are on loopback: organizations' endpoints may be private here, except
    # through ``strict`` (TestEndpointAddresses)
    embedder = {
        "allowed_base_urls": ["http://127.0.0.1"],
        "probe_timeout_s": 2,
        "allow_private_endpoints": True,
    }
    async with fresh_runtime(tmp_path_factory.mktemp("media"), embedder=embedder) as rt:
        yield rt


@pytest.fixture(scope="module")
def client(runtime: Runtime) -> Client:
    app = build_app(runtime, [build(runtime)], [], "docproc-test")

    def make(
        user: str, org: str | None = None, perms: tuple[str, ...] = (), admin: bool = False
    ) -> httpx.AsyncClient:
        return api_client(app, user, org, perms, admin=admin)

    return make


@pytest.fixture(scope="module")
def strict(runtime: Runtime) -> Client:
    """The same database, served as a deployment runs by default: an organization's embedding
    endpoints must be public (``EMBEDDER__ALLOW_PRIVATE_ENDPOINTS`` off)."""
    embedder = runtime.settings.embedder.model_copy(update={"allow_private_endpoints": False})
    settings = runtime.settings.model_copy(update={"embedder": embedder})
    served = dataclasses.replace(runtime, settings=settings)
    app = build_app(served, [build(served)], [], "docproc-test")

    def make(
        user: str, org: str | None = None, perms: tuple[str, ...] = (), admin: bool = False
    ) -> httpx.AsyncClient:
        return api_client(app, user, org, perms, admin=admin)

    return make


@pytest.fixture(scope="module")
def users(client: Client) -> dict[str, httpx.AsyncClient]:
    return {
        # alice: member who edits collections and sees shared secrets
        "alice": client("alice", "acme", (VIEW, EDIT, SECRETS_VIEW)),
        # bob: sees shared secrets, cannot edit collections
        "bob": client("bob", "acme", (VIEW, SECRETS_VIEW)),
        # carol: edits collections, cannot see shared secrets
        "carol": client("carol", "acme", (VIEW, EDIT)),
        "dave": client("dave", "globex", (VIEW, EDIT, SECRETS_VIEW)),
        "root": client("root", None, (), True),
        "solo": client("solo"),
    }


async def secret(
    c: httpx.AsyncClient,
    value: dict[str, Any] | None = None,
    *,
    kind: str = "api_key",
    provider: str | None = "openai",
    visibility: str = "private",
) -> str:
    body: dict[str, Any] = {
        "name": uniq("key"),
        "kind": kind,
        "value": value or {"api_key": f"sk-{uuid.uuid4().hex}"},
        "visibility": visibility,
    }
    if provider:
        body["provider"] = provider
    r = await c.post("/secrets", json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


async def kb(c: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    body.setdefault("name", uniq("kb"))
    body.setdefault("collection_name", body["name"])
    r = await c.post("/kb", json=body)
    assert r.status_code == 201, r.text
    return dict(r.json())


def fields(response: httpx.Response) -> set[str]:
    return {f["field"] for f in response.json()["error"]["details"].get("fields", [])}


class TestSecretsApi:
    async def test_value_never_comes_back(
        self, users: dict[str, httpx.AsyncClient], runtime: Runtime
    ) -> None:
        value = f"sk-{uuid.uuid4().hex}"
        r = await users["alice"].post(
            "/secrets",
            json={
                "name": "mine",
                "kind": "api_key",
                "provider": "openai",
                "value": {"api_key": value},
            },
        )
        assert r.status_code == 201
        assert value not in r.text
        assert "value" not in r.json()
        listed = await users["alice"].get("/secrets")
        assert value not in listed.text
        assert r.json()["id"] in {s["id"] for s in listed.json()}
        async with runtime.sessionmaker() as s:
            row = await s.get(Secret, uuid.UUID(r.json()["id"]))
            assert row is not None
            assert value.encode() not in row.ciphertext
            opened = await open_secret(
                s,
                secret_id=row.id,
                organization_id="acme",
                master_key=runtime.settings.vault.key(),
            )
            assert opened is not None
            assert opened.value == {"api_key": value}
            assert opened.kind == "api_key"
            other_org = await open_secret(
                s,
                secret_id=row.id,
                organization_id="globex",
                master_key=runtime.settings.vault.key(),
            )
            assert other_org is None
            wrong_key = await open_secret(
                s,
                secret_id=row.id,
                organization_id="acme",
                master_key=base64.b64encode(os.urandom(32)).decode(),
            )
            assert wrong_key is None

    async def test_refused_value_is_not_echoed(self, users: dict[str, httpx.AsyncClient]) -> None:
        r = await users["alice"].post(
            "/secrets",
            json={
                "name": "bad",
                "kind": "aws_credentials",
                "value": {"access_key_id": "AKIA-LEAK", "secret_access_key": "", "x": "sk-leak"},
            },
        )
        assert r.status_code == 400
        assert "LEAK" not in r.text
        assert "leak" not in r.text
        assert fields(r) == {"value.secret_access_key", "value.x"}
        r = await users["alice"].post(
            "/secrets", json={"name": "k", "kind": "api_key", "value": {"api_key": "sk-x"}}
        )
        assert r.status_code == 400
        assert fields(r) == {"provider"}
        r = await users["alice"].post(
            "/secrets", json={"name": "k", "kind": "api_key", "value": "sk-leak-string"}
        )
        assert r.status_code == 422
        assert "sk-leak-string" not in r.text

    async def test_sharing_needs_secrets_view_in_an_org(
        self, users: dict[str, httpx.AsyncClient]
    ) -> None:
        for who in ("carol", "solo"):
            r = await users[who].post(
                "/secrets",
                json={
                    "name": "s",
                    "kind": "git_token",
                    "value": {"token": "t"},
                    "visibility": "org",
                },
            )
            assert r.status_code == 403, who

    async def test_who_sees_what(self, users: dict[str, httpx.AsyncClient]) -> None:
        private = await secret(users["alice"])
        shared = await secret(users["alice"], visibility="org")
        token = await secret(users["alice"], {"token": "t"}, kind="git_token", provider=None)

        async def seen(who: str, **params: str) -> set[str]:
            r = await users[who].get("/secrets", params=params)
            assert r.status_code == 200
            return {s["id"] for s in r.json()}

        assert {private, shared, token} <= await seen("alice")
        assert await seen("alice", kind="git_token") >= {token}
        assert private not in await seen("alice", kind="git_token")
        assert shared in await seen("bob")
        assert private not in await seen("bob")
        assert not {private, shared} & await seen("carol")
        assert not {private, shared} & await seen("dave")
        assert (
            await users["alice"].get("/secrets", params={"kind": "password"})
        ).status_code == 422

    async def test_delete_rules(self, users: dict[str, httpx.AsyncClient]) -> None:
        private = await secret(users["alice"])
        shared = await secret(users["alice"], visibility="org")
        assert (await users["bob"].delete(f"/secrets/{private}")).status_code == 404
        assert (await users["dave"].delete(f"/secrets/{shared}")).status_code == 404
        assert (await users["carol"].delete(f"/secrets/{shared}")).status_code == 404
        assert (await users["bob"].delete(f"/secrets/{shared}")).status_code == 403
        admin = await secret(users["bob"], visibility="org")
        assert (await users["alice"].delete(f"/secrets/{admin}")).status_code == 204
        assert (await users["alice"].delete(f"/secrets/{private}")).status_code == 204
        assert (await users["alice"].delete(f"/secrets/{private}")).status_code == 404
        assert (await users["alice"].delete(f"/secrets/{shared}")).status_code == 204


class TestCatalogApi:
    async def test_catalog(self, users: dict[str, httpx.AsyncClient]) -> None:
        r = await users["solo"].get("/rag/embedding-models")
        assert r.status_code == 200
        providers = {p["name"]: p for p in r.json()["providers"]}
        assert set(providers) == {"local", "openai", "openrouter", "ollama"}
        assert providers["ollama"]["credential"] == "endpoint"
        assert {"model": SMALL, "dimensions": 1536, "max_input_tokens": 8191} in providers[
            "openai"
        ]["models"]

    async def test_endpoint_is_asked(self, users: dict[str, httpx.AsyncClient]) -> None:
        c = users["solo"]
        with running_standin(models=["openai/text-embedding-3-large", "some/chat-model"]) as s:
            r = await c.get("/rag/embedding-models/openrouter", params={"base_url": s.url})
        assert r.status_code == 200
        assert r.json()["confirmed"] is True
        assert [m["model"] for m in r.json()["models"]] == ["openai/text-embedding-3-large"]
        assert r.json()["models"][0]["dimensions"] == 3072  # the width comes from the catalog
        assert s.requests[0].path == "/v1/models"

    async def test_unreachable_endpoint_is_unconfirmed(
        self, users: dict[str, httpx.AsyncClient]
    ) -> None:
        with running_standin() as s:
            url = s.url
        r = await users["solo"].get("/rag/embedding-models/openrouter", params={"base_url": url})
        assert r.status_code == 200
        assert r.json()["confirmed"] is False
        assert len(r.json()["models"]) == 2
        with running_standin(status=500) as s:
            r = await users["solo"].get(
                "/rag/embedding-models/openrouter", params={"base_url": s.url}
            )
        assert r.json()["confirmed"] is False

    async def test_base_url_outside_policy(self, users: dict[str, httpx.AsyncClient]) -> None:
        r = await users["solo"].get(
            "/rag/embedding-models/openrouter", params={"base_url": "https://evil.example/v1"}
        )
        assert r.status_code == 400
        assert fields(r) == {"base_url"}
        r = await users["solo"].get("/rag/embedding-models/ollama")
        assert r.status_code == 404


class TestCreateKb:
    async def test_keyed_provider_needs_a_visible_key_of_its_own(
        self, users: dict[str, httpx.AsyncClient]
    ) -> None:
        alice, bob, carol = users["alice"], users["bob"], users["carol"]
        r = await alice.post(
            "/kb", json={"name": uniq(), "embedding_provider": "openai", "embedding_model": SMALL}
        )
        assert r.status_code == 400
        assert fields(r) == {"embedding_secret_id"}
        mine = await secret(alice)
        created = await kb(
            alice, embedding_provider="openai", embedding_model=SMALL, embedding_secret_id=mine
        )
        assert created["embedding_secret_id"] == mine
        assert created["embedding_dim"] == 1536

        refusals = []
        bobs_private = await secret(bob)
        for who, key in [
            (alice, bobs_private),  # another member's private key
            (alice, await secret(users["dave"])),  # another organization's
            (alice, await secret(alice, provider="openrouter")),  # another provider's
            (alice, await secret(alice, {"token": "t"}, kind="git_token", provider=None)),
            (alice, str(uuid.uuid4())),  # no such key
            (carol, await secret(alice, visibility="org")),  # shared, but carol lacks secrets:view
        ]:
            r = await who.post(
                "/kb",
                json={
                    "name": "same",
                    "collection_name": "same_refusal",
                    "embedding_provider": "openai",
                    "embedding_model": SMALL,
                    "embedding_secret_id": key,
                },
            )
            refusals.append((r.status_code, r.json()))
        expected = {
            "error": {
                "code": "INVALID_INPUT",
                "message": NO_KEY,
                "details": {"fields": [{"field": "embedding_secret_id", "message": "not found"}]},
            }
        }
        assert refusals == [(400, expected)] * len(refusals)

    async def test_shared_key_with_secrets_view(self, users: dict[str, httpx.AsyncClient]) -> None:
        shared = await secret(users["bob"], visibility="org")
        await kb(
            users["alice"],
            embedding_provider="openai",
            embedding_model=SMALL,
            embedding_secret_id=shared,
        )

    async def test_new_collection_has_no_default_model(
        self, users: dict[str, httpx.AsyncClient]
    ) -> None:
        r = await users["solo"].post("/kb", json={"name": uniq()})
        assert r.status_code == 400
        assert fields(r) == {"embedding_provider", "embedding_model"}
        r = await users["solo"].post(
            "/kb", json={"name": uniq(), "embedding_provider": "local", "embedding_model": "nope"}
        )
        assert fields(r) == {"embedding_model"}

    async def test_a_model_wider_than_the_index_is_refused(
        self, users: dict[str, httpx.AsyncClient], runtime: Runtime
    ) -> None:
        alice = users["alice"]
        large = {
            "embedding_provider": "openai",
            "embedding_model": "text-embedding-3-large",  # 3072 dims: over vector's 2000
            "embedding_secret_id": await secret(alice),
        }
        name = uniq("wide")
        refusals = [
            await alice.post("/kb", json={"name": name, **large, "vector_type": "vector"}),
            await alice.post(f"/rag/collections/{name}", json={**large, "vector_type": "vector"}),
        ]
        for r in refusals:
            assert r.status_code == 400, r.text
            assert fields(r) == {"embedding_model"}
            message = r.json()["error"]["message"]
            assert "3072" in message and "2000" in message and '"halfvec"' in message
        async with runtime.sessionmaker() as s:
            stored = await s.scalar(
                text("SELECT count(*) FROM knowledge_bases WHERE collection_name = :n"), {"n": name}
            )
        assert stored == 0
        created = await kb(alice, name=name, **large)  # halfvec, the default, takes 4000
        assert (created["embedding_dim"], created["vector_type"]) == (3072, "halfvec")

    async def test_local_takes_nothing(self, users: dict[str, httpx.AsyncClient]) -> None:
        key = await secret(users["solo"])
        r = await users["solo"].post(
            "/kb",
            json={
                "name": uniq(),
                "embedding_provider": "local",
                "embedding_model": MINILM,
                "embedding_secret_id": key,
            },
        )
        assert r.status_code == 400
        assert fields(r) == {"embedding_secret_id"}

    async def test_ollama(self, users: dict[str, httpx.AsyncClient]) -> None:
        alice = users["alice"]
        ours = (
            await alice.post(
                "/rag/embedding-endpoints",
                json={"name": "o", "base_url": "http://127.0.0.1:11434/v1/"},
            )
        ).json()
        assert ours["base_url"] == "http://127.0.0.1:11434/v1"
        theirs = (
            await users["dave"].post(
                "/rag/embedding-endpoints", json={"name": "o", "base_url": "http://10.0.0.1/v1"}
            )
        ).json()
        body = {"name": uniq(), "embedding_provider": "ollama", "embedding_model": "all-minilm"}
        r = await alice.post("/kb", json=body)
        assert fields(r) == {"embedding_endpoint_id"}
        r = await alice.post("/kb", json={**body, "embedding_endpoint_id": theirs["id"]})
        assert r.status_code == 400
        assert (
            r.json()["error"]["message"]
            == "No registered embedding endpoint with this id was found"
        )
        r = await alice.post(
            "/kb",
            json={
                **body,
                "embedding_endpoint_id": ours["id"],
                "embedding_secret_id": await secret(alice),
            },
        )
        assert fields(r) == {"embedding_secret_id"}
        created = await kb(alice, **body, embedding_endpoint_id=ours["id"])
        assert created["embedding_dim"] == 384

    async def test_app_scope_is_keyless_on_deployment_endpoints(
        self, users: dict[str, httpx.AsyncClient]
    ) -> None:
        root = users["root"]
        org_endpoint = (
            await users["alice"].post(
                "/rag/embedding-endpoints", json={"name": "o", "base_url": "http://127.0.0.1:1/v1"}
            )
        ).json()
        shared = (
            await root.post(
                "/rag/embedding-endpoints",
                json={"name": "d", "base_url": "http://127.0.0.1:2/v1", "scope": "deployment"},
            )
        ).json()
        assert shared["organization_id"] is None
        r = await root.post(
            "/kb",
            json={
                "name": uniq(),
                "scope": "app",
                "embedding_provider": "openai",
                "embedding_model": SMALL,
                "embedding_secret_id": str(uuid.uuid4()),
            },
        )
        assert r.status_code == 400
        assert fields(r) == {"embedding_provider"}
        ollama = {"scope": "app", "embedding_provider": "ollama", "embedding_model": "all-minilm"}
        r = await root.post(
            "/kb", json={"name": uniq(), **ollama, "embedding_endpoint_id": org_endpoint["id"]}
        )
        assert fields(r) == {"embedding_endpoint_id"}
        await kb(root, **ollama, embedding_endpoint_id=shared["id"])
        await kb(root, scope="app", embedding_provider="local", embedding_model=MINILM)

    async def test_own_base_url(self, users: dict[str, httpx.AsyncClient]) -> None:
        alice = users["alice"]
        key = await secret(alice, provider="openrouter")
        body = {
            "embedding_provider": "openrouter",
            "embedding_model": "openai/text-embedding-3-small",
            "embedding_secret_id": key,
        }
        r = await alice.post(
            "/kb",
            json={
                "name": uniq(),
                **body,
                "embedding_base_url": "https://openrouter.ai.evil.example/api/v1",
            },
        )
        assert fields(r) == {"embedding_base_url"}
        with running_standin(models=["openai/text-embedding-3-large"]) as s:
            r = await alice.post("/kb", json={"name": uniq(), **body, "embedding_base_url": s.url})
            assert r.status_code == 400
            assert fields(r) == {"embedding_model"}
            s.models = ["openai/text-embedding-3-small"]
            created = await kb(alice, **body, embedding_base_url=s.url + "/")
        assert created["embedding_base_url"] == s.url
        # an endpoint that cannot be asked is unconfirmed, not a refusal
        await kb(alice, **body, embedding_base_url=s.url)


class TestAdoption:
    async def test_same_name_adopts_model_provider_and_key(
        self, users: dict[str, httpx.AsyncClient]
    ) -> None:
        alice = users["alice"]
        key = await secret(alice, visibility="org")
        name = uniq("shared")
        first = await kb(
            alice,
            name=name,
            embedding_provider="openai",
            embedding_model=SMALL,
            embedding_secret_id=key,
        )
        second = await kb(alice, name=uniq("kb"), collection_name=name)
        for field in (
            "embedding_provider",
            "embedding_model",
            "embedding_dim",
            "embedding_secret_id",
        ):
            assert second[field] == first[field]
        # a base on the name that names another provider, model or key is refused, naming it
        for contradiction, field in (
            ({"embedding_provider": "local", "embedding_model": MINILM}, "embedding_provider"),
            ({"embedding_model": "text-embedding-3-large"}, "embedding_model"),
            ({"embedding_secret_id": await secret(alice)}, "embedding_secret_id"),
        ):
            r = await alice.post(
                "/kb", json={"name": uniq(), "collection_name": name, **contradiction}
            )
            assert r.status_code == 400, r.text
            assert fields(r) == {field}
        # naming the same key (or model) explicitly is no contradiction
        await kb(
            alice, name=uniq(), collection_name=name, embedding_model=SMALL, embedding_secret_id=key
        )


class TestPatch:
    async def test_move_between_providers(self, users: dict[str, httpx.AsyncClient]) -> None:
        alice = users["alice"]
        created = await kb(
            alice,
            embedding_provider="openai",
            embedding_model=SMALL,
            embedding_secret_id=await secret(alice),
        )
        url = f"/kb/{created['id']}"
        r = await alice.patch(url, json={"embedding_provider": "openrouter"})
        assert r.status_code == 400
        assert fields(r) == {"embedding_secret_id"}
        r = await alice.patch(url, json={"embedding_provider": "local"})
        assert fields(r) == {"embedding_provider"}
        r = await alice.patch(url, json={"embedding_model": "text-embedding-3-large"})
        assert fields(r) == {"embedding_model"}
        router_key = await secret(alice, provider="openrouter")
        with running_standin(models=["openai/text-embedding-3-large"]) as s:
            move = {
                "embedding_provider": "openrouter",
                "embedding_secret_id": router_key,
                "embedding_base_url": s.url,
            }
            r = await alice.patch(url, json=move)
            assert r.status_code == 400
            assert fields(r) == {"embedding_base_url"}
            s.models = ["openai/text-embedding-3-small"]
            r = await alice.patch(url, json=move)
        assert r.status_code == 200, r.text
        moved = r.json()
        assert moved["embedding_provider"] == "openrouter"
        assert moved["embedding_model"] == "openai/text-embedding-3-small"
        assert moved["embedding_dim"] == 1536
        assert moved["embedding_secret_id"] == router_key
        assert moved["embedding_base_url"] == s.url
        # back to the default endpoint
        r = await alice.patch(url, json={"embedding_base_url": None})
        assert r.status_code == 200
        assert r.json()["embedding_base_url"] is None
        assert r.json()["embedding_secret_id"] == router_key
        # a key the caller cannot see cannot be bound by a move either
        r = await alice.patch(
            url, json={"embedding_secret_id": await secret(users["bob"], provider="openrouter")}
        )
        assert r.status_code == 400
        assert (
            r.json()["error"]["message"]
            == "No openrouter API key with this id was found in the vault"
        )

    async def test_local_to_ollama_and_unreachable_kb(
        self, users: dict[str, httpx.AsyncClient]
    ) -> None:
        alice = users["alice"]
        created = await kb(alice, embedding_provider="local", embedding_model=MINILM)
        endpoint = (
            await alice.post(
                "/rag/embedding-endpoints", json={"name": "o", "base_url": "http://127.0.0.1:3/v1"}
            )
        ).json()
        r = await users["dave"].patch(f"/kb/{created['id']}", json={"embedding_provider": "ollama"})
        assert r.status_code == 404
        r = await alice.patch(f"/kb/{created['id']}", json={"embedding_provider": "ollama"})
        assert fields(r) == {"embedding_endpoint_id"}
        r = await alice.patch(
            f"/kb/{created['id']}",
            json={"embedding_provider": "ollama", "embedding_endpoint_id": endpoint["id"]},
        )
        assert r.status_code == 200
        assert r.json()["embedding_model"] == "all-minilm"
        assert (await alice.delete(f"/rag/embedding-endpoints/{endpoint['id']}")).status_code == 409

    async def test_sending_the_bound_key_elsewhere_needs_sight_of_it(
        self, users: dict[str, httpx.AsyncClient]
    ) -> None:
        """``embedding_base_url`` receives the collection's key: changing it while the key
        stays bound lends the key again (issue 25, item 1), as a sync source's address does.
        On main carol, who edits collections but cannot see shared keys, moved it to her
        own endpoint (200) and the next embedding sent her the organization's key."""
        alice, carol = users["alice"], users["carol"]
        shared = await secret(alice, provider="openrouter", visibility="org")
        created = await kb(
            alice,
            embedding_provider="openrouter",
            embedding_model="openai/text-embedding-3-small",
            embedding_secret_id=shared,
        )
        url = f"/kb/{created['id']}"
        with running_standin(models=["openai/text-embedding-3-small"]) as s:
            for elsewhere in (s.url, "https://eu.openrouter.ai/api/v1"):
                r = await carol.patch(
                    url,
                    json={"embedding_base_url": elsewhere, "ingestion_config": {"max_pages": 9}},
                )
                assert r.status_code == 403, r.text
                assert r.json()["error"]["details"]["fields"] == [
                    {"field": "embedding_base_url", "message": "re-points the bound secret"}
                ]
            assert s.requests == []  # refused before the endpoint is asked anything
            # keeping the destination needs nothing; alice, who sees the key, may move it
            kept = await carol.patch(url, json={"embedding_base_url": None})
            assert kept.status_code == 200, kept.text
            moved = await alice.patch(url, json={"embedding_base_url": s.url + "/"})
            assert moved.status_code == 200, moved.text
        back = await carol.patch(url, json={"embedding_base_url": None})  # a change too
        assert back.status_code == 403, back.text
        after = (await alice.get(url)).json()
        assert after["embedding_base_url"] == s.url
        assert after["ingestion_config"] == created["ingestion_config"]


class TestEndpointsApi:
    async def test_register_list_delete(self, users: dict[str, httpx.AsyncClient]) -> None:
        body = {"name": "ollama", "base_url": "http://127.0.0.1:11434/v1"}
        assert (await users["bob"].post("/rag/embedding-endpoints", json=body)).status_code == 403
        assert (await users["solo"].post("/rag/embedding-endpoints", json=body)).status_code == 403
        assert (
            await users["alice"].post(
                "/rag/embedding-endpoints", json={**body, "scope": "deployment"}
            )
        ).status_code == 403
        r = await users["alice"].post(
            "/rag/embedding-endpoints", json={**body, "base_url": "http://u:p@h/v1"}
        )
        assert fields(r) == {"base_url"}
        ours = (await users["alice"].post("/rag/embedding-endpoints", json=body)).json()
        deployment = (
            await users["root"].post(
                "/rag/embedding-endpoints", json={**body, "scope": "deployment"}
            )
        ).json()
        theirs = (await users["dave"].post("/rag/embedding-endpoints", json=body)).json()
        seen = {e["id"] for e in (await users["bob"].get("/rag/embedding-endpoints")).json()}
        assert {ours["id"], deployment["id"]} <= seen
        assert theirs["id"] not in seen
        # in this order: who deletes which endpoint, and the answer
        for who, endpoint, status in (
            ("alice", theirs, 404),
            ("bob", ours, 403),
            ("alice", deployment, 403),
            ("alice", ours, 204),
            ("root", deployment, 204),
        ):
            r = await users[who].delete(f"/rag/embedding-endpoints/{endpoint['id']}")
            assert r.status_code == status, (who, endpoint["id"], r.text)


class TestEndpointAddresses:
    """Issue 25: an organization's embedding endpoint reaches no internal address unless the
    deployment allows it; the app admin's deployment-wide endpoints stay free-form."""

    @pytest.mark.parametrize(
        ("base_url", "reason"),
        [
            ("http://127.0.0.1:11434/v1", "127.0.0.1 is not a public address"),
            ("http://[::ffff:127.0.0.1]:11434/v1", "::ffff:127.0.0.1 is not a public address"),
            ("http://169.254.169.254/latest", "169.254.169.254 is not a public address"),
            ("http://[64:ff9b::7f00:1]/v1", "64:ff9b::7f00:1 is not a public address"),
            ("http://localhost:11434/v1", "localhost is this machine"),
            ("http://10.0.0.1/v1", "10.0.0.1 is not a public address"),
        ],
    )
    async def test_an_internal_address_is_refused_and_nothing_is_stored(
        self, strict: Client, runtime: Runtime, base_url: str, reason: str
    ) -> None:
        org = uniq("org")
        member = strict("erin", org, (VIEW, EDIT))
        r = await member.post("/rag/embedding-endpoints", json={"name": "o", "base_url": base_url})
        assert r.status_code == 400, r.text
        assert r.json()["error"]["details"]["fields"] == [{"field": "base_url", "message": reason}]
        assert reason in r.json()["error"]["message"]
        async with runtime.sessionmaker() as s:
            for model in (EmbeddingEndpoint, AuditLog):
                stored = select(func.count()).where(model.organization_id == org)
                assert (await s.execute(stored)).scalar_one() == 0

    async def test_the_app_admins_deployment_endpoint_stays_free_form(self, strict: Client) -> None:
        r = await strict("root", None, (), True).post(
            "/rag/embedding-endpoints",
            json={"name": "d", "base_url": "http://127.0.0.1:11434/v1", "scope": "deployment"},
        )
        assert r.status_code == 201, r.text
        assert r.json()["organization_id"] is None

    async def _search_on(self, c: httpx.AsyncClient, base_url: str) -> httpx.Response:
        """Register ``base_url`` as the caller's organization endpoint, create a base on it
        and search it (which embeds the query through the endpoint)."""
        r = await c.post("/rag/embedding-endpoints", json={"name": "o", "base_url": base_url})
        assert r.status_code == 201, r.text
        created = await kb(
            c,
            embedding_provider="ollama",
            embedding_model="all-minilm",
            embedding_endpoint_id=r.json()["id"],
        )
        return await c.post(
            "/rag/search",
            json={"query": "q", "collections": [created["collection_name"]], "mode": "vector"},
        )

    @pytest.mark.parametrize("answer", [200, 404, 500, "closed"])
    async def test_a_name_that_resolves_inside_is_refused_at_the_request_alike(
        self, strict: Client, monkeypatch: pytest.MonkeyPatch, answer: int | str
    ) -> None:
        """A public-looking name is accepted at registration; the search resolves it, finds
        loopback and refuses before connecting: one answer whether the port is open, closed
        or answers any status, so a member cannot map what listens inside."""
        lookups: list[str] = []

        async def resolve(host: str, _port: int) -> list[str]:
            lookups.append(host)
            return ["127.0.0.1"]

        monkeypatch.setattr(pinned, "resolve", resolve)
        member = strict("erin", uniq("org"), (VIEW, EDIT))
        with running_standin(
            StandIn(dims=384, status=200 if answer == "closed" else int(answer))
        ) as s:
            port = s.port
            if answer != "closed":
                r = await self._search_on(member, f"http://ollama.rebind.test:{port}/v1")
        if answer == "closed":
            r = await self._search_on(member, f"http://ollama.rebind.test:{port}/v1")
        assert r.status_code == 409, r.text
        error = r.json()["error"]
        assert error["code"] == "EMBEDDING_ENDPOINT_REFUSED"
        assert error["message"].endswith(
            "is refused: ollama.rebind.test is not a public address this deployment lets an "
            "organization's endpoint reach"
        )
        assert str(port) not in error["message"]
        assert s.requests == []
        assert lookups == ["ollama.rebind.test"]

    async def test_with_private_endpoints_allowed_a_loopback_endpoint_embeds(
        self, client: Client
    ) -> None:
        member = client("erin", uniq("org"), (VIEW, EDIT))
        with running_standin(dims=384) as s:
            r = await self._search_on(member, s.url)
        assert r.status_code == 200, r.text
        assert [q.path for q in s.requests] == ["/v1/embeddings"]


class TestResolution:
    async def _key(self, runtime: Runtime, **kw: Any) -> uuid.UUID:
        async with runtime.sessionmaker() as s, s.begin():
            row = await create_secret(
                s,
                owner_id="alice",
                organization_id=kw.pop("organization_id", "acme"),
                name="k",
                kind=kw.pop("kind", "api_key"),
                value=kw.pop("value", {"api_key": "sk-resolve"}),
                visibility="private",
                master_key=runtime.settings.vault.key(),
                provider=kw.pop("provider", "openai"),
            )
            return row.id

    def target(self, **kw: Any) -> EmbeddingTarget:
        base: dict[str, Any] = {
            "collection_name": "docs",
            "organization_id": "acme",
            "provider": "openai",
            "model": SMALL,
            "dimensions": 1536,
        }
        return EmbeddingTarget(**{**base, **kw})

    async def resolve(
        self, runtime: Runtime, target: EmbeddingTarget, settings: Settings | None = None
    ) -> Any:
        async with runtime.sessionmaker() as s:
            return await resolve_embedding(s, target, settings or runtime.settings)

    async def test_cases(self, runtime: Runtime, caplog: pytest.LogCaptureFixture) -> None:
        key = await self._key(runtime)
        ok = await self.resolve(runtime, self.target(secret_id=key))
        assert ok.source is CredentialSource.COLLECTION_SECRET
        assert ok.api_key == "sk-resolve"
        assert ok.base_url == "https://api.openai.com/v1"
        assert ok.degraded_reason is None
        assert "sk-resolve" not in repr(ok)
        own_url = await self.resolve(
            runtime, self.target(secret_id=key, base_url="http://127.0.0.1:9/v1")
        )
        assert own_url.base_url == "http://127.0.0.1:9/v1"

        caplog.set_level(logging.WARNING, "docproc_common.embedding.client")
        other_master = runtime.settings.model_copy(
            update={
                "vault": runtime.settings.vault.model_copy(
                    update={"master_key": SecretStr(base64.b64encode(os.urandom(32)).decode())}
                )
            }
        )
        cases = {
            CredentialSource.NO_SECRET: await self.resolve(runtime, self.target()),
            CredentialSource.SECRET_DELETED: await self.resolve(
                runtime, self.target(secret_id=uuid.uuid4())
            ),
            CredentialSource.SECRET_UNOPENABLE: await self.resolve(
                runtime, self.target(secret_id=key), other_master
            ),
            CredentialSource.SECRET_WITHOUT_KEY: await self.resolve(
                runtime, self.target(secret_id=await self._key(runtime, provider="openrouter"))
            ),
        }
        # another organization's key is, for this collection, a key that is not there
        foreign = await self.resolve(runtime, self.target(secret_id=key, organization_id="globex"))
        assert foreign.source is CredentialSource.SECRET_DELETED
        git = await self._key(runtime, kind="git_token", value={"token": "t"}, provider=None)
        assert (
            await self.resolve(runtime, self.target(secret_id=git))
        ).source is CredentialSource.SECRET_WITHOUT_KEY
        for source, resolved in cases.items():
            assert resolved.source is source
            assert resolved.api_key is None
            assert source.value in caplog.text
        assert "sk-resolve" not in caplog.text
        refusal = cases[CredentialSource.SECRET_DELETED].refusal()
        assert isinstance(refusal, EmbeddingNotConfiguredError)
        assert refusal.message == (
            "No embedding credential is configured for this collection 'docs' (openai): "
            "the secret was deleted"
        )

    async def test_keyless(self, runtime: Runtime, client: Client) -> None:
        local = await self.resolve(
            runtime, self.target(provider="local", model=MINILM, dimensions=384)
        )
        assert local.source is CredentialSource.KEYLESS
        endpoint = (
            await client("e", "acme", (EDIT,)).post(
                "/rag/embedding-endpoints", json={"name": "o", "base_url": "http://127.0.0.1:7/v1"}
            )
        ).json()
        ollama = self.target(
            provider="ollama",
            model="all-minilm",
            dimensions=384,
            endpoint_id=uuid.UUID(endpoint["id"]),
        )
        resolved = await self.resolve(runtime, ollama)
        assert (resolved.source, resolved.base_url) == (
            CredentialSource.KEYLESS,
            "http://127.0.0.1:7/v1",
        )
        # an organization's endpoint is reached pinned unless private endpoints are allowed
        assert not resolved.public_only
        embedder = runtime.settings.embedder.model_copy(update={"allow_private_endpoints": False})
        strict = runtime.settings.model_copy(update={"embedder": embedder})
        assert (await self.resolve(runtime, ollama, strict)).public_only
        elsewhere = await self.resolve(
            runtime,
            self.target(
                provider="ollama",
                model="all-minilm",
                dimensions=384,
                endpoint_id=uuid.UUID(endpoint["id"]),
                organization_id="globex",
            ),
        )
        assert elsewhere.source is CredentialSource.ENDPOINT_MISSING
        gone = await self.resolve(
            runtime,
            self.target(
                provider="ollama", model="all-minilm", dimensions=384, endpoint_id=uuid.uuid4()
            ),
        )
        assert gone.source is CredentialSource.ENDPOINT_MISSING
        assert gone.refusal().message.startswith(
            "No embedding service is configured for this collection 'docs' (ollama)"
        )


class TestSearchRefusal:
    @pytest.mark.parametrize("mode", ["vector", "keyword", "hybrid"])
    async def test_search_on_a_collection_whose_key_was_deleted(
        self, users: dict[str, httpx.AsyncClient], runtime: Runtime, mode: str
    ) -> None:
        """Every mode refuses, keyword too although it embeds nothing (the seed: a collection
        without a usable key refuses to search until it has one)."""
        alice = users["alice"]
        key = await secret(alice)
        created = await kb(
            alice, embedding_provider="openai", embedding_model=SMALL, embedding_secret_id=key
        )
        assert (await alice.delete(f"/secrets/{key}")).status_code == 204
        r = await alice.post(
            "/rag/search",
            json={"query": "q", "collections": [created["collection_name"]], "mode": mode},
        )
        assert r.status_code == 409
        assert r.json()["error"]["message"] == (
            f"No embedding credential is configured for this collection "
            f"'{created['collection_name']}' (openai): the secret was deleted"
        )
        async with runtime.sessionmaker() as s:
            assert (
                await s.execute(select(Secret).where(Secret.id == uuid.UUID(key)))
            ).first() is None


class TestRotation:
    async def test_rewrap_all_and_back(
        self, runtime: Runtime, users: dict[str, httpx.AsyncClient]
    ) -> None:
        current = runtime.settings.vault.key()
        new = base64.b64encode(os.urandom(32)).decode()
        key = uuid.UUID(await secret(users["alice"], {"api_key": "sk-rotate"}))
        async with runtime.sessionmaker() as s, s.begin():
            assert await rewrap_all(s, old_master_key=current, new_master_key=new) >= 1
        async with runtime.sessionmaker() as s:
            opened = await open_secret(s, secret_id=key, organization_id="acme", master_key=new)
            assert opened is not None
            assert opened.value == {"api_key": "sk-rotate"}
            assert (
                await open_secret(s, secret_id=key, organization_id="acme", master_key=current)
                is None
            )
        async with runtime.sessionmaker() as s, s.begin():
            assert await rewrap_all(s, old_master_key=new, new_master_key=current) >= 1
            assert await rewrap_all(s, old_master_key=new, new_master_key=current) == 0
        async with runtime.sessionmaker() as s:
            assert await open_secret(s, secret_id=key, organization_id="acme", master_key=current)


LOCAL = {"embedding_provider": "local", "embedding_model": MINILM}
VISION_URL = "https://api.openai.com/v1"


def vision(secret_id: str, base_url: str = VISION_URL) -> dict[str, Any]:
    return {
        "vision_profile": {"base_url": base_url, "model": "gpt-4o-mini", "secret_id": secret_id}
    }


async def upload_with(
    c: httpx.AsyncClient, kb_id: str, override: dict[str, Any] | None = None
) -> httpx.Response:
    form = {"ingestion": json.dumps(override)} if override is not None else None
    return await c.post(
        f"/kb/{kb_id}/documents", files={"file": ("a.txt", b"Plain words.")}, data=form
    )


async def documents_of(runtime: Runtime, kb_id: str) -> int:
    async with runtime.sessionmaker() as s:
        return int(
            (
                await s.execute(
                    text("SELECT count(*) FROM rag_documents WHERE knowledge_base_id = :k"),
                    {"k": uuid.UUID(kb_id)},
                )
            ).scalar_one()
        )


class TestVisionProfiles:
    """An organization's vision model profiles (``/vision-profiles``): made with a key the
    maker may bind, listed to the organization, selected per collection
    (``ingestion_config.vision_profile_id``) as a binding of the profile's key, and not
    deletable while a collection selects one."""

    async def test_create_list_select_and_delete_once_unused(
        self, users: dict[str, httpx.AsyncClient]
    ) -> None:
        alice, carol, dave = users["alice"], users["carol"], users["dave"]
        shared = await secret(alice, visibility="org")
        body = {"name": uniq("vision"), "provider": "openai", "model": "gpt-4o-mini"}
        made = await alice.post("/vision-profiles", json={**body, "secret_id": shared})
        assert made.status_code == 201, made.text
        profile = made.json()
        assert (profile["base_url"], profile["secret_id"]) == (VISION_URL, shared)
        again = await alice.post("/vision-profiles", json={**body, "secret_id": shared})
        assert (again.status_code, fields(again)) == (409, {"name"})
        # the organization lists it; another organization does not
        assert profile["id"] in {p["id"] for p in (await carol.get("/vision-profiles")).json()}
        assert profile["id"] not in {p["id"] for p in (await dave.get("/vision-profiles")).json()}
        # a collection selects it; the parser resolves it when it parses
        select = {"image_description": True, "vision_profile_id": profile["id"]}
        base = await kb(alice, **LOCAL)
        chosen = await alice.patch(f"/kb/{base['id']}", json={"ingestion_config": select})
        assert chosen.status_code == 200, chosen.text
        assert chosen.json()["ingestion_config"]["vision_profile_id"] == profile["id"]
        # another organization's collection cannot select it
        foreign = await dave.post(
            "/kb", json={"name": uniq("kb"), **LOCAL, "ingestion_config": select}
        )
        assert (foreign.status_code, fields(foreign)) == (
            400,
            {"ingestion_config.vision_profile_id"},
        )
        # in use: refused, naming the collection; nothing deleted
        refused = await alice.delete(f"/vision-profiles/{profile['id']}")
        assert refused.status_code == 409, refused.text
        error = refused.json()["error"]
        assert error["code"] == "CONFLICT" and base["name"] in error["message"]
        assert error["details"]["fields"] == [
            {"field": "vision_profile_id", "message": f"in use by {base['name']}"}
        ]
        assert profile["id"] in {p["id"] for p in (await alice.get("/vision-profiles")).json()}
        # once no collection selects it, it goes
        unselect = {"image_description": False, "vision_profile_id": None}
        cleared = await alice.patch(f"/kb/{base['id']}", json={"ingestion_config": unselect})
        assert cleared.status_code == 200, cleared.text
        assert (await alice.delete(f"/vision-profiles/{profile['id']}")).status_code == 204
        assert profile["id"] not in {p["id"] for p in (await alice.get("/vision-profiles")).json()}

    async def test_binding_a_profiles_key_needs_what_binding_the_key_needs(
        self, users: dict[str, httpx.AsyncClient], runtime: Runtime
    ) -> None:
        alice, bob, carol = users["alice"], users["bob"], users["carol"]
        shared = await secret(alice, visibility="org")
        body = {"name": uniq("vision"), "provider": "openai", "model": "gpt-4o-mini"}
        # carol edits collections but cannot see shared keys: she cannot make a profile of one
        hidden = await carol.post("/vision-profiles", json={**body, "secret_id": shared})
        assert (hidden.status_code, fields(hidden)) == (400, {"secret_id"})
        # bob sees the key but may not manage the organization's models
        assert (
            await bob.post("/vision-profiles", json={**body, "secret_id": shared})
        ).status_code == 403
        # a keyless server must be one the deployment allows (none here)
        own = {**body, "provider": "openai-compatible", "base_url": "http://10.0.0.9:8000/v1"}
        unlisted = await alice.post("/vision-profiles", json=own)
        assert (unlisted.status_code, fields(unlisted)) == (400, {"base_url"})
        profile = (await alice.post("/vision-profiles", json={**body, "secret_id": shared})).json()
        select = {"image_description": True, "vision_profile_id": profile["id"]}
        # selecting the profile binds its key: carol may not, on a new base or on hers
        own_base = await kb(carol, **LOCAL)
        for r in (
            await carol.post("/kb", json={"name": uniq("kb"), **LOCAL, "ingestion_config": select}),
            await carol.patch(f"/kb/{own_base['id']}", json={"ingestion_config": select}),
            await upload_with(carol, own_base["id"], select),
        ):
            assert r.status_code == 403, r.text
            assert fields(r) == {"ingestion_config.vision_profile_id"}
        assert await documents_of(runtime, own_base["id"]) == 0
        # a base that already selects it lends it to her: she edits and uploads
        base = await kb(alice, **LOCAL, ingestion_config=select)
        kept = await carol.patch(f"/kb/{base['id']}", json={"ingestion_config": {"max_pages": 9}})
        assert kept.status_code == 200, kept.text
        assert kept.json()["ingestion_config"]["vision_profile_id"] == profile["id"]
        assert (await upload_with(carol, base["id"])).status_code == 202


class TestIngestionSecrets:
    """A parser's or vision key named by an ingestion configuration is lent as an embedding
    key is (seed: binding a key lends it): on ``POST /kb``, ``PATCH /kb/{id}`` and an
    upload's override, a binding the collection does not already make must name a key the
    caller can see, of the field's kind, in the collection's organization."""

    async def test_a_colleagues_private_key_is_refused_wherever_it_is_bound(
        self, users: dict[str, httpx.AsyncClient], runtime: Runtime
    ) -> None:
        alice, bob = users["alice"], users["bob"]
        llama = await secret(bob, {"api_key": "llx-bob"}, kind="llamaparse", provider=None)
        bindings = {
            "ingestion_config.llamaparse_secret_id": {
                "parser": "llamaparse",
                "llamaparse_secret_id": llama,
            },
            "ingestion_config.vision_profile.secret_id": vision(await secret(bob)),
        }
        base = await kb(alice, **LOCAL)
        for field, config in bindings.items():
            created = await alice.post(
                "/kb", json={"name": uniq("kb"), **LOCAL, "ingestion_config": config}
            )
            patched = await alice.patch(f"/kb/{base['id']}", json={"ingestion_config": config})
            uploaded = await upload_with(alice, base["id"], config)
            for r in (created, patched, uploaded):
                assert r.status_code == 400, r.text
                assert r.json()["error"]["details"]["fields"] == [
                    {"field": field, "message": "not found"}
                ]
        after = (await alice.get(f"/kb/{base['id']}")).json()
        assert after["ingestion_config"] == base["ingestion_config"]
        assert await documents_of(runtime, base["id"]) == 0

    async def test_the_collections_own_binding_is_used_a_new_one_is_checked(
        self, users: dict[str, httpx.AsyncClient], runtime: Runtime
    ) -> None:
        alice, carol = users["alice"], users["carol"]
        shared = await secret(alice, visibility="org")
        base = await kb(alice, **LOCAL, ingestion_config=vision(shared))
        # carol edits collections but cannot see shared keys: the base lends her its own
        assert (await upload_with(carol, base["id"])).status_code == 202
        assert (await upload_with(carol, base["id"], {"chunk_size": 400})).status_code == 202
        kept = await carol.patch(f"/kb/{base['id']}", json={"ingestion_config": {"max_pages": 9}})
        assert kept.status_code == 200, kept.text
        # ...but not to send it elsewhere, nor to bind it where it was not bound
        elsewhere = vision(shared, "https://vision.attacker.example/v1")
        for r in (
            await upload_with(carol, base["id"], elsewhere),
            await carol.patch(f"/kb/{base['id']}", json={"ingestion_config": elsewhere}),
            await carol.post(
                "/kb", json={"name": uniq("kb"), **LOCAL, "ingestion_config": vision(shared)}
            ),
        ):
            assert r.status_code == 400, r.text
            assert fields(r) == {"ingestion_config.vision_profile.secret_id"}
        assert await documents_of(runtime, base["id"]) == 2
        # alice sees the shared key: she may point it at another endpoint
        moved = await alice.patch(f"/kb/{base['id']}", json={"ingestion_config": elsewhere})
        assert moved.status_code == 200, moved.text

    async def test_a_key_of_another_kind_is_refused_as_not_found(
        self, users: dict[str, httpx.AsyncClient]
    ) -> None:
        alice = users["alice"]
        openai_key = await secret(alice)
        r = await alice.post(
            "/kb",
            json={
                "name": uniq("kb"),
                **LOCAL,
                "ingestion_config": {"parser": "llamaparse", "llamaparse_secret_id": openai_key},
            },
        )
        assert r.status_code == 400, r.text
        assert fields(r) == {"ingestion_config.llamaparse_secret_id"}
        assert "No llamaparse secret with this id" in r.json()["error"]["message"]

    async def test_a_worker_asking_for_a_kind_opens_only_that_kind(
        self, users: dict[str, httpx.AsyncClient], runtime: Runtime
    ) -> None:
        key = uuid.UUID(await secret(users["alice"]))
        master = runtime.settings.vault.key()
        async with runtime.sessionmaker() as s:
            for kind, opens in (("llamaparse", False), ("api_key", True)):
                opened = await open_secret(
                    s, secret_id=key, organization_id="acme", master_key=master, kind=kind
                )
                assert (opened is not None) is opens, kind
