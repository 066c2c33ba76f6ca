"""The clients people point at an OpenAI-compatible endpoint - the official ``openai`` SDK
and LangChain's ``OpenAIEmbeddings`` - on their default settings, against the embedder's
own HTTP app (``build`` + ``build_app``, as ``serve`` runs it) on a real socket. Both ask
for ``encoding_format: "base64"`` unless told otherwise; the vectors must be the local
model's."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import httpx2
import numpy as np
import numpy.typing as npt
import openai
import pytest
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.embedding.local_model import LocalMiniLM
from docproc_common.runtime import build_app
from docproc_embedder.app import build
from docproc_testing.runtime import fresh_runtime
from docproc_testing.servers import serving_app
from langchain_openai import OpenAIEmbeddings
from pydantic import SecretStr

pytestmark = pytest.mark.integration

TOKEN = "sk-embedder-test"  # noqa: S105 - a test bearer
TEXTS = [
    "Penguins live in the southern hemisphere.",
    "The capybara is the largest rodent.",
    "Kafka topics are partitioned logs.",
]


@dataclass
class Served:
    url: str
    local: npt.NDArray[np.float32]
    #: The JSON bodies of the embedding requests clients sent through ``http()``.
    sent: list[dict[str, object]] = field(default_factory=list)

    def http(self) -> httpx2.AsyncClient:
        """The HTTP client of the SDK (``httpx2`` since openai 3)."""

        async def record(request: httpx2.Request) -> None:
            if request.url.path.endswith("/embeddings"):
                self.sent.append(json.loads(request.content))

        return httpx2.AsyncClient(event_hooks={"request": [record]})


@pytest.fixture(scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    embedder = {"serve_openai_api": True, "openai_api_token": TOKEN}
    async with fresh_runtime(tmp_path_factory.mktemp("media"), embedder=embedder) as runtime:
        spec = build(runtime)
        app = build_app(runtime, [spec], [], title="embedder")
        reference = EmbeddingClients(runtime.settings)
        try:
            async with serving_app(app) as port:
                local = await reference.local().embed(TEXTS)
                yield Served(f"http://127.0.0.1:{port}/v1", local)
        finally:
            await reference.aclose()
            for close in spec.on_shutdown:
                await close()


def assert_local(served: Served, vectors: object, texts: slice = slice(None)) -> None:
    """``vectors`` are the local model's for ``TEXTS[texts]``."""
    expected = served.local[texts]
    got = np.asarray(vectors, dtype=np.float64)
    assert got.shape == expected.shape
    cosines = np.sum(got * expected, axis=1) / np.linalg.norm(got, axis=1)
    assert np.all(cosines > 0.99999), cosines
    assert np.max(np.abs(got - expected)) < 1e-5


def sdk(served: Served, api_key: str = TOKEN) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=served.url, api_key=api_key, max_retries=0, http_client=served.http()
    )


async def test_openai_sdk_on_default_settings(served: Served) -> None:
    async with sdk(served) as client:
        served.sent.clear()
        answer = await client.embeddings.create(model=LocalMiniLM.MODEL_NAME, input=TEXTS)
        assert served.sent[-1]["encoding_format"] == "base64"  # the SDK's own choice
        assert_local(served, [d.embedding for d in answer.data])
        assert [d.index for d in answer.data] == [0, 1, 2]
        assert answer.model == LocalMiniLM.MODEL_NAME
        assert answer.usage.total_tokens >= len(TEXTS)

        one = await client.embeddings.create(model="all-MiniLM-L6-v2", input=TEXTS[0])
        assert_local(served, [d.embedding for d in one.data], slice(0, 1))
        assert [m.id async for m in client.models.list()] == [LocalMiniLM.MODEL_NAME]


async def test_openai_sdk_named_encodings(served: Served) -> None:
    async with sdk(served) as client:
        floats = await client.embeddings.create(
            model=LocalMiniLM.MODEL_NAME, input=TEXTS, encoding_format="float"
        )
        assert_local(served, [d.embedding for d in floats.data])
        # Named, base64 comes back as the SDK received it: little-endian float32 bytes.
        raw = await client.embeddings.create(
            model=LocalMiniLM.MODEL_NAME, input=TEXTS, encoding_format="base64"
        )
        encoded = [str(d.embedding) for d in raw.data]
        assert_local(served, [np.frombuffer(base64.b64decode(e), dtype="<f4") for e in encoded])


async def test_openai_sdk_errors(served: Served) -> None:
    async with sdk(served) as client:
        with pytest.raises(openai.NotFoundError) as missing:
            await client.embeddings.create(model="text-embedding-3-small", input=TEXTS)
        assert missing.value.code == "model_not_found"
        with pytest.raises(openai.BadRequestError, match="384 dimensions") as narrow:
            await client.embeddings.create(
                model=LocalMiniLM.MODEL_NAME, input=TEXTS, dimensions=128
            )
        assert narrow.value.param == "dimensions"
        with pytest.raises(openai.BadRequestError, match="token arrays") as tokens:
            await client.embeddings.create(model=LocalMiniLM.MODEL_NAME, input=[[1, 2, 3]])
        assert tokens.value.param == "input"
    async with sdk(served, api_key="sk-wrong") as client:
        with pytest.raises(openai.AuthenticationError):
            await client.embeddings.create(model=LocalMiniLM.MODEL_NAME, input=TEXTS)


def langchain(served: Served) -> OpenAIEmbeddings:
    return OpenAIEmbeddings(
        model=LocalMiniLM.MODEL_NAME,
        openai_api_base=served.url,  # alias base_url
        openai_api_key=SecretStr(TOKEN),  # alias api_key
        max_retries=0,
        # LangChain's default tokenizes with tiktoken (whose encodings download at run time:
        # there is no network here) and sends token ids, which this model cannot read - the
        # setting LangChain documents for OpenAI-compatible providers. All else is default,
        # so it asks for base64.
        check_embedding_ctx_length=False,
        http_async_client=served.http(),
    )


async def test_langchain_openai_embeddings(served: Served) -> None:
    embeddings = langchain(served)
    served.sent.clear()
    assert_local(served, await embeddings.aembed_documents(TEXTS))
    assert served.sent[-1]["encoding_format"] == "base64"
    assert_local(served, [await embeddings.aembed_query(TEXTS[0])], slice(0, 1))
    # The sync client (its own pool) from a thread, since the server runs on this loop.
    assert_local(served, await asyncio.to_thread(embeddings.embed_documents, TEXTS))
