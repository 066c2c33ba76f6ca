"""LocalEmbeddingClient fuses the requests that wait while the model runs into one call."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from docproc_common.blocking import BlockingPool
from docproc_common.embedding.client import LocalEmbeddingClient
from docproc_common.embedding.local_model import InputKind, LocalMiniLM


class GatedModel:
    """A stand-in model: each text's vector is its length; a call waits for ``gate``."""

    DIMENSIONS = dimensions = 2

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.kinds: list[str] = []
        self.gate = threading.Event()
        self.running = threading.Event()

    def embed(self, texts: Sequence[str], kind: str = "passage") -> npt.NDArray[np.float32]:
        self.calls.append(list(texts))
        self.kinds.append(kind)
        self.running.set()
        assert self.gate.wait(30)
        if "boom" in texts:
            raise ValueError("boom")
        return np.array([[len(t), 1] for t in texts], dtype=np.float32)

    def count_tokens(self, text: str) -> int:
        return len(text)


@pytest.fixture
def pool() -> Iterator[BlockingPool]:
    pool = BlockingPool(1, name="test-embed-local")
    yield pool
    pool.shutdown()


async def busy(
    pool: BlockingPool, **options: int
) -> tuple[GatedModel, LocalEmbeddingClient, asyncio.Task[Any]]:
    """A client whose model is inside its first call (``["a"]``, held until ``gate`` opens)."""
    model = GatedModel()
    client = LocalEmbeddingClient(model, pool, **options)  # type: ignore[arg-type]
    first = asyncio.create_task(client.embed(["a"]))
    assert await asyncio.to_thread(model.running.wait, 30)
    return model, client, first


async def test_requests_waiting_while_the_model_runs_share_the_next_call(
    pool: BlockingPool,
) -> None:
    model, client, first = await busy(pool)
    waiting = [asyncio.create_task(client.embed(["b" * n] * n)) for n in (1, 2, 3)]
    await asyncio.sleep(0.05)
    model.gate.set()
    assert (await first).tolist() == [[1, 1]]
    for n, task in zip((1, 2, 3), waiting, strict=True):
        assert (await task).tolist() == [[n, 1]] * n  # each gets its own rows back
    assert model.calls == [["a"], ["b", "bb", "bb", "bbb", "bbb", "bbb"]]


async def test_a_fused_call_takes_whole_requests_up_to_the_bound(pool: BlockingPool) -> None:
    model, client, first = await busy(pool, max_fused_texts=3)
    sizes = (2, 1, 2, 5)
    waiting = [asyncio.create_task(client.embed(["x"] * n)) for n in sizes]
    await asyncio.sleep(0.05)
    model.gate.set()
    await asyncio.gather(first, *waiting)
    # 2+1 fill the bound; 2 alone (2+5 > 3); 5 alone (a request is never split)
    assert [len(c) for c in model.calls] == [1, 3, 2, 5]


async def test_a_failing_request_fails_alone(pool: BlockingPool) -> None:
    model, client, first = await busy(pool)
    good = asyncio.create_task(client.embed(["ok"]))
    bad = asyncio.create_task(client.embed(["boom"]))
    other = asyncio.create_task(client.embed(["fine"]))
    await asyncio.sleep(0.05)
    model.gate.set()
    await first
    assert (await good).tolist() == [[2, 1]]
    assert (await other).tolist() == [[4, 1]]
    with pytest.raises(ValueError, match="boom"):
        await bad
    # the fused call failed, then each of its requests ran on its own
    assert model.calls[1:] == [["ok", "boom", "fine"], ["ok"], ["boom"], ["fine"]]


async def test_a_cancelled_request_is_left_out(pool: BlockingPool) -> None:
    model, client, first = await busy(pool)
    gone = asyncio.create_task(client.embed(["gone"]))
    kept = asyncio.create_task(client.embed(["kept"]))
    await asyncio.sleep(0.05)
    gone.cancel()
    model.gate.set()
    await first
    assert (await kept).tolist() == [[4, 1]]
    assert gone.cancelled()
    assert model.calls == [["a"], ["kept"]]


def _documents(model: LocalMiniLM) -> list[list[str]]:
    """Four documents of knowledge-base-like chunks: a full window and a tail of any length."""
    vocab = sorted(w for w in model._tokenizer.get_vocab() if w.isascii() and w.isalpha())
    words = [w for w in vocab if len(w) >= 4]
    documents = []
    for d, count in enumerate((2, 4, 1, 3)):
        documents.append(
            [
                " ".join(words[(d * 40 + c) * 50 : (d * 40 + c) * 50 + 260 + 19 * c])
                for c in range(count)
            ]
            + [f"Document {d} ends here."]
        )
    return documents


async def test_documents_embedded_together_equal_each_one_embedded_alone_unbatched(
    pool: BlockingPool,
) -> None:
    model = LocalMiniLM(threads=2)
    unbatched = LocalMiniLM(threads=2, batch_tokens=1)  # one model call per window, no padding
    documents = _documents(model)
    expected = [unbatched.embed(doc) for doc in documents]

    calls: list[int] = []
    embed = model.embed

    def counting(
        texts: Sequence[str], *, truncate: bool = False, kind: InputKind = "passage"
    ) -> npt.NDArray[np.float32]:
        calls.append(len(texts))
        return embed(texts, truncate=truncate, kind=kind)

    model.embed = counting  # type: ignore[method-assign]
    client = LocalEmbeddingClient(model, pool)
    got = await asyncio.gather(*(client.embed(doc) for doc in documents))
    assert len(calls) < len(documents)  # fused: the later documents shared one call
    for vectors, reference in zip(got, expected, strict=True):
        assert vectors.shape == reference.shape
        assert np.max(np.abs(vectors - reference)) <= 1e-6
