"""``POST /rag/collections/{name}/ingest``: the upload addressed by name, the same 202 answer."""

from __future__ import annotations

import pytest
from docproc_common.runtime import Runtime
from sqlalchemy import text

from .conftest import Client
from .test_tenancy import EDIT, MODEL, VIEW, create, uniq, wait_complete

pytestmark = pytest.mark.integration


async def rows_named(runtime: Runtime, name: str) -> int:
    async with runtime.sessionmaker() as s:
        found = await s.execute(
            text("SELECT count(*) FROM rag_documents WHERE collection_name = :n"), {"n": name}
        )
        return int(found.scalar_one())


async def test_both_addresses_answer_the_same_202(client: Client) -> None:
    alice = client("alice", "acme", (VIEW, EDIT))
    kb = await create(alice, uniq("byname"), "org")
    body = {"file": ("policy.txt", b"Vacation policy and holidays.")}
    by_name = await alice.post(
        f"/rag/collections/{kb['collection_name']}/ingest",
        files=body,
        data={"organizational_unit": "hr", "document_date": "2024-05-01"},
    )
    by_id = await alice.post(f"/kb/{kb['id']}/documents", files=body)
    assert by_name.status_code == by_id.status_code == 202, by_name.text
    assert by_name.json().keys() == by_id.json().keys()
    assert by_name.json()["document_id"] is None  # no vector document before indexing
    assert by_name.json()["collection_name"] == kb["collection_name"]
    await wait_complete(alice, kb["id"])
    docs = (await alice.get(f"/kb/{kb['id']}/documents")).json()["items"]
    filed = {d["id"]: d for d in docs}[by_name.json()["tracking_id"]]
    assert (filed["status"], filed["organizational_unit"]) == ("done", "hr")


async def test_refusals_store_nothing(client: Client, runtime: Runtime) -> None:
    alice = client("alice", "acme", (VIEW, EDIT))
    viewer = client("vera", "acme", (VIEW,))
    outsider = client("otto", "globex", (VIEW, EDIT))
    name = uniq("refuse")
    org = await create(alice, name, "org")
    body = {"file": ("a.txt", b"Some text.")}

    for caller in (viewer, outsider):  # cannot edit, or cannot see: one answer
        r = await caller.post(f"/rag/collections/{name}/ingest", files=body)
        assert r.status_code == 404
        assert r.json()["error"]["message"] == "Collection not found"
    missing = await alice.post(f"/rag/collections/{uniq('nosuch')}/ingest", files=body)
    assert missing.status_code == 404
    bad = await alice.post("/rag/collections/Bad-Name/ingest", files=body)
    assert bad.status_code == 400

    twin = await alice.post(
        "/kb", json={"name": "mine", "collection_name": name, "scope": "personal", **MODEL}
    )
    assert twin.status_code == 201
    r = await alice.post(f"/rag/collections/{name}/ingest", files=body)
    assert r.status_code == 409
    assert set(r.json()["error"]["details"]["knowledge_base_ids"]) == {
        org["id"],
        twin.json()["id"],
    }
    assert await rows_named(runtime, name) == 0
    assert not (runtime.settings.storage.media_dir / "rag" / name).exists()
