"""Tiny rerankers written in the test itself, so the reranking plumbing is proven without weights.

``tiny_cross_encoder(dir)`` writes a cross-encoder directory in the shape the deployment
mounts (``docproc_common.rerank.cross_encoder``): ``model.onnx``, ``tokenizer.json`` and
``card.json``. Its tokenizer is word-level (lower-cased, split on whitespace and
punctuation) with BERT's specials and pair template; its graph, built with the ``onnx``
helper API as the built-in model's graph is, scores a pair by how many (query word,
passage word) pairs are the same word, specials and padding excluded, plus 0.01 x the
passage's words: a real function of both texts, so the order it gives is known in advance
(``overlap``) and unlike the embedding model's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")
#: Each passage word adds this to the logit, so that of two passages with the same overlap
#: the longer ranks first (the tie is broken by the model, not by the input order).
LENGTH_WEIGHT = 0.01
_WORD = re.compile(r"\w+")


def words_of(text: str) -> list[str]:
    """The tokenizer's words of ``text`` (lower-cased, punctuation dropped)."""
    return _WORD.findall(text.lower())


def overlap(query: str, passage: str, vocabulary: Iterable[str]) -> float:
    """The tiny cross-encoder's logit for the pair: what a test expects it to rank by."""
    known = {w for v in vocabulary for w in words_of(v)}
    q = [w for w in words_of(query) if w in known]
    p = [w for w in words_of(passage) if w in known]
    return float(sum(q.count(w) for w in p)) + LENGTH_WEIGHT * len(p)


def tiny_cross_encoder(
    directory: Path, vocabulary: Iterable[str] = (), *, name: str = "tiny"
) -> Path:
    """Write a tiny cross-encoder into ``directory`` (created) and return it.

    ``vocabulary``: the words it knows (others are ``[UNK]``, which score nothing).
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    words = sorted({w for v in vocabulary for w in words_of(v)})
    vocab = {t: i for i, t in enumerate([*SPECIALS, *words])}
    size = len(vocab)

    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tokenizer.save(str(directory / "tokenizer.json"))

    # one-hot rows for words, zero rows for the specials (they match nothing)
    table = np.eye(size, dtype=np.float32)
    table[: len(SPECIALS)] = 0.0
    special = np.zeros((size, 1), dtype=np.float32)
    special[: len(SPECIALS)] = 1.0
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["onehot"]),  # [b, s, v]
        helper.make_node("Gather", ["special", "input_ids"], ["is_special"]),  # [b, s, 1]
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["token_type_ids"], ["type_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask_f", "axis2"], ["mask3"]),
        helper.make_node("Unsqueeze", ["type_f", "axis2"], ["type3"]),
        helper.make_node("Mul", ["onehot", "mask3"], ["live"]),
        helper.make_node("Mul", ["live", "type3"], ["passage"]),  # segment B
        helper.make_node("Sub", ["live", "passage"], ["query"]),  # segment A
        helper.make_node("ReduceSum", ["query", "axis1"], ["q"], keepdims=0),  # [b, v]
        helper.make_node("ReduceSum", ["passage", "axis1"], ["p"], keepdims=0),
        helper.make_node("Mul", ["q", "p"], ["qp"]),
        helper.make_node("ReduceSum", ["qp", "axis1"], ["matches"], keepdims=1),  # [b, 1]
        helper.make_node("ReduceSum", ["p", "axis1"], ["length"], keepdims=1),
        helper.make_node("Mul", ["length", "length_weight"], ["bonus"]),
        helper.make_node("Add", ["matches", "bonus"], ["logits"]),
    ]
    initializers = [
        numpy_helper.from_array(table, "table"),
        numpy_helper.from_array(special, "special"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        numpy_helper.from_array(np.array(LENGTH_WEIGHT, dtype=np.float32), "length_weight"),
    ]
    inputs = [
        helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    graph = helper.make_graph(nodes, "tiny_cross_encoder", inputs, [output], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(directory / "model.onnx"))
    (directory / "card.json").write_text(json.dumps({"name": name, "window": 128}))
    return directory
