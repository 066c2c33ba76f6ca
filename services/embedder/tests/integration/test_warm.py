"""The local model is loaded at start-up only when something will use it (~150 MiB otherwise)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.runtime import Runtime
from docproc_embedder.app import warm_model
from docproc_testing.rows import knowledge_base
from docproc_testing.runtime import fresh_runtime
from docproc_testing.tiny_models import tiny_encoder

pytestmark = pytest.mark.integration
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture
async def empty(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Runtime]:
    """A deployment with no knowledge base yet."""
    async with fresh_runtime(tmp_path_factory.mktemp("media")) as rt:
        yield rt


async def loaded(runtime: Runtime, serves_openai_api: bool = False) -> frozenset[str]:
    clients = EmbeddingClients(runtime.settings)
    try:
        await warm_model(runtime, clients, serves_openai_api)(asyncio.Event())
        return clients.loaded
    finally:
        await clients.aclose()


async def warmed(runtime: Runtime, serves_openai_api: bool = False) -> bool:
    return MINILM in await loaded(runtime, serves_openai_api)


async def add_kb(runtime: Runtime, provider: str, model: str, dim: int) -> None:
    name = f"warm_{uuid.uuid4().hex[:8]}"
    async with runtime.sessionmaker() as s, s.begin():
        s.add(
            knowledge_base(
                name, embedding_provider=provider, embedding_model=model, embedding_dim=dim
            )
        )


async def test_loaded_only_once_a_knowledge_base_uses_it(empty: Runtime) -> None:
    assert await warmed(empty) is False
    await add_kb(empty, "openai", "text-embedding-3-small", 1536)
    assert await warmed(empty) is False  # a remote provider needs no local model
    await add_kb(empty, "local", MINILM, 384)
    assert await warmed(empty) is True


async def test_loaded_when_the_embedder_serves_it_over_http(empty: Runtime) -> None:
    assert await warmed(empty, serves_openai_api=True) is True


async def test_a_mounted_model_in_use_is_loaded_and_one_gone_is_only_logged(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    models = tmp_path_factory.mktemp("models")
    tiny_encoder(models / "tiny", name="docproc-test/tiny-encoder")
    media = tmp_path_factory.mktemp("media")
    async with fresh_runtime(media, embedder={"models_dir": models}) as runtime:
        await add_kb(runtime, "local", "docproc-test/tiny-encoder", 16)
        await add_kb(runtime, "local", "docproc-test/unmounted", 16)
        assert await loaded(runtime) == {"docproc-test/tiny-encoder"}  # not MiniLM either
