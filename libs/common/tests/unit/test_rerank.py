"""The mounted cross-encoder (a tiny one exported here) and the providers' ``/rerank`` clients
against a strict stand-in of each documented API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from docproc_common.blocking import BlockingPool
from docproc_common.rerank.client import (
    RERANK_PROVIDERS,
    HttpReranker,
    LocalReranker,
    RerankCredentialRejectedError,
    RerankEndpointNotFoundError,
    RerankProviderError,
    RerankProviderUnavailable,
    ResolvedReranker,
)
from docproc_common.rerank.cross_encoder import CrossEncoder, CrossEncoderMissing
from docproc_testing.rerank_standin import RerankStandIn, running_rerank_standin, standin_score
from docproc_testing.tiny_rerankers import overlap, tiny_cross_encoder

QUERY = "which penguins live in the antarctic ice"
PASSAGES = [
    "The capybara is the largest rodent of South America.",
    "Emperor penguins breed on the antarctic ice in winter.",
    "Penguins live in the southern hemisphere.",
    "Kafka topics are partitioned logs.",
    "Ice shelves of the antarctic coast calve icebergs; penguins and seals live there.",
]
VOCABULARY = [QUERY, *PASSAGES]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_cross_encoder(tmp_path_factory.mktemp("ce"), VOCABULARY)


def expected_order(query: str, passages: list[str]) -> list[int]:
    logits = [overlap(query, p, VOCABULARY) for p in passages]
    return sorted(range(len(passages)), key=lambda i: -logits[i])


class TestCrossEncoder:
    def test_scores_are_the_models_and_rank_by_the_pair(self, model_dir: Path) -> None:
        model = CrossEncoder(model_dir, threads=1)
        scores = model.score(QUERY, PASSAGES)
        logits = np.array([overlap(QUERY, p, VOCABULARY) for p in PASSAGES])
        np.testing.assert_allclose(scores, 1 / (1 + np.exp(-logits)), atol=1e-6)
        assert list(np.argsort(-scores, kind="stable")) == expected_order(QUERY, PASSAGES)
        # the query matters: another query, another order
        other = "largest rodent"
        assert int(np.argmax(model.score(other, PASSAGES))) == 0
        assert model.name == "tiny"

    def test_batches_and_long_pairs(self, model_dir: Path) -> None:
        model = CrossEncoder(model_dir, threads=1)
        many = PASSAGES * 7  # over one batch
        assert np.allclose(model.score(QUERY, many)[:5], model.score(QUERY, PASSAGES))
        long = " ".join(["penguins"] * 1000)  # past the 128-token window: cut, not refused
        assert model.score(QUERY, [long]).shape == (1,)

    def test_a_directory_without_a_model_refuses(self, tmp_path: Path) -> None:
        with pytest.raises(CrossEncoderMissing):
            CrossEncoder(tmp_path)
        (tmp_path / "model.onnx").write_bytes(b"not a graph")
        (tmp_path / "tokenizer.json").write_bytes(
            (tiny_cross_encoder(tmp_path / "t", VOCABULARY) / "tokenizer.json").read_bytes()
        )
        with pytest.raises(CrossEncoderMissing, match="could not be loaded"):
            CrossEncoder(tmp_path)

    async def test_local_reranker_runs_off_the_loop(self, model_dir: Path) -> None:
        pool = BlockingPool(1, name="test-rerank")
        try:
            reranker = LocalReranker(CrossEncoder(model_dir, threads=1), pool)
            scores = await reranker.rerank(QUERY, PASSAGES)
            assert list(np.argsort(-scores, kind="stable")) == expected_order(QUERY, PASSAGES)
            assert (await reranker.rerank(QUERY, [])).shape == (0,)
        finally:
            pool.shutdown()


@pytest.fixture(params=["cohere", "jina", "tei"])
def standin(request: pytest.FixtureRequest) -> Iterator[RerankStandIn]:
    with running_rerank_standin(flavour=request.param) as s:
        yield s


def reranker_for(s: RerankStandIn, http: httpx.AsyncClient, **kw: str) -> HttpReranker:
    provider = s.flavour
    fields = {"model": None if provider == "tei" else "rerank-v3.5", "api_key": s.api_key}
    fields.update(kw)
    resolved = ResolvedReranker("docs", provider, fields["model"], s.url, fields["api_key"])
    return HttpReranker(resolved, RERANK_PROVIDERS[provider].wire, http)


class TestHttpReranker:
    async def test_scores_in_the_passages_order(self, standin: RerankStandIn) -> None:
        async with httpx.AsyncClient() as http:
            scores = await reranker_for(standin, http).rerank(QUERY, PASSAGES)
        assert scores.tolist() == [standin_score(QUERY, p) for p in PASSAGES]
        sent = standin.requests[-1]
        assert sent.bearer == standin.api_key
        if standin.flavour == "tei":
            assert sent.body["texts"] == PASSAGES
        else:
            assert sent.body["documents"] == PASSAGES
            assert sent.body["top_n"] == len(PASSAGES)  # every passage comes back scored

    async def test_a_rejected_key_is_named(self, standin: RerankStandIn) -> None:
        async with httpx.AsyncClient() as http:
            with pytest.raises(RerankCredentialRejectedError, match=r"rejected the key.*401"):
                await reranker_for(standin, http, api_key="rk-wrong").rerank(QUERY, PASSAGES)

    async def test_a_wrong_endpoint_is_named(self, standin: RerankStandIn) -> None:
        async with httpx.AsyncClient() as http:
            client = reranker_for(standin, http)
            client._url = client._url.replace("/rerank", "/nowhere/rerank")
            with pytest.raises(RerankEndpointNotFoundError, match="does not serve /rerank"):
                await client.rerank(QUERY, PASSAGES)

    async def test_provider_failures(self, standin: RerankStandIn) -> None:
        async with httpx.AsyncClient() as http:
            client = reranker_for(standin, http)
            standin.status = 503
            with pytest.raises(RerankProviderUnavailable, match="HTTP 503"):
                await client.rerank(QUERY, PASSAGES)
            standin.status = 200
            standin.body = {"results": [{"index": 7, "relevance_score": 1.0}]}
            with pytest.raises(RerankProviderError, match="not a ranking"):
                await client.rerank(QUERY, PASSAGES[:1])

    async def test_an_unreachable_host(self) -> None:
        with running_rerank_standin() as gone:
            url = gone.url
        resolved = ResolvedReranker("docs", "cohere", "m", url, "k")
        async with httpx.AsyncClient() as http:
            with pytest.raises(RerankProviderUnavailable, match="could not be reached"):
                await HttpReranker(resolved, "cohere", http).rerank(QUERY, PASSAGES)


def test_the_standin_holds_requests_to_the_documented_shape(standin: RerankStandIn) -> None:
    """What makes the stand-in worth passing: a body the provider refuses is refused."""
    passages = "texts" if standin.flavour == "tei" else "documents"
    good: dict[str, object] = {"query": "q", passages: ["a"]}
    if standin.flavour != "tei":
        good["model"] = "m"
    auth = {"Authorization": f"Bearer {standin.api_key}"}
    url = standin.url + "/rerank"
    assert httpx.post(url, json=good, headers=auth).status_code == 200
    for bad in ({**good, "extra": 1}, {k: v for k, v in good.items() if k != "query"}):
        assert httpx.post(url, json=bad, headers=auth).status_code in (400, 422)
    assert httpx.post(url, json=good).status_code == 401
