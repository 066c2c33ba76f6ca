"""HTTP embedding client against a real loopback stand-in; catalog; base-URL policy."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from ipaddress import ip_address
from pathlib import Path

import numpy as np
import pytest
from docproc_common.egress import pinned
from docproc_common.embedding.catalog import catalog, load_catalog, model_spec, provider_spec
from docproc_common.embedding.client import (
    CredentialSource,
    EmbeddingClients,
    EmbeddingCredentialRejectedError,
    EmbeddingEndpointRefusedError,
    EmbeddingModelNotServedError,
    EmbeddingNotConfiguredError,
    EmbeddingProviderError,
    HttpEmbeddingClient,
    RefusingClient,
    ResolvedEmbedding,
    split_text,
)
from docproc_common.errors import RetryableError
from docproc_common.failures import Stage, failure_message
from docproc_common.settings import Settings
from docproc_testing.embedding_standin import StandIn, running_standin, standin_vector


def resolved(url: str | None, **kw: object) -> ResolvedEmbedding:
    base: dict[str, object] = {
        "collection_name": "docs",
        "provider": "openai",
        "model": "m",
        "dims": 8,
        "base_url": url,
        "api_key": "sk-standin",
        "source": CredentialSource.COLLECTION_SECRET,
        "max_input_tokens": 100,
        "max_inputs_per_request": 4,
    }
    base.update(kw)
    return ResolvedEmbedding(**base)  # type: ignore[arg-type]


@pytest.fixture
async def clients() -> AsyncIterator[EmbeddingClients]:
    c = EmbeddingClients(Settings())
    yield c
    await c.aclose()


class TestSplitText:
    def test_short_text_is_one_piece(self) -> None:
        assert split_text("hello", 10) == ["hello"]

    def test_empty_text_becomes_a_space(self) -> None:
        assert split_text("", 10) == [" "]

    def test_cuts_at_whitespace_and_keeps_everything(self) -> None:
        text = "alpha beta gamma delta epsilon zeta eta theta"
        pieces = split_text(text, 12)
        assert all(len(p) <= 12 for p in pieces)
        assert "".join(pieces) == text
        assert all(p.endswith(" ") for p in pieces[:-1])

    def test_no_whitespace(self) -> None:
        assert split_text("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]


class TestHttpClient:
    async def test_batches_and_bearer(self, clients: EmbeddingClients) -> None:
        with running_standin(dims=8) as s:
            client = HttpEmbeddingClient(resolved(s.url), clients.http())
            texts = [f"text {i}" for i in range(10)]
            vectors = await client.embed(texts)
        assert vectors.shape == (10, 8)
        assert [len(r.body["input"]) for r in s.requests] == [4, 4, 2]
        assert {r.bearer for r in s.requests} == {"sk-standin"}
        assert {r.body["model"] for r in s.requests} == {"m"}
        for text, vector in zip(texts, vectors, strict=True):
            assert np.allclose(vector, standin_vector(text, 8), atol=1e-6)

    async def test_token_budget_splits_requests(self, clients: EmbeddingClients) -> None:
        with running_standin(dims=8) as s:
            client = HttpEmbeddingClient(
                resolved(s.url, max_tokens_per_request=10, max_inputs_per_request=100),
                clients.http(),
            )
            await client.embed(["x" * 15, "y" * 15, "z" * 15])  # 5 tokens each at 3 chars/token
        assert [len(r.body["input"]) for r in s.requests] == [2, 1]

    async def test_long_input_is_windowed_and_pooled(self, clients: EmbeddingClients) -> None:
        text = "word " * 100  # 500 chars; 10 tokens * 3 chars = 30 chars per piece
        with running_standin(dims=8) as s:
            client = HttpEmbeddingClient(
                resolved(s.url, max_input_tokens=10, max_inputs_per_request=1000), clients.http()
            )
            (vector,) = await client.embed([text])
        pieces = split_text(text, 30)
        sent = [t for r in s.requests for t in r.body["input"]]
        assert sent == pieces
        pooled = np.sum([len(p) * np.array(standin_vector(p, 8)) for p in pieces], axis=0)
        expected = pooled / np.linalg.norm(pooled)
        assert np.allclose(vector, expected, atol=1e-6)
        assert abs(np.linalg.norm(vector) - 1) < 1e-5

    async def test_no_key_sends_no_authorization(self, clients: EmbeddingClients) -> None:
        with running_standin(dims=8) as s:
            await HttpEmbeddingClient(resolved(s.url, api_key=None), clients.http()).embed(["a"])
        assert s.requests[0].bearer is None

    @pytest.mark.parametrize("status", [401, 403])
    async def test_rejected_credential(self, clients: EmbeddingClients, status: int) -> None:
        with running_standin(dims=8, status=status) as s:
            client = HttpEmbeddingClient(resolved(s.url), clients.http())
            with pytest.raises(EmbeddingCredentialRejectedError) as info:
                await client.embed(["a"])
        message = failure_message(Stage.INDEX, info.value)
        assert message == info.value.message
        assert message == (
            f"The embedding provider 'openai' rejected the credential of collection 'docs' "
            f"(HTTP {status}) - replace the key in the vault or bind another one to the collection"
        )
        assert "127.0.0.1" not in message
        assert [r.bearer for r in s.requests] == ["sk-standin"]  # the key it was given, refused

    async def test_404_is_model_not_served(self, clients: EmbeddingClients) -> None:
        with running_standin(dims=8, status=404) as s:
            client = HttpEmbeddingClient(resolved(s.url), clients.http())
            with pytest.raises(EmbeddingModelNotServedError, match="does not serve the model 'm'"):
                await client.embed(["a"])

    @pytest.mark.parametrize("status", [429, 500, 502, 503])
    async def test_retryable(
        self, clients: EmbeddingClients, status: int, caplog: pytest.LogCaptureFixture
    ) -> None:
        with running_standin(dims=8, status=status) as s:
            client = HttpEmbeddingClient(resolved(s.url), clients.http())
            with pytest.raises(RetryableError, match=f"HTTP {status}") as info:
                await client.embed(["a"])
        # the stored message names no endpoint; the worker log says who answered what
        assert "127.0.0.1" not in str(info.value)
        assert f"answered HTTP {status} for collection docs" in caplog.text

    async def test_other_4xx(self, clients: EmbeddingClients) -> None:
        with running_standin(dims=8, status=400) as s:
            client = HttpEmbeddingClient(resolved(s.url), clients.http())
            with pytest.raises(EmbeddingProviderError, match="refused the request"):
                await client.embed(["a"])

    async def test_error_inside_a_200(self, clients: EmbeddingClients) -> None:
        body = {"error": {"code": 401, "message": "User not found."}}
        with running_standin(dims=8, body=body) as s:
            client = HttpEmbeddingClient(resolved(s.url), clients.http())
            with pytest.raises(EmbeddingCredentialRejectedError):
                await client.embed(["a"])

    async def test_wrong_width(self, clients: EmbeddingClients) -> None:
        with running_standin(dims=5) as s:
            client = HttpEmbeddingClient(resolved(s.url), clients.http())
            with pytest.raises(EmbeddingProviderError, match="width 5"):
                await client.embed(["a"])

    async def test_unreachable_is_retryable(self, clients: EmbeddingClients) -> None:
        with running_standin(dims=8) as s:
            url = s.url
        client = HttpEmbeddingClient(resolved(url), clients.http())
        with pytest.raises(RetryableError, match="could not be reached"):
            await client.embed(["a"])


def org_endpoint(url: str) -> ResolvedEmbedding:
    """An organization's registered endpoint on a deployment that allows no private ones."""
    return resolved(
        url, provider="ollama", api_key=None, source=CredentialSource.KEYLESS, public_only=True
    )


class TestOrganizationEndpoint:
    """Issue 25: an organization's endpoint reaches only public addresses, checked after DNS
    and pinned; a refusal is one error, raised before any connection."""

    REFUSED = (
        "The embedding endpoint of collection 'docs' (ollama) is refused: {host} is not a "
        "public address this deployment lets an organization's endpoint reach"
    )

    @pytest.mark.parametrize("answer", [200, 401, 404, 500, "closed"])
    async def test_loopback_is_refused_alike_whatever_listens_there(
        self, clients: EmbeddingClients, answer: int | str
    ) -> None:
        """Not a port scanner: an open port, any status and a closed port read the same."""
        with running_standin(StandIn(status=200 if answer == "closed" else int(answer))) as s:
            url = s.url
            if answer != "closed":
                with pytest.raises(EmbeddingEndpointRefusedError) as info:
                    await clients.client(org_endpoint(url)).embed(["a"])
        if answer == "closed":
            with pytest.raises(EmbeddingEndpointRefusedError) as info:
                await clients.client(org_endpoint(url)).embed(["a"])
        assert info.value.message == self.REFUSED.format(host="127.0.0.1")
        assert failure_message(Stage.INDEX, info.value) == info.value.message
        assert s.requests == []

    @pytest.mark.parametrize("answer", [["127.0.0.1"], ["93.184.216.34", "10.0.0.7"], None])
    async def test_a_name_resolving_inside_or_not_at_all_is_refused_alike(
        self, clients: EmbeddingClients, monkeypatch: pytest.MonkeyPatch, answer: list[str] | None
    ) -> None:
        async def resolve(_host: str, _port: int) -> list[str]:
            if answer is None:
                raise OSError("no such name")
            return answer

        monkeypatch.setattr(pinned, "resolve", resolve)
        with running_standin(dims=8) as s:
            url = f"http://ollama.example.com:{s.port}/v1"
            with pytest.raises(EmbeddingEndpointRefusedError) as info:
                await clients.client(org_endpoint(url)).embed(["a"])
        assert info.value.message == self.REFUSED.format(host="ollama.example.com")
        assert s.requests == []

    async def test_a_public_answer_is_reached_at_the_checked_address_by_its_name(
        self, clients: EmbeddingClients, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The stand-in's loopback address counts as public here: the request is pinned to
        the one answer, and the endpoint sees its name in ``Host``."""
        lookups: list[str] = []

        async def resolve(host: str, _port: int) -> list[str]:
            lookups.append(host)
            return ["127.0.0.1"]

        monkeypatch.setattr(pinned, "resolve", resolve)
        monkeypatch.setattr(  # a name still raises ValueError, as ever
            pinned.rules, "is_public", lambda address: str(ip_address(address)) == "127.0.0.1"
        )
        with running_standin(dims=8) as s:
            url = f"http://ollama.example.com:{s.port}/v1"
            client = clients.client(org_endpoint(url))
            vectors = await client.embed(["a", "b", "c", "d", "e"])  # two requests
        assert np.allclose(vectors[0], standin_vector("a", 8), atol=1e-6)
        assert len(s.requests) == 2
        assert lookups == ["ollama.example.com"]

    async def test_a_deployment_endpoint_takes_the_plain_client(
        self, clients: EmbeddingClients
    ) -> None:
        with running_standin(dims=8) as s:
            deployment = resolved(
                s.url, provider="ollama", api_key=None, source=CredentialSource.KEYLESS
            )
            await clients.client(deployment).embed(["a"])
        assert [r.path for r in s.requests] == ["/v1/embeddings"]


class TestRefusal:
    @pytest.mark.parametrize(
        ("source", "text"),
        [
            (
                CredentialSource.NO_SECRET,
                "credential is configured for this collection 'docs' (openai): the collection names no key",
            ),
            (
                CredentialSource.SECRET_DELETED,
                "credential is configured for this collection 'docs' (openai): the secret was deleted",
            ),
            (CredentialSource.SECRET_UNOPENABLE, "the secret could not be opened"),
            (CredentialSource.SECRET_WITHOUT_KEY, "the secret holds no API key"),
            (CredentialSource.ENDPOINT_MISSING, "No embedding service is configured"),
        ],
    )
    async def test_degraded_client_refuses(
        self, clients: EmbeddingClients, source: CredentialSource, text: str
    ) -> None:
        client = clients.client(resolved(None, api_key=None, source=source))
        assert isinstance(client, RefusingClient)
        with pytest.raises(EmbeddingNotConfiguredError) as info:
            await client.embed(["a"])
        assert text in info.value.message
        assert failure_message(Stage.INDEX, info.value) == info.value.message

    def test_repr_hides_the_key(self) -> None:
        assert "sk-standin" not in repr(resolved("http://x"))


class TestCatalog:
    def test_packaged(self) -> None:
        assert model_spec("openai", "text-embedding-3-small").dimensions == 1536
        assert provider_spec("ollama").credential == "endpoint"
        assert provider_spec("openrouter").supports_base_url
        assert not provider_spec("local").supports_base_url

    def test_same_space_across_providers(self) -> None:
        small = model_spec("openai", "text-embedding-3-small")
        moved = provider_spec("openrouter").model_in_space(small.space, small.dimensions)
        assert moved is not None
        assert moved.model == "openai/text-embedding-3-small"

    def test_extension_adds_models(self, tmp_path: Path) -> None:
        path = tmp_path / "extra.json"
        path.write_text(
            json.dumps(
                {
                    "providers": {
                        "openai": {"models": {"mini": {"dimensions": 384, "max_input_tokens": 256}}}
                    }
                }
            )
        )
        extended = load_catalog(path)
        assert extended["openai"].models["mini"].dimensions == 384
        assert "mini" not in catalog()["openai"].models

    def test_extension_cannot_add_providers(self, tmp_path: Path) -> None:
        path = tmp_path / "extra.json"
        path.write_text(json.dumps({"providers": {"cohere": {"models": {}}}}))
        with pytest.raises(ValueError, match="unknown provider"):
            load_catalog(path)
