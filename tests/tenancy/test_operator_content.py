"""Operator content in an app-scoped base: what its search returns it lists, counts and deletes.

``docproc rag-ingest`` writes chunks and rows no knowledge base owns. An app-scoped base on
the name adopts them; no other base does, so none other reaches them by id either.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from docproc_cli import operator
from docproc_common.runtime import Runtime
from sqlalchemy import text

from .conftest import Client
from .test_tenancy import EDIT, VIEW, create, uniq, upload, wait_complete

pytestmark = pytest.mark.integration


async def rag_ingest(runtime: Runtime, folder: Path, name: str, body: str) -> str:
    """Operator-ingest one file into ``name`` (the module's ``pipeline`` running); its tracking
    row's id."""
    page = folder / f"{name}.md"
    page.write_text(body)
    totals = await operator.rag_ingest(runtime, [page], name, print)
    assert totals == operator.Totals(ingested=1)
    async with runtime.sessionmaker() as s:
        row = await s.execute(
            text("SELECT id FROM rag_documents WHERE collection_name = :n AND source = 'cli'"),
            {"n": name},
        )
        return str(row.scalar_one())


async def chunks(runtime: Runtime, name: str) -> int:
    async with runtime.sessionmaker() as s:
        return int((await s.execute(text(f"SELECT count(*) FROM rag_{name}"))).scalar_one())


async def hits(c: httpx.AsyncClient, **body: Any) -> set[str]:
    r = await c.post("/rag/search", json={"query": "lighthouse keepers", "top_k": 20, **body})
    assert r.status_code == 200, r.text
    return {h["filename"] for h in r.json()["results"]}


@pytest.fixture(scope="module")
async def shared(client: Client, runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> Any:
    admin = client("root", None, (VIEW, EDIT), admin=True)
    kb = await create(admin, uniq("optbase"), "app")
    name = kb["collection_name"]
    assert (
        await upload(admin, kb["id"], "own.txt", "Lighthouse keepers' rota.")
    ).status_code == 202
    await wait_complete(admin, kb["id"])
    doc = await rag_ingest(
        runtime, tmp_path_factory.mktemp("op"), name, "# Keepers\n\nLighthouse keepers log."
    )
    return {"admin": admin, "kb": kb, "name": name, "doc": doc}


async def test_what_an_app_base_searches_it_lists_and_counts(
    client: Client, runtime: Runtime, shared: dict[str, Any]
) -> None:
    kb, name = shared["kb"], shared["name"]
    reader = client("vera", "acme", (VIEW,))
    assert await hits(reader, collections=[name]) == {"own.txt", f"{name}.md"}
    assert await hits(reader, knowledge_base_ids=[kb["id"]]) == {"own.txt", f"{name}.md"}
    listed = (await reader.get(f"/kb/{kb['id']}/documents")).json()
    assert listed["total"] == 2
    op = next(d for d in listed["items"] if d["id"] == shared["doc"])
    assert (op["knowledge_base_id"], op["source"], op["status"]) == (None, "cli", "done")
    status = (await reader.get(f"/kb/{kb['id']}/ingestion")).json()
    assert (status["document_count"], status["indexed_count"]) == (2, 2)
    info = (await reader.get(f"/rag/collections/{name}/info")).json()
    assert info["document_count"] == 2
    assert info["total_vectors"] == await chunks(runtime, name) > 0
    assert (await reader.get(f"/rag/documents/{shared['doc']}")).status_code == 200


async def test_an_operator_hit_is_cited_through_the_app_base(
    client: Client, shared: dict[str, Any]
) -> None:
    """``rag-ingest`` records citations as the parser does; the hit's links go through the
    app-scoped base that adopts it, and it keeps no original to download."""
    kb, doc = shared["kb"], shared["doc"]
    reader = client("vera", "acme", (VIEW,))
    r = await reader.post(
        "/rag/search",
        json={"query": "lighthouse keepers", "knowledge_base_ids": [kb["id"]], "top_k": 20},
    )
    hit = next(h for h in r.json()["results"] if h["document_id"] == doc)
    assert hit["content"] == "# Keepers\n\nLighthouse keepers log."
    assert (hit["page_start"], hit["char_start"], hit["char_end"]) == (None, 0, 34)
    assert hit["heading_path"] == ["Keepers"]
    parsed = f"/kb/{kb['id']}/documents/{doc}/parsed"
    assert hit["links"] == {"download": None, "parsed": f"/api/v1{parsed}"}
    assert (await reader.get(parsed)).status_code == 200


async def test_only_a_base_that_adopts_it_reaches_an_operator_document(
    client: Client, runtime: Runtime, tmp_path: Path
) -> None:
    """An organization's base on a name that also holds operator content neither searches,
    lists, counts, reads nor deletes it."""
    alice = client("alice", "acme", (VIEW, EDIT))
    kb = await create(alice, uniq("optorg"), "org")
    name = kb["collection_name"]
    assert (await upload(alice, kb["id"], "ours.txt", "Our lighthouse keepers.")).status_code == 202
    await wait_complete(alice, kb["id"])
    doc = await rag_ingest(runtime, tmp_path, name, "# Keepers\n\nThe operator's keepers.")
    assert await hits(alice, collections=[name]) == {"ours.txt"}
    assert (await alice.get(f"/kb/{kb['id']}/documents")).json()["total"] == 1
    info = (await alice.get(f"/rag/collections/{name}/info")).json()
    assert (info["document_count"], info["total_vectors"]) == (1, await chunks(runtime, name) - 1)
    for r in (
        await alice.get(f"/rag/documents/{doc}"),
        await alice.delete(f"/rag/documents/{doc}"),
        await alice.post(f"/rag/documents/{doc}/retry"),
    ):
        assert r.status_code == 404
        assert r.json()["error"]["message"] == "Document not found"


async def test_an_operator_document_is_deleted_through_the_app_base(
    client: Client, runtime: Runtime, tmp_path: Path
) -> None:
    admin = client("root", None, (VIEW, EDIT), admin=True)
    kb = await create(admin, uniq("opdel"), "app")
    name = kb["collection_name"]
    doc = await rag_ingest(runtime, tmp_path, name, "# Keepers\n\nDoomed keepers' log.")
    reader = client("vera", "acme", (VIEW, EDIT))
    assert (await reader.delete(f"/rag/documents/{doc}")).status_code == 404  # app: admin writes
    assert await chunks(runtime, name) > 0
    assert (await admin.delete(f"/rag/documents/{doc}")).status_code == 204
    for _ in range(100):  # the chunks go after commit, in the teardown service
        if not await chunks(runtime, name):
            break
        await asyncio.sleep(0.1)
    assert await chunks(runtime, name) == 0
    assert (await admin.get(f"/kb/{kb['id']}/documents")).json()["total"] == 0
    assert (await admin.get(f"/rag/collections/{name}/info")).json()["total_vectors"] == 0
    assert await hits(admin, collections=[name]) == set()
