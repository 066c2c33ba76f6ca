"""The embedder's OpenAI-compatible ``/v1/embeddings`` served for real (uvicorn on 127.0.0.1),
called through the same HTTP client a collection on ``openai`` uses."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator

import httpx
import numpy as np
import pytest
from docproc_common.embedding.client import (
    CredentialSource,
    EmbeddingClients,
    EmbeddingCredentialRejectedError,
    EmbeddingModelNotServedError,
    HttpEmbeddingClient,
    ResolvedEmbedding,
)
from docproc_common.embedding.local_model import LocalMiniLM
from docproc_common.settings import Settings
from docproc_embedder.openai_api import MAX_INPUTS, build_openai_router, render
from docproc_testing.infra import find_repo_root
from docproc_testing.servers import serving_app
from fastapi import FastAPI

TOKEN = "sk-embedder-test"  # noqa: S105 - a test bearer


@pytest.fixture(scope="module")
async def served() -> AsyncIterator[tuple[str, EmbeddingClients]]:
    clients = EmbeddingClients(
        Settings(embedder={"model_cache_dir": find_repo_root() / ".cache" / "models"})
    )
    app = FastAPI()
    app.include_router(build_openai_router(clients, TOKEN))
    async with serving_app(app) as port:
        yield f"http://127.0.0.1:{port}/v1", clients
    await clients.aclose()


def resolved(url: str, **kw: object) -> ResolvedEmbedding:
    base: dict[str, object] = {
        "collection_name": "docs",
        "provider": "openai",
        "model": LocalMiniLM.MODEL_NAME,
        "dims": 384,
        "base_url": url,
        "api_key": TOKEN,
        "source": CredentialSource.COLLECTION_SECRET,
        "max_input_tokens": 256,
        "max_inputs_per_request": 3,
    }
    base.update(kw)
    return ResolvedEmbedding(**base)  # type: ignore[arg-type]


async def test_same_vectors_as_in_process(served: tuple[str, EmbeddingClients]) -> None:
    url, clients = served
    texts = [
        "Penguins live in the southern hemisphere.",
        "The capybara is the largest rodent.",
        "Kafka topics are partitioned logs.",
        "pgvector adds a vector type to Postgres.",
        "",
    ]
    over_http = await HttpEmbeddingClient(resolved(url), clients.http()).embed(texts)
    local = await clients.local().embed([t or " " for t in texts])
    assert over_http.shape == (5, 384)
    cosines = np.sum(over_http * local, axis=1)
    assert np.all(cosines > 0.99999), cosines


async def test_wrong_token_is_a_rejected_credential(
    served: tuple[str, EmbeddingClients],
) -> None:
    url, clients = served
    client = HttpEmbeddingClient(resolved(url, api_key="sk-wrong"), clients.http())
    with pytest.raises(EmbeddingCredentialRejectedError, match="HTTP 401"):
        await client.embed(["a"])
    client = HttpEmbeddingClient(resolved(url, api_key=None), clients.http())
    with pytest.raises(EmbeddingCredentialRejectedError):
        await client.embed(["a"])


async def test_unknown_model_is_not_served(served: tuple[str, EmbeddingClients]) -> None:
    url, clients = served
    client = HttpEmbeddingClient(resolved(url, model="text-embedding-3-small"), clients.http())
    with pytest.raises(EmbeddingModelNotServedError):
        await client.embed(["a"])


async def test_openai_shapes(served: tuple[str, EmbeddingClients]) -> None:
    url, _ = served
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(headers=auth) as http:
        models = (await http.get(f"{url}/models")).json()
        assert [m["id"] for m in models["data"]] == [LocalMiniLM.MODEL_NAME]
        one = await http.post(
            f"{url}/embeddings", json={"model": "all-MiniLM-L6-v2", "input": "hi"}
        )
        assert one.status_code == 200
        body = one.json()
        assert body["object"] == "list"
        assert body["data"][0]["index"] == 0
        assert len(body["data"][0]["embedding"]) == 384
        assert all(isinstance(x, float) for x in body["data"][0]["embedding"])  # the default
        assert body["usage"]["total_tokens"] >= 1
        for unknown in ("int8", ""):
            bad = await http.post(
                f"{url}/embeddings",
                json={"model": LocalMiniLM.MODEL_NAME, "input": "hi", "encoding_format": unknown},
            )
            assert bad.status_code == 400
            assert bad.json()["error"]["param"] == "encoding_format"
        bad = await http.post(
            f"{url}/embeddings",
            json={"model": LocalMiniLM.MODEL_NAME, "input": ["a"], "dimensions": 128},
        )
        assert bad.status_code == 400
        assert bad.json()["error"]["type"] == "invalid_request_error"
        async with httpx.AsyncClient() as anonymous:
            assert (await anonymous.get(f"{url}/models")).status_code == 200
        denied = await http.post(
            f"{url}/embeddings",
            json={"model": LocalMiniLM.MODEL_NAME, "input": ["a"]},
            headers={"Authorization": "Bearer nope"},
        )
        assert denied.status_code == 401
        assert denied.json()["error"]["code"] == "invalid_api_key"


@pytest.mark.parametrize("encoding_format", ["float", "base64"])
async def test_a_full_answer_does_not_stall_the_event_loop(encoding_format: str) -> None:
    """2048 vectors as one ``json.dumps`` hold the GIL for about a second."""
    vectors = np.random.default_rng(0).random((MAX_INPUTS, 384), dtype=np.float32)
    stalls: list[float] = []
    rendering = asyncio.create_task(asyncio.to_thread(render, vectors, encoding_format, 1))
    while not rendering.done():
        before = time.perf_counter()
        await asyncio.sleep(0.005)
        stalls.append(time.perf_counter() - before - 0.005)
    answer = json.loads(await rendering)
    assert [d["index"] for d in answer["data"]] == list(range(MAX_INPUTS))
    assert max(stalls) < 0.3, f"the loop stalled {max(stalls):.2f} s"
