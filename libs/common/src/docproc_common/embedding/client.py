"""Embedding clients: what the embedder and the search path call, whatever the provider."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from docproc_common.blocking import BlockingPool
from docproc_common.embedding.catalog import model_spec
from docproc_common.embedding.local_model import LocalMiniLM
from docproc_common.errors import InvalidInput


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


class EmbeddingClients:
    """Resolves a collection's provider and model to a client; one local model per process."""

    def __init__(
        self, pool: BlockingPool, cache_dir: Path, threads: int | None, batch_size: int
    ) -> None:
        self._pool = pool
        self._cache_dir = cache_dir
        self._threads = threads
        self._batch_size = batch_size
        self._local: LocalEmbeddingClient | None = None
        self._lock = threading.Lock()

    def for_collection(self, provider: str, model: str) -> EmbeddingClient:
        spec = model_spec(provider, model)
        if spec.provider == "local":
            return self.local()
        raise InvalidInput(
            f"The embedding provider '{provider}' is not available in this deployment"
        )

    def local(self) -> LocalEmbeddingClient:
        with self._lock:
            if self._local is None:
                model = LocalMiniLM(
                    cache_dir=self._cache_dir, threads=self._threads, batch_size=self._batch_size
                )
                self._local = LocalEmbeddingClient(model, self._pool)
            return self._local
