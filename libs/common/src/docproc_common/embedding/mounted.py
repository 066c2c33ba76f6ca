"""Embedding models a deployment mounts: any BERT-family ONNX encoder, on provider ``local``.

``EMBEDDER__MODELS_DIR`` names a directory (the chart mounts it, ``embedder.models``
in its values) whose every sub-directory is one model::

    <models_dir>/bge-small-en-v1.5/
        model.onnx          # inputs input_ids, attention_mask[, token_type_ids];
                            # output [batch, sequence, hidden] (last_hidden_state)
        tokenizer.json      # a Hugging Face ``tokenizers`` file with [CLS], [SEP], [PAD]
        docproc-model.json  # the model card (below)

The card, read strictly (every field required unless noted, no unknown field, no
coercion)::

    {"name": "BAAI/bge-small-en-v1.5",   # what a collection names as embedding_model
     "dimensions": 384,                   # the width of the output's last axis
     "pooling": "cls",                    # "mean" (over the attention mask) or "cls"
     "normalize": true,                   # L2-normalize the pooled vector
     "query_prefix": "Represent this sentence for searching relevant passages: ",
     "passage_prefix": "",                # put before every window of a chunk
     "window": 512,                       # tokens per model call, [CLS]/[SEP] included
     "space": "BAAI/bge-small-en-v1.5",   # optional: the model's identity (default: name)
     "output": "last_hidden_state"}       # optional: which graph output (default: that
                                          # one if present, else the first)

Queries (``POST /rag/search``) are embedded with the query prefix, chunks (the
embedder) with the passage prefix. A long text is split into windows as for the
built-in model (``local_model``), each window prefixed.

A missing directory, a sub-directory without one of the three files, a card that
does not validate, or two models of one name are a :class:`ModelCardError` when the
catalog is read, i.e. at start-up of every process that reads it (upload, embedder):
the message names the directory, the file and the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from tokenizers import Tokenizer

from docproc_common.embedding.local_model import LocalMiniLM, WindowedEncoder

__all__ = [
    "CARD_FILE",
    "ModelCard",
    "ModelCardError",
    "MountedModel",
    "MountedModelDir",
    "mounted_models",
    "read_card",
]

CARD_FILE = "docproc-model.json"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
_INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids"})
_IGNORED_DIRS = frozenset({"lost+found"})


class ModelCardError(ValueError):
    """A mounted model that cannot be used; the message names the directory and the field."""


class ModelCard(BaseModel):
    """``docproc-model.json``: how to use the encoder (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str = Field(min_length=1, max_length=200, pattern=r"^\S+$")
    dimensions: int = Field(ge=1, le=16000)
    pooling: Literal["mean", "cls"]
    normalize: bool
    query_prefix: str = Field(max_length=1000)
    passage_prefix: str = Field(max_length=1000)
    window: int = Field(ge=8, le=8192)
    space: str | None = Field(default=None, min_length=1, max_length=200)
    output: str | None = Field(default=None, min_length=1)


@dataclass(frozen=True, slots=True)
class MountedModelDir:
    """A mounted model's directory and its validated card."""

    path: Path
    card: ModelCard

    @property
    def space(self) -> str:
        return self.card.space or self.card.name


def read_card(directory: Path) -> ModelCard:
    """The card of ``directory``; a :class:`ModelCardError` naming the file and field."""
    where = directory / CARD_FILE
    for required in (CARD_FILE, MODEL_FILE, TOKENIZER_FILE):
        if not (directory / required).is_file():
            raise ModelCardError(f"mounted model {directory}: {required} is missing")
    try:
        raw = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelCardError(f"{where}: not a readable JSON file ({exc})") from None
    if not isinstance(raw, dict):
        raise ModelCardError(f"{where}: must be a JSON object")
    try:
        return ModelCard.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"field '{'.'.join(str(p) for p in e['loc']) or '(card)'}': {e['msg']}"
            for e in exc.errors()
        )
        raise ModelCardError(f"{where}: {problems}") from None


@lru_cache(maxsize=4)
def mounted_models(root: Path) -> dict[str, MountedModelDir]:
    """The models under ``root`` by card name (cached per path; see the module docstring)."""
    if not root.is_dir():
        raise ModelCardError(f"EMBEDDER__MODELS_DIR {root} is not a directory")
    models: dict[str, MountedModelDir] = {}
    for directory in sorted(root.iterdir()):
        if directory.name.startswith(".") or directory.name in _IGNORED_DIRS:
            continue
        if not directory.is_dir():
            continue
        card = read_card(directory)
        if card.name == LocalMiniLM.MODEL_NAME:
            raise ModelCardError(
                f"{directory / CARD_FILE}: field 'name': {card.name} is the built-in model"
            )
        if card.name in models:
            raise ModelCardError(
                f"{directory / CARD_FILE}: field 'name': {card.name} is also the model of "
                f"{models[card.name].path}"
            )
        models[card.name] = MountedModelDir(directory, card)
    return models


class MountedModel(WindowedEncoder):
    """A mounted encoder in-process: its ONNX graph, tokenizer and card."""

    def __init__(
        self, mounted: MountedModelDir, threads: int | None = None, batch_tokens: int = 8192
    ) -> None:
        card = mounted.card
        self.card = card
        self.directory = mounted.path
        self.model_name = card.name
        self.dimensions = card.dimensions
        self.max_input_tokens = card.window
        self.pooling = card.pooling
        self.normalize = card.normalize
        where = mounted.path / TOKENIZER_FILE
        try:
            tokenizer = Tokenizer.from_file(str(where))
        except Exception as exc:  # the tokenizers library raises its own Exception
            raise ModelCardError(f"{where}: not a tokenizer file ({exc})") from None
        try:
            super().__init__(
                tokenizer,
                threads=threads,
                batch_tokens=batch_tokens,
                prefixes={"query": card.query_prefix, "passage": card.passage_prefix},
            )
        except ValueError as exc:
            raise ModelCardError(f"{where}: {exc}") from None
        for kind in ("query", "passage"):
            if self.window_tokens(kind) < 1:
                raise ModelCardError(
                    f"{mounted.path / CARD_FILE}: field '{kind}_prefix': leaves no room in a "
                    f"window of {card.window}"
                )
        where = mounted.path / MODEL_FILE
        try:
            self._session = self._open_session(where)
        except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph
            raise ModelCardError(f"{where}: onnxruntime cannot load it ({exc})") from None
        self._inputs = [i.name for i in self._session.get_inputs()]
        unknown = sorted(set(self._inputs) - _INPUTS)
        if unknown or not {"input_ids", "attention_mask"} <= set(self._inputs):
            raise ModelCardError(
                f"{where}: inputs {self._inputs} are not a BERT encoder's "
                "(input_ids, attention_mask[, token_type_ids])"
            )
        outputs = {o.name: o for o in self._session.get_outputs()}
        name = card.output or ("last_hidden_state" if "last_hidden_state" in outputs else None)
        name = name or next(iter(outputs))
        if name not in outputs:
            raise ModelCardError(
                f"{mounted.path / CARD_FILE}: field 'output': the graph has no output {name!r} "
                f"(it has {sorted(outputs)})"
            )
        shape = outputs[name].shape
        if len(shape) != 3:
            raise ModelCardError(
                f"{where}: output {name!r} has shape {shape}; a [batch, sequence, hidden] "
                "output is pooled as the card says"
            )
        if isinstance(shape[2], int) and shape[2] != card.dimensions:
            raise ModelCardError(
                f"{mounted.path / CARD_FILE}: field 'dimensions': {card.dimensions}, but the "
                f"graph's output {name!r} is {shape[2]} wide"
            )
        self._output = name

    def _forward(
        self, input_ids: npt.NDArray[np.int64], attention: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.floating[Any]]:
        feeds = {"input_ids": input_ids, "attention_mask": attention}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        (hidden,) = self._session.run([self._output], feeds)
        if hidden.shape[-1] != self.dimensions:
            raise ModelCardError(
                f"{self.directory / CARD_FILE}: field 'dimensions': {self.dimensions}, but the "
                f"model returned vectors of {hidden.shape[-1]}"
            )
        if self.pooling == "cls":
            out: npt.NDArray[np.floating[Any]] = hidden[:, 0, :]
            return out
        mask = attention[:, :, None].astype(hidden.dtype)
        mean: npt.NDArray[np.floating[Any]] = (hidden * mask).sum(axis=1) / np.maximum(
            mask.sum(axis=1), 1e-9
        )
        return mean
