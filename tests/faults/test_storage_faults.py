"""S3 throttling and failing (issue #14 F5), and a parse's temporary file with no room (F12),
on the five services as processes.

Every service of the package's cluster reaches moto through ``S3FaultProxy``, which here
answers a share of the requests with S3's 503 SlowDown / 500 InternalError (seeded). While 30% fail, boto's retries absorb
them: every upload is accepted and indexed. While all fail, an upload answers 503 with
``Retry-After`` and keeps no row, and a document accepted just before the outage, parsed
during it, ends ``error`` with a reason or is indexed once the store is back. Then the
invariant checker over the whole deployment (the checker reads moto directly). The
upload's full local disk is ``services/upload/tests/integration/test_intake_disk_full.py``.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from docproc_testing.api import create_kb, wait_for
from docproc_testing.proxies import S3FaultProxy

from tests.e2e.harness import Cluster
from tests.e2e.test_pipeline import wait_complete
from tests.faults.conftest import PARSE_FILE_LIMIT_MB
from tests.faults.invariants import assert_invariants
from tests.faults.test_crashes import text_of, upload

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.timeout(600)]


@pytest.fixture
def failing(s3: S3FaultProxy) -> Iterator[S3FaultProxy]:
    """The package's S3 proxy, answering as moto does again after the test."""
    yield s3
    s3.fail_ratio = 0.0


def test_f5_s3_errors_absorbed_then_refused_then_recovered(
    cluster: Cluster, failing: S3FaultProxy
) -> None:
    s3 = failing
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


def test_f12_a_parse_whose_temporary_file_finds_no_room_ends_error_and_leaves_nothing(
    cluster: Cluster,
) -> None:
    """A LiteParse collection's file larger than a parse child may write
    (``PARSE_FILE_LIMIT_MB``, as a full disk): tried again after the bus's delay, then the
    row ends ``error`` saying so, the event is dead-lettered, no parse directory is left in
    the parser's ``TMPDIR``, and the next file is indexed."""
    big = b"id,animal,note\n" + b"".join(
        b"%d,tapir,a tapir note %d\n" % (i, i) for i in range(PARSE_FILE_LIMIT_MB * 50_000)
    )
    assert len(big) > PARSE_FILE_LIMIT_MB * 2**20
    with cluster.admin() as client:
        kb = create_kb(client)
        liteparse = {"ingestion": json.dumps({"parser": "liteparse"})}
        r = client.post(
            f"/kb/{kb['id']}/documents", files={"file": ("big.csv", big)}, data=liteparse
        )
        assert r.status_code == 202, r.text
        doc = uuid.UUID(r.json()["tracking_id"])
        r = client.post(
            f"/kb/{kb['id']}/documents",
            files={"file": ("small.csv", b"id,animal\n1,okapi\n")},
            data=liteparse,
        )
        assert r.status_code == 202, r.text
        state = wait_complete(client, kb["id"], timeout=300)
    assert (state["indexed_count"], state["failed_count"]) == (1, 1), state
    ((status, message),) = cluster.query(
        "SELECT status, error_message FROM rag_documents WHERE id = $1", doc
    )
    assert status == "error"
    assert message.startswith("The document could not be parsed (TemporarySpaceFull) - "), message
    parser_tmp = Path(cluster.services["parser"].env["TMPDIR"])
    assert [p.name for p in parser_tmp.iterdir() if p.name.startswith("docproc-parse-")] == []
    assert_invariants(cluster)
