"""The chaos run (issue #14): mixed documents through the five services as processes, once
without faults and once under a seeded sequence of them, then the invariant checker.

Each pass pushes mixed documents (PDF, Word, Excel, text; 10% uploaded again with
``replace``, 5% deleted once accepted; ``docproc_testing.chaos``): ``--documents`` with
faults, ``--baseline-documents`` (as many by default; 0 for none) without, into a knowledge base of
its own, ``--concurrency`` at a time, on one cluster whose services reach S3 through a fault proxy and
whose outbox only the upload service relays. The faulty pass injects ``--faults`` faults
drawn from ``--seed`` (``docproc_testing.faults``: crashes at named fault points, SIGKILLs,
S3 failing 30% or all of its requests for a while, events published again, an embedder
joining and leaving). It prints documents/s of each pass, the time to drain after the last
fault, the terminal states, and the invariant violations (which must be none).

    nice -n 10 uv run python bench/chaos.py [--documents 1000] [--baseline-documents N]
        [--faults 8] [--seed N] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from docproc_testing import chaos, faults  # noqa: E402
from docproc_testing.api import create_kb  # noqa: E402
from docproc_testing.infra import load_infra_env  # noqa: E402
from docproc_testing.proxies import S3FaultProxy  # noqa: E402

from tests.e2e.harness import SERVICES, Cluster, running_cluster  # noqa: E402
from tests.faults.invariants import cluster_violations  # noqa: E402


def checker(cluster: Cluster) -> list[object]:
    return list(cluster_violations(cluster, within_s=180))


def row(name: str, r: chaos.Report) -> str:
    states = ", ".join(f"{k} {v}" for k, v in sorted(r.statuses.items()))
    return (
        f"| {name} | {r.documents} | {len(r.faults)} | {r.wall_s:.0f} | {r.documents_per_s:.2f} "
        f"| {r.drain_s:.0f} | {states} | {len(r.violations)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument(
        "--baseline-documents",
        type=int,
        default=None,
        help="the pass without faults (as many as --documents; 0: no such pass)",
    )
    parser.add_argument("--faults", type=int, default=8)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10_000)
    plan = faults.plan(seed, args.faults, spacing_s=20)
    print(f"seed {seed}; faults {[f.kind for f in plan]}", flush=True)
    print(f"load average at start {os.getloadavg()}", flush=True)
    s3 = S3FaultProxy(load_infra_env(("s3",))["STORAGE__S3_ENDPOINT_URL"], seed=seed)
    try:
        with (
            tempfile.TemporaryDirectory() as tmp,
            running_cluster(Path(tmp), env_for=faults.deployment_env(SERVICES, s3)) as cluster,
        ):
            passes = []
            baseline = (
                args.documents if args.baseline_documents is None else args.baseline_documents
            )
            for name, pass_plan, count in (
                ("without faults", [], baseline),
                ("with faults", plan, args.documents),
            ):
                if not count:
                    continue
                report = chaos.run(
                    cluster,
                    s3,
                    documents=count,
                    plan=pass_plan,
                    seed=seed,
                    check=lambda: checker(cluster),
                    create_kb=create_kb,
                    concurrency=args.concurrency,
                    say=lambda line: print(line, flush=True),
                )
                print(f"{name}: {row(name, report)}", flush=True)
                for violation in report.violations:
                    print(f"  violation: {violation}", flush=True)
                print(f"  answers {dict(sorted(report.answers.items()))}", flush=True)
                passes.append((name, report))
    finally:
        s3.close()
    print(f"load average at end {os.getloadavg()}")
    print()
    print(
        "| pass | documents | faults | wall s | documents/s | drain after last fault s "
        "| terminal states | invariant violations |"
    )
    print("|---|---:|---:|---:|---:|---:|---|---:|")
    for name, report in passes:
        print(row(name, report))


if __name__ == "__main__":
    main()
