"""Durable deletion across processes: a teardown service that dies is finished when it comes back."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from docproc_testing.api import create_kb, wait_for

from tests.e2e.harness import Cluster
from tests.e2e.test_pipeline import wait_complete

pytestmark = [pytest.mark.e2e, pytest.mark.integration]


def table_exists(cluster: Cluster, name: str) -> bool:
    return bool(cluster.query("SELECT to_regclass($1) IS NOT NULL", f"public.rag_{name}")[0][0])


def indexed_base(
    cluster: Cluster, client: httpx.Client, filename: str, data: bytes
) -> tuple[dict[str, Any], str]:
    """A new base with ``filename`` indexed (so its table exists), and its collection's name."""
    kb = create_kb(client)
    name = str(kb["collection_name"])
    r = client.post(f"/kb/{kb['id']}/documents", files={"file": (filename, data)})
    assert r.status_code == 202
    wait_complete(client, kb["id"])
    assert table_exists(cluster, name)
    return kb, name


def test_a_killed_teardown_service_finishes_the_drop_after_restart(cluster: Cluster) -> None:
    with cluster.admin() as client:
        kb, name = indexed_base(cluster, client, "t.txt", b"to be torn down")

        cluster.services["teardown"].kill()  # SIGKILL: nothing of it runs any more
        assert client.delete(f"/kb/{kb['id']}").status_code == 200
        # rows are gone with the request; the table waits for the teardown service
        assert (
            cluster.query("SELECT count(*) FROM knowledge_bases WHERE collection_name = $1", name)[
                0
            ][0]
            == 0
        )
        reserved = cluster.query(
            "SELECT count(*) FROM collection_teardowns WHERE collection_name = $1", name
        )
        assert reserved[0][0] == 1
        assert table_exists(cluster, name)
        # the name is not free meanwhile
        assert client.post("/kb", json={**_body(name)}).status_code == 409

        cluster.restart("teardown")
        wait_for(
            lambda: not table_exists(cluster, name), timeout=120, what="the drop after restart"
        )
        left = cluster.query(
            "SELECT count(*) FROM collection_teardowns WHERE collection_name = $1", name
        )
        assert left[0][0] == 0
        assert client.post("/kb", json={**_body(name)}).status_code == 201


def _body(name: str) -> dict[str, str]:
    return {
        "name": name,
        "collection_name": name,
        "scope": "app",
        "embedding_provider": "local",
        "embedding_model": "sentence-transformers/all-MiniLM-L6-v2",
    }
