"""An organization's unfiled documents (uploaded before documents recorded their base): the
bases of their tenant on their name list, count, search, read and delete them, as they take
them when the last of them goes; another tenant never reaches them; a retry is refused (400)
because a new attempt would index them filed under no base again (issue #28, item 10)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from docproc_common.runtime import Runtime
from sqlalchemy import text

from .conftest import Client
from .test_last_base import chunks_of_document, org_base, row_of, unfiled
from .test_lifecycle import chunks_of

pytestmark = pytest.mark.integration

DOCUMENT_NOT_FOUND = {
    "error": {"code": "NOT_FOUND", "message": "Document not found", "details": {}}
}


async def found(c: httpx.AsyncClient, name: str, mode: str = "vector") -> set[str]:
    """The tracking ids a search of the collection finds (every chunk in its scope)."""
    r = await c.post(
        "/rag/search",
        json={"query": "lighthouse keepers", "top_k": 50, "collections": [name], "mode": mode},
    )
    assert r.status_code == 200, r.text
    return {h["document_id"] for h in r.json()["results"]}


async def test_a_base_lists_counts_searches_and_reads_its_tenants_unfiled_rows(
    client: Client, runtime: Runtime
) -> None:
    alice, kb, name = await org_base(client, "tenantrows")
    ours, theirs = await unfiled(runtime, name, "acme"), await unfiled(runtime, name, "globex")
    ours_id, theirs_id = str(ours["id"]), str(theirs["id"])

    listed = (await alice.get(f"/kb/{kb['id']}/documents")).json()
    assert listed["total"] == 2
    assert ours_id in {d["id"] for d in listed["items"]}
    assert theirs_id not in {d["id"] for d in listed["items"]}
    legacy = next(d for d in listed["items"] if d["id"] == ours_id)
    assert (legacy["knowledge_base_id"], legacy["status"]) == (None, "done")
    status = (await alice.get(f"/kb/{kb['id']}/ingestion")).json()
    assert (status["document_count"], status["indexed_count"]) == (2, 2)
    info = (await alice.get(f"/rag/collections/{name}/info")).json()
    assert info["document_count"] == 2
    assert info["total_vectors"] == await chunks_of(runtime, name, kb["id"]) + 1

    hits = await found(alice, name)
    assert ours_id in hits and theirs_id not in hits
    assert len(hits) == 2  # ours.txt and the legacy document: nothing of globex's
    # the legacy hit is cited through the tenant's base that lists it, with no citation
    r = await alice.post(
        "/rag/search",
        json={"query": "legacy", "collections": [name], "filters": {"parent_doc_id": ours_id}},
    )
    (legacy_hit,) = r.json()["results"]
    document = f"/kb/{kb['id']}/documents/{ours_id}"
    assert legacy_hit["links"] == {
        "download": f"/api/v1{document}/download",
        "parsed": f"/api/v1{document}/parsed",
    }
    assert (legacy_hit["page_start"], legacy_hit["char_start"]) == (None, None)
    assert (await alice.get(f"{document}/download")).content == b"Legacy lighthouse keepers."

    read = await alice.get(f"/rag/documents/{ours_id}")
    assert read.status_code == 200, read.text
    assert read.json()["knowledge_base_id"] is None
    other = await alice.get(f"/rag/documents/{theirs_id}")
    assert (other.status_code, other.json()) == (404, DOCUMENT_NOT_FOUND)


async def test_a_tenants_unfiled_row_is_deleted_through_its_base_and_never_retried(
    client: Client, runtime: Runtime
) -> None:
    alice, _kb, name = await org_base(client, "tenantretry")
    ours = await unfiled(runtime, name, "acme")
    async with runtime.sessionmaker() as s, s.begin():
        await s.execute(
            text("UPDATE rag_documents SET status = 'error' WHERE id = :d"), {"d": ours["id"]}
        )

    retried = await alice.post(f"/rag/documents/{ours['id']}/retry")
    assert retried.status_code == 400, retried.text
    body: dict[str, Any] = retried.json()["error"]
    assert body["code"] == "INVALID_INPUT"
    assert "filed under no knowledge base" in body["message"]
    assert "upload it again" in body["message"]
    assert (await row_of(runtime, ours["id"])).status == "error"  # nothing was queued

    assert (await alice.delete(f"/rag/documents/{ours['id']}")).status_code == 204
    assert await row_of(runtime, ours["id"]) is None
    for _ in range(100):  # the chunks go after commit, in the teardown service
        if not await chunks_of_document(runtime, name, ours["vdid"]):
            break
        await asyncio.sleep(0.1)
    assert await chunks_of_document(runtime, name, ours["vdid"]) == 0
