"""LocalMiniLM (all-MiniLM-L6-v2 on onnxruntime) against sentence-transformers' reference vectors."""

from __future__ import annotations

import json
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from docproc_common.embedding import local_model
from docproc_common.embedding.local_model import LocalMiniLM

# sentence-transformers' own vectors for the model, committed as test data
REFERENCE = Path(__file__).resolve().parents[1] / "data" / "all-minilm-l6-v2.json"


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def model(cache_dir: Path) -> LocalMiniLM:
    return LocalMiniLM(cache_dir=cache_dir, threads=2)


@pytest.fixture(scope="module")
def reference() -> list[dict[str, Any]]:
    assert REFERENCE.is_file(), f"reference vectors missing: {REFERENCE}"
    items: list[dict[str, Any]] = json.loads(REFERENCE.read_text())["items"]
    return items


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = np.atleast_2d(a).astype(np.float64)
    b = np.atleast_2d(b).astype(np.float64)
    result: np.ndarray = np.sum(a * b, axis=1) / (
        np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    )
    return result


def test_constants(model: LocalMiniLM) -> None:
    assert model.MODEL_NAME == "sentence-transformers/all-MiniLM-L6-v2"
    assert model.DIMENSIONS == 384
    assert model.MAX_INPUT_TOKENS == 256


def test_matches_reference_within_window(
    model: LocalMiniLM, reference: list[dict[str, Any]]
) -> None:
    fitting = [it for it in reference if model.count_tokens(it["text"]) <= model.MAX_INPUT_TOKENS]
    assert len(fitting) >= 10  # includes "" and a single letter
    got = model.embed([it["text"] for it in fitting])
    expected = np.array([it["embedding"] for it in fitting], dtype=np.float32)
    cosines = _cos(got, expected)
    for item, cos in zip(fitting, cosines, strict=True):
        assert cos >= 0.99, (item["text"][:60], cos)
    # fp32 end to end: equivalent to the torch model, not merely close
    assert cosines.min() >= 0.9999, cosines


def test_long_texts_truncated_reproduce_reference_and_windowed_keeps_tail(
    model: LocalMiniLM, reference: list[dict[str, Any]]
) -> None:
    long_items = [it for it in reference if model.count_tokens(it["text"]) > model.MAX_INPUT_TOKENS]
    assert long_items, "the reference file should contain texts beyond the 256-token window"
    texts = [it["text"] for it in long_items]
    expected = np.array([it["embedding"] for it in long_items], dtype=np.float32)

    truncated = model.embed(texts, truncate=True)
    assert np.all(_cos(truncated, expected) >= 0.99), _cos(truncated, expected)

    windowed = model.embed(texts)
    assert np.all(_cos(windowed, truncated) < 0.999), "the tail beyond 254 word-pieces was ignored"


def test_windows_combine_as_token_weighted_mean(model: LocalMiniLM) -> None:
    vocab = model._tokenizer.get_vocab()
    words = sorted(w for w in vocab if w.isascii() and w.isalpha() and len(w) >= 4)[:600]
    text = " ".join(words)  # one word-piece per word: 600 tokens -> windows 254, 254, 92
    ids = model._tokenizer.encode(text, add_special_tokens=False).ids
    assert len(ids) == 600
    windows = [ids[0:254], ids[254:508], ids[508:600]]
    means = model._pooled(windows)
    combined = sum(m * (len(w) + 2) for m, w in zip(means, windows, strict=True))
    expected = combined / np.linalg.norm(combined)
    assert _cos(model.embed([text]), expected)[0] > 0.99999
    assert model.count_tokens(text) == 602


def test_truncate_is_a_no_op_for_short_texts(model: LocalMiniLM) -> None:
    texts = ["short text", "another one, a bit longer than the first"]
    np.testing.assert_allclose(model.embed(texts, truncate=True), model.embed(texts), atol=1e-6)


def test_empty_input(model: LocalMiniLM) -> None:
    result = model.embed([])
    assert result.shape == (0, 384)
    assert result.dtype == np.float32


def test_single_str_is_rejected(model: LocalMiniLM) -> None:
    with pytest.raises(TypeError):
        model.embed("not a list")


def test_shape_dtype_and_unit_norm(model: LocalMiniLM) -> None:
    result = model.embed(["one", "two words", ""])
    assert result.shape == (3, 384)
    assert result.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(result, axis=1), 1.0, atol=1e-5)


def test_batch_order_preserved(model: LocalMiniLM) -> None:
    # Lengths deliberately unsorted: batching sorts windows by length internally.
    texts = [
        "a",
        "The invoice for March is attached to this message, please review it. " * 8,
        "Kafka consumers commit offsets.",
        "Zażółć gęślą jaźń.",
        "word " * 300,
    ]
    together = model.embed(texts)
    reversed_ = model.embed(texts[::-1])[::-1]
    for row, text in enumerate(texts):
        alone = model.embed([text])
        assert _cos(together[row], alone)[0] > 0.9999
        assert _cos(reversed_[row], alone)[0] > 0.9999
    # and distinct texts give distinct vectors, so the check above is meaningful
    assert _cos(together[0], together[2])[0] < 0.99


def test_small_batches_match_one_batch(cache_dir: Path, model: LocalMiniLM) -> None:
    texts = [f"sentence number {i} about topic {i % 3}" for i in range(11)]
    small = LocalMiniLM(cache_dir=cache_dir, threads=1, batch_tokens=30)  # ~3 texts a call
    assert np.all(_cos(small.embed(texts), model.embed(texts)) > 0.9999)


def _chunk_like(model: LocalMiniLM, count: int) -> list[str]:
    """Texts like a 2,500-character knowledge-base chunk: one full window and a short tail."""
    vocab = model._tokenizer.get_vocab()
    words = sorted(w for w in vocab if w.isascii() and w.isalpha() and len(w) >= 4)
    return [" ".join(words[i * 300 : i * 300 + 254 + 10 + 7 * i]) for i in range(count)]


def test_batches_cut_by_length_and_token_budget(model: LocalMiniLM) -> None:
    widths = [40, 256, 38, 256, 255, 30, 240] + [256] * 40
    batches = model._batches(widths)
    assert sorted(i for b in batches for i in b) == list(range(len(widths)))
    for batch in batches:
        width = widths[batch[0]]
        assert width == max(widths[i] for i in batch)  # padded to its own longest
        assert len(batch) * width <= model.batch_tokens
        assert all(width - widths[i] <= 32 for i in batch), [widths[i] for i in batch]
    # the 44 long windows fill batches of 32 (8192 tokens); the three tails go together
    assert [len(b) for b in batches] == [32, 12, 3]


def test_each_call_pads_only_to_its_own_longest_window(
    model: LocalMiniLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = model._session
    shapes: list[tuple[int, int]] = []
    padded: list[int] = []

    class Spy:
        def run(self, names: list[str], feed: dict[str, np.ndarray]) -> Any:
            mask = feed["attention_mask"]
            shapes.append(mask.shape)
            padded.append(int(mask.size - mask.sum()))
            return session.run(names, feed)

    monkeypatch.setattr(model, "_session", Spy())
    texts = _chunk_like(model, 12)
    assert all(256 < model.count_tokens(t) < 350 for t in texts)  # two windows each
    model.embed(texts)
    computed = sum(rows * width for rows, width in shapes)
    # 12 full windows and 12 tails of 12-89 tokens: the tails are not padded to 256
    assert sum(padded) / computed < 0.1, shapes
    assert max(rows for rows, width in shapes if width < 100) > 1, shapes  # tails share calls


def test_batched_vectors_equal_the_unbatched_ones(cache_dir: Path, model: LocalMiniLM) -> None:
    texts = [
        *_chunk_like(model, 9),
        "a",
        "Kafka consumers commit offsets.",
        "The invoice for March is attached to this message, please review it. " * 20,
        "",
        "word " * 700,
    ]
    unbatched = LocalMiniLM(cache_dir=cache_dir, threads=2, batch_tokens=1)  # a call per window
    one_by_one = np.vstack([unbatched.embed([t]) for t in texts])
    together = model.embed(texts)
    assert np.max(np.abs(together - one_by_one)) <= 1e-6


def test_deterministic(model: LocalMiniLM) -> None:
    texts = ["Sales increased 12% year over year.", "The cat sat on the mat."]
    first = model.embed(texts)
    second = model.embed(texts)
    np.testing.assert_allclose(first, second, rtol=0, atol=1e-6)


def test_padding_does_not_change_vector(model: LocalMiniLM) -> None:
    text = "To reset your password, open Settings and choose Security."
    alone = model.embed([text])[0]
    longer = [
        "Retrieval augmented generation combines a search step with a language model. " * 10,
        "row 1\tvalue 1\nrow 2\tvalue 4\n" * 12,
    ]
    in_batch = model.embed([longer[0], text, longer[1]])[1]
    assert model.count_tokens(longer[0]) > 2 * model.count_tokens(text)
    assert _cos(alone, in_batch)[0] > 0.9999


def test_count_tokens(model: LocalMiniLM) -> None:
    assert model.count_tokens("") == 2
    assert model.count_tokens("hello world") == 4
    # the tokenizer file's default 128-token truncation must not apply
    assert model.count_tokens("word " * 1000) == 1002


def test_thread_safe(model: LocalMiniLM) -> None:
    texts = [[f"thread {t} text {i}" for i in range(t + 1)] for t in range(6)]
    serial = [model.embed(batch) for batch in texts]
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(model.embed, texts))
    for a, b in zip(serial, parallel, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_graph_cache_reused(
    cache_dir: Path, model: LocalMiniLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = sorted(cache_dir.iterdir())
    assert files == [model.graph_path], files  # no temp files left behind
    before = model.graph_path.stat()

    def no_rebuild(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("graph rebuilt although cached")

    monkeypatch.setattr(local_model, "build_plain_graph", no_rebuild)
    again = LocalMiniLM(cache_dir=cache_dir, threads=1)
    assert again.graph_path == model.graph_path
    after = again.graph_path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    np.testing.assert_allclose(again.embed(["cached"]), model.embed(["cached"]), atol=1e-5)


def test_cache_dir_defaults_to_docproc_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCPROC_HOME", str(tmp_path))
    assert local_model.default_cache_dir() == tmp_path / "models"
    monkeypatch.delenv("DOCPROC_HOME")
    assert local_model.default_cache_dir() == Path.home() / ".cache" / "docproc" / "models"


def test_concurrent_builds_are_atomic(tmp_path: Path) -> None:
    # Two builders racing on the same target (as two processes would): each writes a
    # temp file and renames it; the result is one complete, loadable graph.
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=2) as pool:
        paths = list(pool.map(_build_plain, [tmp_path, tmp_path]))
    assert paths[0] == paths[1]
    assert sorted(tmp_path.iterdir()) == [paths[0]]
    embedder = LocalMiniLM(cache_dir=tmp_path, threads=1, graph="plain")
    assert embedder.embed(["ok"]).shape == (1, 384)


def _build_plain(cache: Path) -> Path:
    return local_model.ensure_graph(cache, "plain", rebuild=True)


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")
@pytest.mark.parametrize("service", ["embedder", "upload"])
def test_the_fused_graphs_imports_are_in_the_services_locked_closure(service: str) -> None:
    """The optimizer that fuses the graph imports sympy, which the onnxruntime wheel does not
    declare: only the dev tools brought it in, so the images (the service's closure alone)
    could not build the graph and every local embedding failed (found by make deploy-smoke)."""
    root = Path(__file__).resolve().parents[4]
    exported = subprocess.run(
        ["uv", "export", "--package", f"docproc-{service}", "--no-dev", "--frozen"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    names = {line.split("==")[0] for line in exported.splitlines() if "==" in line}
    assert {"onnxruntime", "sympy"} <= names
