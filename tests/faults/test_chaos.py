"""The chaos run, small (issue #14): 50 mixed documents, some replaced and some deleted,
through the package's cluster while three seeded faults hit it (a process killed, the relay
crashed at a fault point, S3 failing a share of its requests), then the invariant checker.
``bench/chaos.py`` is the same run at 1,000 documents."""

from __future__ import annotations

import pytest
from docproc_testing import chaos, faults
from docproc_testing.api import create_kb
from docproc_testing.proxies import S3FaultProxy

from tests.e2e.harness import Cluster
from tests.faults.invariants import cluster_violations

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.timeout(900)]

SEED = 7  # kill.embedder, relay.before_publish, s3.flaky


def test_chaos_fifty_documents_three_faults_no_violation(
    cluster: Cluster, s3: S3FaultProxy
) -> None:
    plan = faults.plan(SEED, 3)
    assert [f.kind for f in plan] == ["kill.embedder", "relay.before_publish", "s3.flaky"]

    def check() -> list[object]:
        return list(cluster_violations(cluster, within_s=120))

    report = chaos.run(
        cluster, s3, documents=50, plan=plan, seed=SEED, check=check, create_kb=create_kb
    )
    assert report.faults == [f.kind for f in plan]
    assert report.violations == []
    assert set(report.statuses) <= {"done", "error"}, report.statuses
    assert not [s for s in report.answers if s >= 500 and s != 503], report.answers
