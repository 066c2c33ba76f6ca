"""Static int8 (QDQ) all-MiniLM-L6-v2 against fp32: accuracy on a retrieval check set, and speed.

The graph is the plain fp32 graph the local provider writes (``ensure_graph``),
quantized with onnxruntime's ``quantize_static``: QDQ format, per-channel int8
weights, uint8 activations calibrated (MinMax, or --method percentile/entropy) on
windows of real text, for the MatMuls of the linear layers (the attention's
activation products stay fp32). ``--keep-fp32`` keeps the first and last encoder
layers in fp32 too.

The check set is built from real documents, this repository's own docs
(``docs/*.md``, ``README.md``): every file is split with docproc's recursive
splitter at the default chunk size; each Markdown section's heading is a query
whose relevant chunks are the section's chunks (headings are not in the chunk
text), and the middle sentence of every fourth chunk is a query whose relevant
chunk is its own. Calibration uses the other chunks' full windows (never a query's
chunk). Reported: recall@10 of each model, the ratio, the minimum and mean cosine
between int8 and fp32 chunk vectors, and chunks/s side by side (int8, the plain
fp32 graph it was quantized from, and the fused fp32 graph the provider uses).

The ship rule (issue #16): recall@10 >= 0.99 of fp32's and min cosine >= 0.995.

    uv run python bench/quantize.py [--method minmax|percentile|entropy] [--keep-fp32]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnx
from docproc_common.embedding.local_model import LocalMiniLM, ensure_graph
from docproc_common.splitters import split_text
from onnxruntime.quantization import (
    CalibrationDataReader,
    CalibrationMethod,
    QuantFormat,
    QuantType,
    quantize_static,
)

ROOT = Path(__file__).resolve().parents[1]
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)\s*#*\s*$", re.MULTILINE)
SENTENCE = re.compile(r"[^.!?\n]{40,}[.!?]")
METHODS = {
    "minmax": CalibrationMethod.MinMax,
    "percentile": CalibrationMethod.Percentile,
    "entropy": CalibrationMethod.Entropy,
}


@dataclass
class CheckSet:
    chunks: list[str]
    queries: list[str]
    relevant: list[set[int]]
    calibration: list[str]


def build_check_set() -> CheckSet:
    paths = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
    chunks: list[str] = []
    queries: list[str] = []
    relevant: list[set[int]] = []
    for path in paths:
        text = path.read_text()
        pieces = split_text(text)
        base = len(chunks)
        chunks += [p.text for p in pieces]
        headings = list(HEADING.finditer(text))
        for i, match in enumerate(headings):
            end = headings[i + 1].start() if i + 1 < len(headings) else len(text)
            inside = {
                base + j for j, p in enumerate(pieces) if p.start < end and p.end > match.end()
            }
            title = re.sub(r"[`*_]", "", match.group(2)).strip()
            if inside and len(title) >= 8:
                queries.append(title)
                relevant.append(inside)
    calibration: list[str] = []
    for index, chunk in enumerate(chunks):
        sentences = SENTENCE.findall(chunk)
        if index % 4 == 0 and sentences:
            queries.append(sentences[len(sentences) // 2].strip())
            relevant.append({index})
        else:
            calibration.append(chunk)
    return CheckSet(chunks, queries, relevant, calibration)


class Windows(CalibrationDataReader):
    """The model's inputs for ``texts``: their full windows (254 word-pieces of real text, no
    padding), 8 at a time, every batch the same shape (the histogram methods need one)."""

    ROWS = 8

    def __init__(self, model: LocalMiniLM, texts: list[str]) -> None:
        size = model.WINDOW_TOKENS
        ids = [e.ids for e in model._tokenizer.encode_batch(texts, add_special_tokens=False)]
        windows = [w[s : s + size] for w in ids for s in range(0, len(w) - size + 1, size)]
        self._batches = iter(self._feeds(model, windows))

    @classmethod
    def _feeds(
        cls, model: LocalMiniLM, windows: list[list[int]]
    ) -> Iterator[dict[str, npt.NDArray[np.int64]]]:
        for start in range(0, len(windows) - cls.ROWS + 1, cls.ROWS):
            input_ids = np.array(
                [[model._cls, *w, model._sep] for w in windows[start : start + cls.ROWS]],
                dtype=np.int64,
            )
            yield {
                "input_ids": input_ids,
                "attention_mask": np.ones_like(input_ids),
                "token_type_ids": np.zeros_like(input_ids),
            }

    def get_next(self) -> dict[str, npt.NDArray[np.int64]] | None:
        return next(self._batches, None)


def linear_matmuls(path: Path, keep_edges: bool) -> list[str]:
    """The MatMuls of the encoder's linear layers (a weight initializer as one input): the
    attention's activation-by-activation products (Q.K^T, weights.V) stay fp32. With
    ``keep_edges``, the first and last encoder layers' MatMuls stay fp32 too."""
    graph = onnx.load(str(path)).graph
    weights = {i.name for i in graph.initializer}
    names = [n.name for n in graph.node if n.op_type == "MatMul" and weights & set(n.input)]
    if not keep_edges:
        return names
    per_layer = len(names) // 6  # six layers of Q, K, V, output, FFN in, FFN out, in order
    return names[per_layer:-per_layer]


def recall_at_10(
    vectors: npt.NDArray[np.float32], queries: npt.NDArray[np.float32], relevant: list[set[int]]
) -> float:
    top = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    return float(
        np.mean([len(set(t) & r) / min(len(r), 10) for t, r in zip(top, relevant, strict=True)])
    )


def rate(model: LocalMiniLM, texts: list[str], repeats: int) -> float:
    best = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        model.embed(texts)
        best = max(best, len(texts) / (time.perf_counter() - start))
    return best


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)  # noqa: T201


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", choices=sorted(METHODS), default="minmax")
    parser.add_argument("--keep-fp32", action="store_true", help="first and last layers in fp32")
    parser.add_argument("--calibration", type=int, default=128, help="calibration chunks")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    check = build_check_set()
    with tempfile.TemporaryDirectory(prefix="docproc-bench-quant-") as tmp:
        cache = Path(tmp)
        fp32 = LocalMiniLM(cache, threads=args.threads, graph="plain")
        plain = ensure_graph(cache, "plain")
        quantized = cache / "int8-qdq.onnx"
        say(f"{len(check.chunks)} chunks, {len(check.queries)} queries; calibrating")
        start = time.perf_counter()
        quantize_static(
            str(plain),
            str(quantized),
            Windows(fp32, check.calibration[: args.calibration]),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul"],
            nodes_to_quantize=linear_matmuls(plain, args.keep_fp32),
            calibrate_method=METHODS[args.method],
        )
        quantize_s = time.perf_counter() - start
        say(f"quantized in {quantize_s:.0f} s; embedding the check set")
        int8 = LocalMiniLM(cache, threads=args.threads, graph="plain")
        int8._session = int8._open_session(quantized)

        chunk_vectors = {
            name: m.embed(check.chunks) for name, m in (("fp32", fp32), ("int8", int8))
        }
        query_vectors = {
            name: m.embed(check.queries) for name, m in (("fp32", fp32), ("int8", int8))
        }
        recall = {
            name: recall_at_10(chunk_vectors[name], query_vectors[name], check.relevant)
            for name in chunk_vectors
        }
        cosines = np.sum(chunk_vectors["fp32"] * chunk_vectors["int8"], axis=1)
        say("measuring speed")
        fused = LocalMiniLM(cache, threads=args.threads)  # the provider's default graph
        speed: dict[str, float] = {}
        for _ in range(2):  # interleaved, best of each
            for name, m in (("fp32", fp32), ("fp32_fused", fused), ("int8", int8)):
                speed[name] = max(speed.get(name, 0.0), rate(m, check.chunks, args.repeats))
        result = {
            "method": args.method,
            "keep_fp32_edges": args.keep_fp32,
            "chunks": len(check.chunks),
            "queries": len(check.queries),
            "calibration_chunks": min(args.calibration, len(check.calibration)),
            "quantize_s": round(quantize_s, 1),
            "recall_at_10": {k: round(v, 4) for k, v in recall.items()},
            "recall_ratio": round(recall["int8"] / recall["fp32"], 4),
            "cosine_min": round(float(cosines.min()), 4),
            "cosine_mean": round(float(cosines.mean()), 5),
            "chunks_per_s": {k: round(v, 1) for k, v in speed.items()},
            "speedup": round(speed["int8"] / speed["fp32"], 2),
            "speedup_vs_fused": round(speed["int8"] / speed["fp32_fused"], 2),
            "graph_mb": {
                "fp32": round(plain.stat().st_size / 2**20, 1),
                "int8": round(quantized.stat().st_size / 2**20, 1),
            },
            "ships": recall["int8"] / recall["fp32"] >= 0.99 and float(cosines.min()) >= 0.995,
            "loadavg": [round(x, 2) for x in os.getloadavg()],
        }
    print(json.dumps(result, indent=2))  # noqa: T201


if __name__ == "__main__":
    main()
