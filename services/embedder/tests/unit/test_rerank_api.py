"""The embedder's ``/v1/rerank`` serving the mounted cross-encoder (a tiny one exported here)
for real (uvicorn on 127.0.0.1), called through the clients a collection on ``cohere`` or
``tei`` uses: the provider path proven against a real model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.rerank.client import (
    HttpReranker,
    RerankCredentialRejectedError,
    RerankEndpointNotFoundError,
    ResolvedReranker,
)
from docproc_common.rerank.cross_encoder import CrossEncoder
from docproc_common.settings import Settings
from docproc_embedder.openai_api import build_openai_router
from docproc_testing.servers import serving_app
from docproc_testing.tiny_rerankers import overlap, tiny_cross_encoder
from fastapi import FastAPI

TOKEN = "sk-embedder-test"  # noqa: S105 - a test bearer
QUERY = "penguins of the antarctic ice"
PASSAGES = [
    "A capybara is a large rodent.",
    "Emperor penguins breed on the antarctic ice.",
    "Penguins live in the south.",
    "Antarctic ice shelves calve icebergs into the sea.",
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_cross_encoder(tmp_path_factory.mktemp("ce"), [QUERY, *PASSAGES], name="tiny-ce")


@pytest.fixture(scope="module")
async def served(model_dir: Path) -> AsyncIterator[tuple[str, EmbeddingClients]]:
    clients = EmbeddingClients(Settings(embedder={"rerank_model_dir": model_dir}))
    app = FastAPI()
    app.include_router(build_openai_router(clients, TOKEN, rerank=True))
    async with serving_app(app) as port:
        yield f"http://127.0.0.1:{port}/v1", clients
    await clients.aclose()


def model_scores(model_dir: Path) -> np.ndarray:
    return CrossEncoder(model_dir, threads=1).score(QUERY, PASSAGES)


@pytest.mark.parametrize(("wire", "model"), [("cohere", "tiny-ce"), ("tei", None)])
async def test_the_clients_get_the_models_scores(
    served: tuple[str, EmbeddingClients], model_dir: Path, wire: str, model: str | None
) -> None:
    url, clients = served
    resolved = ResolvedReranker("docs", wire, model, url, TOKEN)  # both shapes at /v1/rerank
    scores = await HttpReranker(resolved, wire, clients.http()).rerank(QUERY, PASSAGES)  # type: ignore[arg-type]
    np.testing.assert_allclose(scores, model_scores(model_dir), atol=1e-6)
    assert int(np.argmax(scores)) == 1


async def test_answers_best_first_in_each_shape(served: tuple[str, EmbeddingClients]) -> None:
    url, _ = served
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient() as http:
        cohere = await http.post(
            f"{url}/rerank",
            json={"model": "tiny-ce", "query": QUERY, "documents": PASSAGES, "top_n": 2},
            headers=auth,
        )
        tei = await http.post(
            f"{url}/rerank", json={"query": QUERY, "texts": PASSAGES}, headers=auth
        )
    assert cohere.status_code == 200, cohere.text
    results = cohere.json()["results"]
    assert [r["index"] for r in results] == [1, 3]
    assert results[0]["relevance_score"] > results[1]["relevance_score"]
    assert [r["index"] for r in tei.json()][:2] == [1, 3]
    async with httpx.AsyncClient() as http:
        raw = await http.post(
            f"{url}/rerank",
            json={"query": QUERY, "texts": PASSAGES, "raw_scores": True},
            headers=auth,
        )
    logits = {r["index"]: r["score"] for r in raw.json()}  # the model's logits, as TEI's
    vocabulary = [QUERY, *PASSAGES]
    for i, passage in enumerate(PASSAGES):
        assert logits[i] == pytest.approx(overlap(QUERY, passage, vocabulary), abs=1e-4)


async def test_refusals(served: tuple[str, EmbeddingClients]) -> None:
    url, clients = served
    wrong = ResolvedReranker("docs", "cohere", "tiny-ce", url, "sk-wrong")
    with pytest.raises(RerankCredentialRejectedError):
        await HttpReranker(wrong, "cohere", clients.http()).rerank(QUERY, PASSAGES)
    other_model = ResolvedReranker("docs", "cohere", "rerank-v3.5", url, TOKEN)
    with pytest.raises(RerankEndpointNotFoundError):
        await HttpReranker(other_model, "cohere", clients.http()).rerank(QUERY, PASSAGES)
    async with httpx.AsyncClient() as http:
        both = await http.post(
            f"{url}/rerank",
            json={"query": QUERY, "texts": PASSAGES, "documents": PASSAGES},
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
    assert both.status_code == 400


async def test_not_served_without_a_mounted_model() -> None:
    clients = EmbeddingClients(Settings())
    app = FastAPI()
    app.include_router(build_openai_router(clients, None))
    async with serving_app(app) as port, httpx.AsyncClient() as http:
        r = await http.post(
            f"http://127.0.0.1:{port}/v1/rerank", json={"query": "q", "texts": ["a"]}
        )
    assert r.status_code == 404
