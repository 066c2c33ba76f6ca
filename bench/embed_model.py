"""Throughput of the local embedding model (all-MiniLM-L6-v2 on onnxruntime).

Embeds synthetic chunks of exactly 256 word-pieces ([CLS] + 254 + [SEP]) with
LocalMiniLM, once with the fused graph (the default) and once with the plain graph
as written from the safetensors weights, in the same run and interleaved, and
reports raw chunks/s, the graph build times and the cosine between the variants.

    uv run python bench/embed_model.py [--chunks 256] [--batch 32] [--threads 2] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from docproc_common.embedding.local_model import GraphVariant, LocalMiniLM, ensure_graph

VARIANTS: tuple[GraphVariant, ...] = ("fused", "plain")
REFERENCE = Path(__file__).resolve().parents[1] / "libs/common/tests/data/all-minilm-l6-v2.json"


def make_chunks(model: LocalMiniLM, count: int, seed: int = 7) -> list[str]:
    """Texts of 254 single-word-piece words, i.e. exactly 256 tokens with [CLS]/[SEP]."""
    vocab = model._tokenizer.get_vocab()
    words = sorted(w for w in vocab if w.isascii() and w.isalpha() and len(w) >= 3)
    rng = random.Random(seed)
    chunks = [" ".join(rng.choices(words, k=LocalMiniLM.WINDOW_TOKENS)) for _ in range(count)]
    sizes = {model.count_tokens(c) for c in chunks}
    assert sizes == {LocalMiniLM.MAX_INPUT_TOKENS}, sizes
    return chunks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=256)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="docproc-bench-models-") as tmp:
        cache = Path(tmp)
        build_s: dict[str, float] = {}
        for variant in reversed(VARIANTS):  # plain first; "fused" includes writing the plain graph
            start = time.perf_counter()
            ensure_graph(cache, variant)
            build_s[variant] = time.perf_counter() - start

        models: dict[str, LocalMiniLM] = {}
        load_s: dict[str, float] = {}
        for variant in VARIANTS:
            start = time.perf_counter()
            models[variant] = LocalMiniLM(
                cache, threads=args.threads, batch_tokens=args.batch * 256, graph=variant
            )
            load_s[variant] = time.perf_counter() - start

        chunks = make_chunks(models["fused"], args.chunks)
        vectors = {}
        for variant, model in models.items():  # warm-up
            vectors[variant] = model.embed(chunks[: args.batch])

        load_before = os.getloadavg()[0]
        rates: dict[str, list[float]] = {v: [] for v in VARIANTS}
        cpu_rates: dict[str, list[float]] = {v: [] for v in VARIANTS}  # per CPU-second
        for _ in range(args.repeats):
            for variant, model in models.items():  # interleaved so both see the same machine state
                start, cpu_start = time.perf_counter(), time.process_time()
                vectors[variant] = model.embed(chunks)
                rates[variant].append(len(chunks) / (time.perf_counter() - start))
                cpu_rates[variant].append(len(chunks) / (time.process_time() - cpu_start))

        load_after = os.getloadavg()[0]
        cos_variants = float(np.min(np.sum(vectors["fused"] * vectors["plain"], axis=1)))
        cos_reference: dict[str, float] = {}
        if REFERENCE.is_file():
            items = json.loads(REFERENCE.read_text())["items"]
            fitting = [it for it in items if models["plain"].count_tokens(it["text"]) <= 256]
            expected = np.array([it["embedding"] for it in fitting], dtype=np.float32)
            for variant, model in models.items():
                got = model.embed([it["text"] for it in fitting])
                cos_reference[variant] = float(np.min(np.sum(got * expected, axis=1)))

    print(
        f"all-MiniLM-L6-v2, {args.chunks} chunks x 256 tokens, batch {args.batch}, "
        f"{args.threads} threads, best/median of {args.repeats}"
    )
    print(
        f"{'graph':<8} {'chunks/s best':>14} {'median':>8} {'per CPU-s':>10} {'build s':>8} "
        f"{'load s':>7} {'min cos ref':>12}"
    )
    for variant in VARIANTS:
        ref = f"{cos_reference[variant]:.7f}" if cos_reference else "n/a"
        print(
            f"{variant:<8} {max(rates[variant]):>14.1f} {statistics.median(rates[variant]):>8.1f} "
            f"{max(cpu_rates[variant]):>10.1f} {build_s[variant]:>8.2f} {load_s[variant]:>7.2f} "
            f"{ref:>12}"
        )
    print(f"min cosine fused vs plain over the chunks: {cos_variants:.7f}")
    print("build s: plain = write the graph from safetensors; fused = plain + optimizer fusions.")
    print(
        "per CPU-s: chunks per second of this process's CPU time (best), less sensitive to "
        "other load than wall-clock chunks/s"
    )
    print(
        f"1-min load average {load_before:.2f} -> {load_after:.2f} on {os.cpu_count()} CPUs "
        "(above the thread count means the figures are depressed by other work)"
    )


if __name__ == "__main__":
    main()
