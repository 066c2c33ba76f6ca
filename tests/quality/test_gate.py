"""The retrieval-quality gate (issue #30): the project's own labelled set
(``postgresql-reference``: PostgreSQL's reference pages, each page's one-line purpose as its
query; built by ``bench/labelled_set.py``) through the whole pipeline of ``docproc dev``
(upload, parse, chunk, embed), then every query through ``POST /rag/search`` in each mode.

A change that lowers a mode's nDCG@10 below the low end of the 95% interval recorded in
``baseline.json`` fails here. The pipeline is deterministic (the built-in model, the same
chunks), so on an unchanged tree the figures are the baseline's own. A change that moves
the figures on purpose rewrites the baseline in the same commit:

    uv run python bench/quality.py --data tests/quality/postgresql-reference \\
        --baseline tests/quality/postgresql-reference/baseline.json
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
LABELLED = Path(__file__).parent / "postgresql-reference"


def bench_quality() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_quality", ROOT / "bench" / "quality.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_gate_fails_a_mode_below_the_interval_only(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    modes = {
        "vector": {"ndcg_at_10": 0.8, "low": 0.75, "high": 0.85},
        "keyword": {"ndcg_at_10": 0.6, "low": 0.55, "high": 0.65},
        "rerank": {"ndcg_at_10": 0.9, "low": 0.85, "high": 0.95},
    }
    baseline.write_text(json.dumps({"modes": modes}))
    now = {"vector": (0.749, 0.7, 0.8), "keyword": (0.55, 0.5, 0.6), "hybrid": (0.1, 0.0, 0.2)}
    # vector fell below 0.75; keyword sits on its low end; rerank was not run this time and
    # hybrid has no baseline: neither is judged.
    assert bench_quality().regressions(baseline, now) == ["vector"]


def test_every_corpus_id_gets_its_own_upload_name() -> None:
    names = bench_quality().file_name
    ids = ["4983", "a/b", "a_b", "a b", "x" * 300, "x" * 301, "ünï", "test-env-pro02b"]
    uploaded = [names(i) for i in ids]
    assert len(set(uploaded)) == len(ids)
    assert uploaded[0] == "4983.txt" and uploaded[-1] == "test-env-pro02b.txt"
    assert all(len(n) < 100 and n.endswith(".txt") for n in uploaded)


def test_a_query_is_scored_without_its_own_document_and_cut_to_the_api_limit() -> None:
    bench = bench_quality()
    run = {"q1": {"q1": 3.0, "d2": 2.0}, "q2": {"q1": 1.0}}
    assert bench.judged(run) == {"q1": {"d2": 2.0}, "q2": {"q1": 1.0}}
    long = "word " * 3000
    data = bench.DataSet({}, {"q1": long, "q2": "short"}, {})
    fitted = bench.fitted(data).queries
    assert fitted["q2"] == "short"
    assert len(fitted["q1"]) <= bench.QUERY_CHARS and fitted["q1"].endswith("word")


@pytest.mark.e2e
@pytest.mark.timeout(900)
def test_no_mode_falls_below_its_baseline() -> None:
    baseline = json.loads((LABELLED / "baseline.json").read_text())
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "quality.py"),
            "--data",
            str(LABELLED),
            "--check",
            str(LABELLED / "baseline.json"),
        ],
        capture_output=True,
        text=True,
        timeout=840,
        check=False,
    )
    report = run.stdout + run.stderr
    assert run.returncode == 0, report
    judged = {line.split()[1] for line in run.stdout.splitlines() if line.startswith("gate: ")}
    assert judged == set(baseline["modes"]) == {"vector", "keyword", "hybrid"}, report
