"""Embedding providers end to end, with the services as separate processes on Kafka/Postgres/S3.

A collection on the ``openai`` provider is pointed (``embedding_base_url``) at the
embedder's own OpenAI-compatible ``/v1/embeddings``, which serves the local model
behind a bearer token kept in the vault: ingestion and search go through the real
HTTP client. A document failed because its vault key was deleted is indexed from its
stored original once a new key is bound and it is retried.

What the index stage decides alone is its stage test's (no cluster):
``services/embedder/tests/unit/test_index_stage.py`` holds a rejected credential, a deleted
key and a provider that never answers (each the row's exact message, no chunk; the last
through the bus's retry policy to ``give_up``), ``libs/common/tests/unit/test_embedding_client.py``
the provider's answers (the 401 message, the key sent, the log line of a 503), and
``tests/faults/test_poison.py`` the bus giving up across processes.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from docproc_common.auth import EDIT, SECRETS_VIEW, VIEW
from docproc_testing.api import wait_for

from tests.e2e.deployment import GATEWAY_TOKEN, MINILM, TINY_MODEL
from tests.e2e.harness import Cluster

pytestmark = [pytest.mark.e2e, pytest.mark.integration]


def member(cluster: Cluster) -> httpx.Client:
    return cluster.client(
        user_id="alice", organization_id="acme", permissions=[VIEW, EDIT, SECRETS_VIEW]
    )


def add_key(client: httpx.Client, value: str) -> str:
    r = client.post(
        "/secrets",
        json={
            "name": "gateway",
            "kind": "api_key",
            "provider": "openai",
            "value": {"api_key": value},
        },
    )
    assert r.status_code == 201, r.text
    assert value not in r.text
    return str(r.json()["id"])


def create_kb(client: httpx.Client, secret_id: str, base_url: str) -> dict[str, Any]:
    name = f"emb_{uuid.uuid4().hex[:8]}"
    r = client.post(
        "/kb",
        json={
            "name": name,
            "collection_name": name,
            "embedding_provider": "openai",
            "embedding_model": MINILM,
            "embedding_secret_id": secret_id,
            "embedding_base_url": base_url,
        },
    )
    assert r.status_code == 201, r.text
    return dict(r.json())


def upload(client: httpx.Client, kb: dict[str, Any], text: str) -> str:
    r = client.post(
        f"/kb/{kb['id']}/documents", files={"file": ("animals.txt", text.encode(), "text/plain")}
    )
    assert r.status_code == 202, r.text
    return str(r.json()["tracking_id"])


def settled(cluster: Cluster, document_id: str) -> tuple[str, str | None, int]:
    def done() -> Any:
        rows = cluster.query(
            "SELECT status, error_message, chunk_count FROM rag_documents WHERE id = $1",
            uuid.UUID(document_id),
        )
        return rows[0] if rows and rows[0]["status"] != "processing" else None

    row = wait_for(done, 180, what="the document to settle")
    return str(row["status"]), row["error_message"], int(row["chunk_count"])


def vectors(cluster: Cluster, collection: str) -> int:
    table = cluster.query("SELECT to_regclass($1) AS t", f"rag_{collection}")[0]["t"]
    if table is None:
        return 0
    return int(cluster.query(f'SELECT count(*) AS n FROM "rag_{collection}"')[0]["n"])


def indexed_and_found(
    cluster: Cluster, client: httpx.Client, kb: dict[str, Any], doc: str, query: str
) -> tuple[int, str]:
    """``doc`` done with every chunk of it in its table: its chunk count, and the content of
    the first hit of a search of its collection for ``query``."""
    status, error, chunks = settled(cluster, doc)
    assert (status, error) == ("done", None)
    assert chunks >= 1
    assert vectors(cluster, kb["collection_name"]) == chunks
    hits = client.post(
        "/rag/search", json={"query": query, "collections": [kb["collection_name"]], "top_k": 3}
    )
    assert hits.status_code == 200, hits.text
    return chunks, str(hits.json()["results"][0]["content"])


def test_openai_provider_through_the_embedders_own_endpoint(cluster: Cluster) -> None:
    embedder = f"http://127.0.0.1:{cluster.services['embedder'].port}/v1"
    with member(cluster) as client:
        served = client.get("/rag/embedding-models/openai", params={"base_url": embedder}).json()
        assert served["confirmed"] is True
        assert [m["model"] for m in served["models"]] == [MINILM]
        kb = create_kb(client, add_key(client, GATEWAY_TOKEN), embedder)
        doc = upload(
            client,
            kb,
            "Penguins live in the southern hemisphere.\n\nThe capybara is the largest rodent.",
        )
        _, first = indexed_and_found(cluster, client, kb, doc, "largest rodent")
        assert "capybara" in first


def test_a_mounted_model_indexes_chunks_as_passages_and_searches_queries_as_queries(
    cluster: Cluster,
) -> None:
    from docproc_common.embedding.mounted import MountedModel, mounted_models

    with member(cluster) as client:
        catalog = client.get("/rag/embedding-models").raise_for_status().json()
        (local,) = [p for p in catalog["providers"] if p["name"] == "local"]
        assert {"model": TINY_MODEL, "dimensions": 16, "max_input_tokens": 64} in local["models"]
        name = f"emb_{uuid.uuid4().hex[:8]}"
        r = client.post(
            "/kb",
            json={
                "name": name,
                "collection_name": name,
                "embedding_provider": "local",
                "embedding_model": TINY_MODEL,
            },
        )
        assert r.status_code == 201, r.text
        kb = r.json()
        assert kb["embedding_dim"] == 16  # the width comes from the model's card
        doc = upload(client, kb, "The quick brown fox jumps over the lazy dog.")
        status, error, chunks = settled(cluster, doc)
        assert (status, error, chunks) == ("done", None, 1)
        query = "a lazy dog"
        hits = client.post(
            "/rag/search",
            json={"query": query, "collections": [name], "top_k": 1, "mode": "vector"},
        )
        assert hits.status_code == 200, hits.text
        (hit,) = hits.json()["results"]
        # the score is the cosine of the query embedded with the query prefix and the chunk
        # embedded with the passage prefix, as the model embeds them here
        root = Path(cluster.services["embedder"].env["EMBEDDER__MODELS_DIR"])
        model = MountedModel(mounted_models(root)[TINY_MODEL], threads=1)
        q = model.embed([query], kind="query")[0]
        p = model.embed([hit["content"]], kind="passage")[0]
        assert abs(hit["score"] - float(q @ p)) < 1e-4
        plain = model.embed([query], kind="passage")[0] @ p  # the query without its prefix
        assert abs(hit["score"] - float(plain)) > 1e-3  # so the prefix made the difference


def with_its_key_deleted(cluster: Cluster, client: httpx.Client) -> dict[str, Any]:
    """A base on the embedder's own endpoint whose vault key has since been deleted."""
    embedder = f"http://127.0.0.1:{cluster.services['embedder'].port}/v1"
    key = add_key(client, GATEWAY_TOKEN)
    kb = create_kb(client, key, embedder)
    assert client.delete(f"/secrets/{key}").status_code == 204
    return kb


def test_a_failed_document_is_retried_from_its_stored_original(cluster: Cluster) -> None:
    """Key deleted -> error; bind a new key, retry: the stored original is indexed, once."""
    with member(cluster) as client:
        kb = with_its_key_deleted(cluster, client)
        doc = upload(client, kb, "The axolotl regrows its limbs.\n\nPenguins cannot fly.")
        assert settled(cluster, doc)[0] == "error"

        rebound = client.patch(
            f"/kb/{kb['id']}", json={"embedding_secret_id": add_key(client, GATEWAY_TOKEN)}
        )
        assert rebound.status_code == 200, rebound.text
        r = client.post(f"/rag/documents/{doc}/retry")
        assert r.status_code == 200, r.text
        assert (r.json()["status"], r.json()["error_message"]) == ("processing", None)
        chunks, first = indexed_and_found(cluster, client, kb, doc, "which animal regrows limbs")
        assert "axolotl" in first

        again = client.post(f"/rag/documents/{doc}/retry")
        assert again.status_code == 400
        assert again.json()["error"]["message"] == "Only a failed document can be retried"
        assert settled(cluster, doc) == ("done", None, chunks)
