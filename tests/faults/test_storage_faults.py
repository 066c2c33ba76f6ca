"""S3 throttling and failing (issue #14 F5) on the five services as processes.

Every service reaches moto through ``S3FaultProxy``, which answers a share of the requests
with S3's 503 SlowDown / 500 InternalError (seeded). While 30% fail, boto's retries absorb
them: every upload is accepted and indexed. While all fail, an upload answers 503 with
``Retry-After`` and keeps no row, and a document accepted just before the outage, parsed
during it, ends ``error`` with a reason or is indexed once the store is back. Then the
invariant checker over the whole deployment (the checker reads moto directly).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from docproc_testing.infra import load_infra_env
from docproc_testing.proxies import S3FaultProxy

from tests.e2e.harness import SERVICES, Cluster, running_cluster, wait_for
from tests.e2e.test_pipeline import create_kb, wait_complete
from tests.faults.invariants import assert_invariants
from tests.faults.test_crashes import text_of, upload

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def s3() -> Iterator[S3FaultProxy]:
    proxy = S3FaultProxy(load_infra_env(("s3",))["STORAGE__S3_ENDPOINT_URL"], seed=5)
    yield proxy
    proxy.close()


@pytest.fixture(scope="module")
def through_proxy(s3: S3FaultProxy, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    via = {name: {"STORAGE__S3_ENDPOINT_URL": s3.endpoint_url} for name in SERVICES}
    with running_cluster(Path(tmp_path_factory.mktemp("s3faults")), env_for=via) as c:
        yield c


def test_f5_s3_errors_absorbed_then_refused_then_recovered(
    through_proxy: Cluster, s3: S3FaultProxy
) -> None:
    cluster = through_proxy
    with cluster.admin() as client:
        kb = create_kb(client)
        s3.fail_ratio = 0.3
        failed = s3.failed
        for i in range(4):
            upload(cluster, kb, f"flaky-{i}.txt", text_of(f"flaky{i}", 2))
        state = wait_complete(client, kb["id"], timeout=300)
        assert state["indexed_count"] == 4, state
        assert s3.failed > failed  # faults were answered, and retried through

        s3.fail_ratio = 1.0
        refused = client.post(
            f"/kb/{kb['id']}/documents", files={"file": ("down.txt", text_of("down", 1))}
        )
        assert refused.status_code == 503, refused.text
        assert int(refused.headers["Retry-After"]) >= 1
        names = cluster.query(
            "SELECT filename FROM rag_documents WHERE knowledge_base_id = $1",
            uuid.UUID(str(kb["id"])),
        )
        assert "down.txt" not in {r[0] for r in names}

        # accepted while the store answers, parsed while it fails, then the store is back
        s3.fail_ratio = 0.0
        parser = cluster.services["parser"]
        parser.stop()
        doc = upload(cluster, kb, "during.txt", text_of("during", 2))
        s3.fail_ratio = 1.0
        parser.start()
        parser.wait_ready()
        time.sleep(15)  # the parser meets the outage (and retries)
        s3.fail_ratio = 0.0

        def terminal() -> list[object] | None:
            row = cluster.query(
                "SELECT status, error_message FROM rag_documents WHERE id = $1", doc
            )[0]
            return list(row) if row[0] != "processing" else None

        status, message = wait_for(terminal, 300, what="the document to end")
        assert status in {"done", "error"}, status
        if status == "error":
            assert message, "an error without its reason"
    assert_invariants(cluster, within_s=120)
