from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.runtime import Runtime
from docproc_common.testing.runtime import fresh_runtime


@pytest.fixture(scope="module")
async def runtime(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Runtime]:
    async with fresh_runtime(tmp_path_factory.mktemp("media")) as rt:
        yield rt


@pytest.fixture(scope="module")
async def clients(runtime: Runtime) -> AsyncIterator[EmbeddingClients]:
    c = EmbeddingClients(runtime.settings)
    yield c
    await c.aclose()
