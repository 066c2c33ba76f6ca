"""Mounted embedding models (docproc_common.embedding.mounted) on a tiny encoder exported here.

The references run the exported graph with onnxruntime directly, one window at a time,
and pool by hand: an independent path to what ``MountedModel`` computes.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
import pytest
from docproc_common.embedding.catalog import load_catalog, model_spec
from docproc_common.embedding.client import (
    CredentialSource,
    EmbeddingClients,
    EmbeddingNotConfiguredError,
    EmbeddingTarget,
    resolve_embedding,
)
from docproc_common.embedding.mounted import ModelCardError, MountedModel, mounted_models
from docproc_common.settings import EmbedderSettings, Settings
from docproc_testing.tiny_models import tiny_encoder
from sqlalchemy.ext.asyncio import AsyncSession
from tokenizers import Tokenizer

TEXT = "The quick brown fox jumps over the lazy dog"
NAME = "docproc-test/tiny-encoder"


def load(root: Path, name: str = NAME) -> MountedModel:
    mounted_models.cache_clear()
    return MountedModel(mounted_models(root)[name], threads=1)


def hidden_states(directory: Path, pieces: list[int]) -> npt.NDArray[np.float32]:
    """The graph's token vectors for one window ``[CLS] pieces [SEP]``."""
    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    ids = [tokenizer.token_to_id("[CLS]"), *pieces, tokenizer.token_to_id("[SEP]")]
    session = ort.InferenceSession(str(directory / "model.onnx"))
    batch = np.array([ids], dtype=np.int64)
    feeds = {
        "input_ids": batch,
        "attention_mask": np.ones_like(batch),
        "token_type_ids": np.zeros_like(batch),
    }
    (out,) = session.run(["last_hidden_state"], feeds)
    result: npt.NDArray[np.float32] = out[0]
    return result


def pieces(directory: Path, text: str) -> list[int]:
    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    ids: list[int] = tokenizer.encode(text, add_special_tokens=False).ids
    return ids


def unit(v: npt.NDArray[Any]) -> npt.NDArray[Any]:
    out: npt.NDArray[Any] = v / np.linalg.norm(v)
    return out


class TestPooling:
    def test_mean_pools_every_token_and_cls_takes_the_first(self, tmp_path: Path) -> None:
        mean_dir = tiny_encoder(tmp_path / "m" / "a", pooling="mean", name="mean")
        tiny_encoder(tmp_path / "c" / "a", pooling="cls", name="cls")
        states = hidden_states(mean_dir, pieces(mean_dir, TEXT))
        mean = load(tmp_path / "m", "mean").embed([TEXT])[0]
        cls = load(tmp_path / "c", "cls").embed([TEXT])[0]
        np.testing.assert_allclose(mean, unit(states.mean(axis=0)), atol=1e-5)
        np.testing.assert_allclose(cls, unit(states[0]), atol=1e-5)
        assert float(mean @ cls) < 0.99  # the two poolings differ on this graph

    def test_padding_in_a_batch_changes_no_vector(self, tmp_path: Path) -> None:
        tiny_encoder(tmp_path / "a", pooling="mean")
        model = load(tmp_path)
        alone = model.embed(["cat"])[0]
        batched = model.embed(["cat", TEXT])[0]  # "cat" padded to the longer text's width
        np.testing.assert_allclose(alone, batched, atol=1e-5)


class TestNormalisation:
    @pytest.mark.parametrize("pooling", ["mean", "cls"])
    def test_normalize_false_keeps_the_pooled_vector(self, tmp_path: Path, pooling: Any) -> None:
        directory = tiny_encoder(tmp_path / "a", pooling=pooling, normalize=False)
        states = hidden_states(directory, pieces(directory, TEXT))
        raw = states.mean(axis=0) if pooling == "mean" else states[0]
        got = load(tmp_path).embed([TEXT])[0]
        np.testing.assert_allclose(got, raw, rtol=1e-5, atol=1e-5)
        assert abs(float(np.linalg.norm(got)) - 1.0) > 1e-3

    def test_normalize_true_gives_unit_vectors(self, tmp_path: Path) -> None:
        tiny_encoder(tmp_path / "a", normalize=True)
        norms = np.linalg.norm(load(tmp_path).embed([TEXT, "cat", "x"]), axis=1)
        np.testing.assert_allclose(norms, 1.0, atol=1e-5)


class TestPrefixes:
    def test_queries_and_passages_get_their_own_prefix(self, tmp_path: Path) -> None:
        tiny_encoder(
            tmp_path / "p" / "a", query_prefix="search query: ", passage_prefix="passage: "
        )
        tiny_encoder(tmp_path / "n" / "a")  # the same weights (seed), no prefixes
        prefixed, plain = load(tmp_path / "p"), load(tmp_path / "n")
        query = prefixed.embed([TEXT], kind="query")[0]
        passage = prefixed.embed([TEXT], kind="passage")[0]
        np.testing.assert_allclose(query, plain.embed(["search query: " + TEXT])[0], atol=1e-5)
        np.testing.assert_allclose(passage, plain.embed(["passage: " + TEXT])[0], atol=1e-5)
        assert float(query @ passage) < 0.999
        assert prefixed.count_tokens(TEXT, "query") == plain.count_tokens("search query: " + TEXT)

    def test_a_chunk_is_a_passage_by_default(self, tmp_path: Path) -> None:
        tiny_encoder(tmp_path / "a", query_prefix="query: ", passage_prefix="passage: ")
        model = load(tmp_path)
        np.testing.assert_array_equal(model.embed([TEXT]), model.embed([TEXT], kind="passage"))


class TestWindows:
    def test_a_long_text_is_every_window_prefixed_and_pooled(self, tmp_path: Path) -> None:
        directory = tiny_encoder(tmp_path / "a", window=16, passage_prefix="passage: ")
        model = load(tmp_path)
        text = " ".join([TEXT] * 4)  # 40 word-pieces
        ids, prefix = pieces(directory, text), pieces(directory, "passage: ")
        size = 16 - 2 - len(prefix)
        assert model.window_tokens("passage") == size and len(ids) > 2 * size
        total = np.zeros(16)
        for start in range(0, len(ids), size):
            states = hidden_states(directory, prefix + ids[start : start + size])
            total += states.sum(axis=0)  # mean x its token count
        np.testing.assert_allclose(model.embed([text])[0], unit(total), atol=1e-5)

    def test_truncate_keeps_only_the_first_window(self, tmp_path: Path) -> None:
        directory = tiny_encoder(tmp_path / "a", window=16, pooling="cls")
        text = " ".join([TEXT] * 4)
        first = hidden_states(directory, pieces(directory, text)[:14])[0]
        np.testing.assert_allclose(
            load(tmp_path).embed([text], truncate=True)[0], unit(first), atol=1e-5
        )


class TestCard:
    @pytest.mark.parametrize(
        ("change", "field"),
        [
            ({"pooling": "max"}, "pooling"),
            ({"normalize": "yes"}, "normalize"),
            ({"window": "512"}, "window"),
            ({"window": 2}, "window"),
            ({"dimensions": 0}, "dimensions"),
            ({"poolling": "mean"}, "poolling"),
            ({"name": "two words"}, "name"),
        ],
    )
    def test_a_bad_field_is_named(self, tmp_path: Path, change: dict[str, Any], field: str) -> None:
        tiny_encoder(tmp_path / "a", card=change)
        mounted_models.cache_clear()
        with pytest.raises(ModelCardError, match=f"docproc-model.json: field '{field}'"):
            mounted_models(tmp_path)

    def test_a_missing_field_is_named(self, tmp_path: Path) -> None:
        card = tiny_encoder(tmp_path / "a") / "docproc-model.json"
        raw = json.loads(card.read_text())
        del raw["query_prefix"]
        card.write_text(json.dumps(raw))
        mounted_models.cache_clear()
        with pytest.raises(ModelCardError, match="field 'query_prefix': Field required"):
            mounted_models(tmp_path)

    @pytest.mark.parametrize("missing", ["model.onnx", "tokenizer.json", "docproc-model.json"])
    def test_a_missing_file_is_named(self, tmp_path: Path, missing: str) -> None:
        (tiny_encoder(tmp_path / "a") / missing).unlink()
        mounted_models.cache_clear()
        with pytest.raises(ModelCardError, match=f"{tmp_path / 'a'}: {missing} is missing"):
            mounted_models(tmp_path)

    def test_a_missing_directory_is_named(self, tmp_path: Path) -> None:
        mounted_models.cache_clear()
        with pytest.raises(ModelCardError, match="MODELS_DIR .*/absent is not a directory"):
            mounted_models(tmp_path / "absent")

    def test_two_models_of_one_name_are_refused(self, tmp_path: Path) -> None:
        tiny_encoder(tmp_path / "a")
        tiny_encoder(tmp_path / "b")
        mounted_models.cache_clear()
        with pytest.raises(ModelCardError, match="field 'name': .* is also the model of"):
            mounted_models(tmp_path)

    def test_dimensions_must_match_the_graph(self, tmp_path: Path) -> None:
        tiny_encoder(tmp_path / "a", card={"dimensions": 17})
        with pytest.raises(ModelCardError, match="field 'dimensions': 17, but .* is 16 wide"):
            load(tmp_path)

    def test_an_unknown_output_is_named(self, tmp_path: Path) -> None:
        tiny_encoder(tmp_path / "a", card={"output": "pooler_output"})
        with pytest.raises(ModelCardError, match="field 'output': the graph has no output"):
            load(tmp_path)


class TestCatalog:
    def test_mounted_models_join_the_local_provider_at_their_width(self, tmp_path: Path) -> None:
        tiny_encoder(tmp_path / "tiny", window=64, card={"space": "tiny-space"})
        mounted_models.cache_clear()
        load_catalog.cache_clear()
        cat = load_catalog(None, tmp_path)
        spec = model_spec("local", NAME, cat)
        assert (spec.dimensions, spec.max_input_tokens, spec.space) == (16, 64, "tiny-space")
        assert "sentence-transformers/all-MiniLM-L6-v2" in cat["local"].models


class TestClients:
    """What the embedder (chunks) and upload (queries) get for a collection on a mounted model."""

    @staticmethod
    def settings(root: Path) -> Settings:
        return Settings(embedder=EmbedderSettings(models_dir=root, threads=1))

    @staticmethod
    def target(model: str = NAME, dimensions: int = 16) -> EmbeddingTarget:
        return EmbeddingTarget("c", None, "local", model, dimensions)

    async def test_queries_and_chunks_embed_with_their_prefixes(self, tmp_path: Path) -> None:
        tiny_encoder(tmp_path / "a", query_prefix="query: ", passage_prefix="passage: ")
        mounted_models.cache_clear()
        settings = self.settings(tmp_path)
        clients = EmbeddingClients(settings)
        try:
            resolved = await resolve_embedding(cast(AsyncSession, None), self.target(), settings)
            client = await clients.open(resolved)
            model = load(tmp_path)
            # issued together: a query and a chunk are never fused into one model call
            query, chunk = await asyncio.gather(client.embed([TEXT], "query"), client.embed([TEXT]))
            np.testing.assert_allclose(query, model.embed([TEXT], kind="query"), atol=1e-6)
            np.testing.assert_allclose(chunk, model.embed([TEXT], kind="passage"), atol=1e-6)
            assert client.dimensions == 16
        finally:
            await clients.aclose()

    async def test_a_model_no_longer_mounted_refuses_and_never_falls_back(
        self, tmp_path: Path
    ) -> None:
        tiny_encoder(tmp_path / "a")
        mounted_models.cache_clear()
        settings = self.settings(tmp_path)
        clients = EmbeddingClients(settings)
        try:
            target = self.target("BAAI/gone", 384)  # MiniLM's width: no silent fallback
            resolved = await resolve_embedding(cast(AsyncSession, None), target, settings)
            assert resolved.source is CredentialSource.MODEL_NOT_MOUNTED
            client = await clients.open(resolved)
            with pytest.raises(EmbeddingNotConfiguredError, match="does not mount its model"):
                await client.embed(["x"], "query")
        finally:
            await clients.aclose()

    def test_a_bad_card_stops_the_process_at_start_up(self, tmp_path: Path) -> None:
        tiny_encoder(tmp_path / "a", card={"pooling": "max"})
        mounted_models.cache_clear()
        load_catalog.cache_clear()
        with pytest.raises(ModelCardError, match="field 'pooling'"):
            EmbeddingClients(self.settings(tmp_path))
