"""Many first uploads into a new collection at once, through two upload processes (issue #14 F8)."""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from docproc_testing.api import create_kb, wait_for

from tests.e2e.harness import Cluster
from tests.faults.invariants import assert_invariants

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

UPLOADS = 50


@pytest.mark.timeout(900)
def test_f8_fifty_first_uploads_through_two_upload_processes(cluster: Cluster) -> None:
    logged = {k: s.log_path.stat().st_size for k, s in cluster.services.items()}
    cluster.add("upload", "upload-2")
    try:
        through_two(cluster, logged)
    finally:  # the package's other scenarios count on one relay
        cluster.services.pop("upload-2").stop()


def through_two(cluster: Cluster, logged: dict[str, int]) -> None:
    with cluster.admin() as client:
        kb = create_kb(client)
    collection = str(kb["collection_name"])

    def upload(i: int) -> tuple[int, str]:
        """One client's upload; a busy answer (503 + Retry-After) is waited out, as a
        client does."""
        with cluster.admin(via="upload" if i % 2 else "upload-2") as client:
            while True:
                response = client.post(
                    f"/kb/{kb['id']}/documents",
                    files={"file": (f"d{i}.txt", f"Document {i} on the tapir {i}.".encode())},
                )
                if response.status_code == 503 and "retry-after" in response.headers:
                    time.sleep(float(response.headers["retry-after"]))
                    continue
                return response.status_code, response.text

    with ThreadPoolExecutor(UPLOADS) as pool:
        answers = list(pool.map(upload, range(UPLOADS)))
    assert [code for code, _ in answers] == [202] * UPLOADS, [a for a in answers if a[0] != 202]

    kb_id = uuid.UUID(str(kb["id"]))

    def statuses() -> dict[str, int]:
        rows = cluster.query(
            "SELECT status, count(*) FROM rag_documents WHERE knowledge_base_id = $1 "
            "GROUP BY status",
            kb_id,
        )
        return {r[0]: r[1] for r in rows}

    wait_for(
        lambda: statuses().get("processing", 0) == 0, timeout=900, what="every upload to settle"
    )
    assert statuses() == {"done": UPLOADS}, statuses()
    table = f"rag_{collection}"
    tables = cluster.query(
        "SELECT relname FROM pg_class WHERE relkind = 'r' AND relname = $1", table
    )
    assert len(tables) == 1
    indexes = cluster.query(
        "SELECT indexname, replace(indexdef, indexname, '') FROM pg_indexes WHERE tablename = $1",
        table,
    )
    names = {r[0] for r in indexes}
    assert {f"{table}_chunk_key", f"{table}_embedding_idx", f"{table}_kb_idx"} <= names
    assert len({r[1] for r in indexes}) == len(indexes), indexes  # none built twice
    logs = "".join(
        s.log_path.read_text(errors="replace")[logged.get(k, 0) :]
        for k, s in cluster.services.items()
    )
    assert "DuplicateTable" not in logs and "UniqueViolation" not in logs
    assert_invariants(cluster)
