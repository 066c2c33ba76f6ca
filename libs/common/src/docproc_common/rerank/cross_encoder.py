"""A cross-encoder read from a directory the deployment mounts (``EMBEDDER__RERANK_MODEL_DIR``).

The directory holds ``model.onnx`` (a BERT-family sequence classifier exported to ONNX:
inputs ``input_ids``, ``attention_mask`` and, when the graph declares it,
``token_type_ids``; its first output the relevance logit, ``[batch]``, ``[batch, 1]`` or
``[batch, labels]`` whose last column is "relevant"), ``tokenizer.json`` (a ``tokenizers``
file whose post-processor builds the pair ``[CLS] query [SEP] passage [SEP]``), and
optionally ``card.json``: ``{"name": ..., "window": 512}`` (the name the model answers to,
and the word-pieces one pair may take; 512 unless said). Nothing is downloaded: a
directory without the two files refuses to load (``CrossEncoderMissing``).

A pair longer than the window is cut passage first (``longest_first``), as
sentence-transformers' ``CrossEncoder`` cuts it. The score of a pair is the logit's
sigmoid, in (0, 1): the order is the logit's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from tokenizers import Tokenizer

#: Word-pieces one (query, passage) pair may take unless ``card.json`` says otherwise.
DEFAULT_WINDOW = 512
#: Pairs per model call.
BATCH = 16


class CrossEncoderMissing(RuntimeError):
    """The mounted directory lacks ``model.onnx`` or ``tokenizer.json``, or cannot be read."""


class CrossEncoder:
    """Scores (query, passage) pairs with the mounted model; thread-safe (one ORT session)."""

    def __init__(self, directory: Path, threads: int | None = None) -> None:
        directory = Path(directory)
        model, tokenizer_file = directory / "model.onnx", directory / "tokenizer.json"
        if not model.is_file() or not tokenizer_file.is_file():
            raise CrossEncoderMissing(
                f"{directory} holds no cross-encoder (model.onnx and tokenizer.json)"
            )
        card_file = directory / "card.json"
        card: dict[str, Any] = json.loads(card_file.read_text()) if card_file.is_file() else {}
        self.name = str(card.get("name") or directory.name)
        self.window = int(card.get("window") or DEFAULT_WINDOW)
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.enable_truncation(self.window, strategy="longest_first")
        pad = tokenizer.token_to_id("[PAD]")
        tokenizer.enable_padding(pad_id=pad if pad is not None else 0)
        self._tokenizer = tokenizer
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or min(4, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        try:
            self._session = ort.InferenceSession(
                str(model), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own classes for a bad file
            raise CrossEncoderMissing(f"{model} could not be loaded: {exc}") from exc
        self._inputs = {i.name for i in self._session.get_inputs()}

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float64]:
        """Each passage's relevance to ``query``, in (0, 1), in the passages' order."""
        out = np.zeros(len(passages), dtype=np.float64)
        for begin in range(0, len(passages), BATCH):
            pairs = [(query, p) for p in passages[begin : begin + BATCH]]
            encodings = self._tokenizer.encode_batch(pairs)
            feed = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            logits = np.asarray(
                self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0],
                dtype=np.float64,
            )
            if logits.ndim == 2:
                logits = logits[:, -1]
            out[begin : begin + len(pairs)] = 1.0 / (1.0 + np.exp(-logits))
        return out
