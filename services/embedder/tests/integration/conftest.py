from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from docproc_common.db.models import KnowledgeBase
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.runtime import Runtime
from docproc_testing.runtime import fresh_runtime


@pytest.fixture(scope="module")
async def runtime(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Runtime]:
    async with fresh_runtime(tmp_path_factory.mktemp("media")) as rt:
        yield rt


@pytest.fixture(scope="module")
async def clients(runtime: Runtime) -> AsyncIterator[EmbeddingClients]:
    c = EmbeddingClients(runtime.settings)
    yield c
    await c.aclose()


def org_kb(name: str, **embedding: Any) -> KnowledgeBase:
    """A knowledge base of alice's organization named ``name``; ``embedding``: its
    ``embedding_provider``, ``embedding_model``, ``embedding_dim`` (and key or endpoint)."""
    return KnowledgeBase(
        name=name,
        collection_name=name,
        scope="org",
        owner_id="alice",
        organization_id="acme",
        ingestion_config={},
        **embedding,
    )
