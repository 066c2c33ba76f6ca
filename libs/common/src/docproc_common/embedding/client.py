"""Embedding clients: what the embedder and the search path call, whatever the provider."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

from docproc_common.blocking import BlockingPool
from docproc_common.embedding.local_model import LocalMiniLM


class EmbeddingClient(Protocol):
    dimensions: int

    async def embed(self, texts: list[str]) -> npt.NDArray[np.float32]: ...


class LocalEmbeddingClient:
    """The in-process model, run on its own bounded pool so inference never blocks the loop."""

    def __init__(self, model: LocalMiniLM, pool: BlockingPool) -> None:
        self._model = model
        self._pool = pool
        self.dimensions = model.DIMENSIONS

    async def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return await self._pool.run(self._model.embed, texts)
