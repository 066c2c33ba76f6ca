"""Tiny models exported in the test itself: the plumbing proven without shipping weights.

``tiny_encoder(dir)`` writes a mounted embedding model (``docproc_common.embedding.mounted``):
a one-layer BERT-shaped encoder as ``model.onnx`` (onnx helper API, random weights from a
seed), a WordPiece ``tokenizer.json`` (``tokenizers``: lower-casing BERT normalizer, every
letter and digit as a piece, so any text tokenizes) and ``docproc-model.json``. Its output
is ``last_hidden_state`` ``[batch, sequence, hidden]``: self-attention with the padding
masked, so [CLS] differs from the mean and padding never changes a vector.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import onnx
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer, normalizers, pre_tokenizers
from tokenizers.models import WordPiece

__all__ = ["TINY_WORDS", "tiny_encoder"]

#: Whole words in the tiny vocabulary (anything else is split into letters).
TINY_WORDS = (
    "the a an of and or to in on is are was for with by from that this it as at be "
    "query passage search document text model cat cats dog dogs bird fish tree sun moon "
    "red green blue quick brown fox jumps over lazy incident id note represent sentence "
    "relevant passages searching statins dementia bread bake water fire"
).split()
_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _vocab() -> dict[str, int]:
    chars = string.ascii_lowercase + string.digits
    pieces = [*_SPECIAL, *chars, *(f"##{c}" for c in chars), *string.punctuation, *TINY_WORDS]
    return {piece: index for index, piece in enumerate(dict.fromkeys(pieces))}


def _tokenizer(vocab: dict[str, int]) -> Tokenizer:
    tokenizer = Tokenizer(WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tokenizer


def _graph(vocab_size: int, hidden: int, positions: int, seed: int) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def const(name: str, value: npt.NDArray[Any]) -> str:
        inits.append(numpy_helper.from_array(value, name))
        return name

    def op(kind: str, *inputs: str, **attrs: Any) -> str:
        out = f"{kind}_{len(nodes)}"
        nodes.append(helper.make_node(kind, list(inputs), [out], **attrs))
        return out

    def weights(*shape: int) -> npt.NDArray[np.float32]:
        return rng.normal(0, 0.5, size=shape).astype(np.float32)

    i64 = np.int64
    word = op("Gather", const("word", weights(vocab_size, hidden)), "input_ids")
    kind = op("Gather", const("type", weights(2, hidden)), "token_type_ids")
    seq = op("Gather", op("Shape", "input_ids"), const("one", np.array(1, dtype=i64)), axis=0)
    seq = op("Unsqueeze", seq, const("ax0", np.array([0], dtype=i64)))
    pos_ids = op(
        "Slice",
        const("pos_ids", np.arange(positions, dtype=i64)[None, :]),
        const("zero", np.array([0], dtype=i64)),
        seq,
        const("ax1", np.array([1], dtype=i64)),
    )
    pos = op("Gather", const("pos", weights(positions, hidden)), pos_ids)
    x = op(
        "LayerNormalization",
        op("Add", op("Add", word, kind), pos),
        const("ln_w", np.ones(hidden, dtype=np.float32)),
        const("ln_b", np.zeros(hidden, dtype=np.float32)),
        axis=-1,
    )
    # one single-head self-attention layer with a residual, padding masked out
    q = op("MatMul", x, const("wq", weights(hidden, hidden)))
    k = op("MatMul", x, const("wk", weights(hidden, hidden)))
    v = op("MatMul", x, const("wv", weights(hidden, hidden)))
    scores = op(
        "Div",
        op("MatMul", q, op("Transpose", k, perm=[0, 2, 1])),
        const("scale", np.array(np.sqrt(hidden), dtype=np.float32)),
    )
    mask = op(
        "Cast",
        op("Unsqueeze", "attention_mask", const("ax1b", np.array([1], dtype=i64))),
        to=TensorProto.FLOAT,
    )
    additive = op(
        "Mul",
        op("Sub", const("onef", np.array(1.0, dtype=np.float32)), mask),
        const("lowest", np.array(np.finfo(np.float32).min, dtype=np.float32)),
    )
    probs = op("Softmax", op("Add", scores, additive), axis=-1)
    attended = op("MatMul", probs, v)
    nodes.append(helper.make_node("Add", [x, attended], ["last_hidden_state"]))

    inputs = [
        helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", hidden]
    )
    graph = helper.make_graph(nodes, "tiny_encoder", inputs, [output], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def tiny_encoder(
    directory: Path,
    *,
    pooling: Literal["mean", "cls"] = "mean",
    normalize: bool = True,
    query_prefix: str = "",
    passage_prefix: str = "",
    window: int = 32,
    name: str = "docproc-test/tiny-encoder",
    hidden: int = 16,
    seed: int = 0,
    card: dict[str, Any] | None = None,
) -> Path:
    """Write a tiny mounted embedding model into ``directory`` (created); returns it.

    ``card`` replaces the written model card's fields (to write a broken one).
    """
    directory.mkdir(parents=True, exist_ok=True)
    vocab = _vocab()
    _tokenizer(vocab).save(str(directory / "tokenizer.json"))
    onnx.save(_graph(len(vocab), hidden, window, seed), str(directory / "model.onnx"))
    fields: dict[str, Any] = {
        "name": name,
        "dimensions": hidden,
        "pooling": pooling,
        "normalize": normalize,
        "query_prefix": query_prefix,
        "passage_prefix": passage_prefix,
        "window": window,
    }
    (directory / "docproc-model.json").write_text(json.dumps({**fields, **(card or {})}))
    return directory
