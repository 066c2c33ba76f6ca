"""A knowledge base deleted while its document embeds, then the teardown killed mid-drop (issue
#14 F9)."""

from __future__ import annotations

import uuid

import pytest
from docproc_common.faultpoints import FAULT_EXIT
from docproc_testing import faults
from docproc_testing.api import wait_for

from tests.e2e.harness import Cluster
from tests.e2e.test_teardown import indexed_base, table_exists
from tests.faults.invariants import assert_invariants
from tests.faults.test_crashes import text_of

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.timeout(900)]


def test_f9_a_base_deleted_while_embedding_then_teardown_killed_mid_drop(cluster: Cluster) -> None:
    with cluster.admin() as client:
        kb, name = indexed_base(cluster, client, "s.txt", b"A small one.")
        faults.arm(cluster, "teardown", "teardown.mid_drop")

        r = client.post(
            f"/kb/{kb['id']}/documents", files={"file": ("big.txt", text_of("axolotl", 40))}
        )
        assert r.status_code == 202
        big = uuid.UUID(r.json()["tracking_id"])
        wait_for(
            lambda: cluster.query("SELECT parsed_path FROM rag_documents WHERE id = $1", big)[0][0],
            timeout=300,
            interval=0.1,
            what="the big document to be parsed",
        )
        # it embeds now (or has just committed): the base goes from under it
        assert client.delete(f"/kb/{kb['id']}").status_code == 200

    assert cluster.services["teardown"].wait_exit(180) == FAULT_EXIT
    # the drop died with its transaction: the table and the reservation are still there
    assert table_exists(cluster, name)
    reserved = "SELECT count(*) FROM collection_teardowns WHERE collection_name = $1"
    assert cluster.query(reserved, name)[0][0] == 1
    # the ingest committed before the delete (and is torn down) or wrote nothing: its row
    # went with the base, and the embedder is done with its event
    assert cluster.query("SELECT count(*) FROM rag_documents WHERE id = $1", big)[0][0] == 0

    cluster.restart("teardown")
    wait_for(lambda: not table_exists(cluster, name), timeout=300, what="the drop to finish")
    assert cluster.query(reserved, name)[0][0] == 0
    # no late write re-creates the table, nothing of the base is left, every event consumed
    assert_invariants(cluster, torn_down=[name])
    assert not table_exists(cluster, name)
    with cluster.admin() as client:
        hits = client.post(
            "/rag/search", json={"query": "axolotl fact", "collections": [name], "top_k": 5}
        )
        assert hits.status_code == 404 or hits.json()["results"] == []
