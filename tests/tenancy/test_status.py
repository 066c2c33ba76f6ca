"""Tracking and status on the running pipeline (in-process API, embedded bus, five services).

* ``GET /kb/{id}/ingestion`` and ``GET /rag/collections/{name}/info`` derive
  ``indexing_status`` from the rows: ``indexing`` while any document is ``processing``,
  else ``complete``, with the processing / indexed / failed counts; a failure is terminal.
* Both say what the collection's vector index is doing: ``ready``, ``loading`` (bulk mode,
  with the base's chunks not yet in the HNSW index) or ``building`` (a fold running).
* ``GET /kb/{id}/ingestion`` counts the base's own documents, never a namesake base's.
* An upload has no address: its failure (or its success) retires no other row, not
  even an earlier failed upload of the same file name.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import numpy as np
import pytest
from docproc_common import bulkload
from docproc_common.db.models import DocumentStatus, RagDocument
from docproc_common.runtime import Runtime
from docproc_common.vectorstore import write_chunks
from docproc_testing.rows import chunk_stamp, tracking_row
from sqlalchemy import delete, text, update

from .conftest import Client
from .test_tenancy import EDIT, MODEL, VIEW, create, uniq, upload, wait_complete

pytestmark = pytest.mark.integration

BLANK = " \n\t\n "  # parses to no text: the document fails at the parse stage


async def both_views(c: httpx.AsyncClient, kb: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    ingestion = await c.get(f"/kb/{kb['id']}/ingestion")
    info = await c.get(f"/rag/collections/{kb['collection_name']}/info")
    assert ingestion.status_code == info.status_code == 200, (ingestion.text, info.text)
    return dict(ingestion.json()), dict(info.json())


def counts(view: dict[str, Any]) -> tuple[Any, ...]:
    return (
        view["indexing_status"],
        view["processing_count"],
        view["indexed_count"],
        view["failed_count"],
        view["document_count"],
    )


async def test_indexing_status_and_counts_follow_the_rows(client: Client, runtime: Runtime) -> None:
    c = client("alice", "acme", (VIEW, EDIT))
    kb = await create(c, uniq("status"), "org")
    ok = await upload(c, kb["id"], "ok.txt", "The capybara is the largest rodent.")
    bad = await upload(c, kb["id"], "blank.txt", BLANK)
    assert ok.status_code == bad.status_code == 202
    await wait_complete(c, kb["id"])  # a failed document does not keep the base indexing

    ingestion, info = await both_views(c, kb)
    assert counts(ingestion) == counts(info) == ("complete", 0, 1, 1, 2)
    docs = {d["filename"]: d for d in (await c.get(f"/kb/{kb['id']}/documents")).json()["items"]}
    assert docs["ok.txt"]["status"] == "done" and docs["blank.txt"]["status"] == "error"
    assert info["collection_name"] == kb["collection_name"]
    assert info["total_vectors"] == docs["ok.txt"]["chunk_count"] >= 1

    # a document whose attempt is still in the pipeline
    async with runtime.sessionmaker() as s, s.begin():
        inflight = tracking_row(kb["collection_name"], uuid.UUID(kb["id"]), "inflight.txt")
        s.add(inflight)
    ingestion, info = await both_views(c, kb)
    assert counts(ingestion) == counts(info) == ("indexing", 1, 1, 1, 3)

    # it fails: failed is terminal, the base is complete again
    async with runtime.sessionmaker() as s, s.begin():
        await s.execute(
            update(RagDocument)
            .where(RagDocument.id == inflight.id)
            .values(status=DocumentStatus.ERROR, error_message="stand-in")
        )
    ingestion, info = await both_views(c, kb)
    assert counts(ingestion) == counts(info) == ("complete", 0, 1, 2, 3)


async def test_a_bases_status_counts_its_own_documents_not_a_namesakes(
    client: Client, runtime: Runtime
) -> None:
    """``GET /kb/{id}/ingestion`` counts the documents the base lists, not everything under
    its collection name: another base may share the name (here a member's personal base)."""
    c = client("alice", "acme", (VIEW, EDIT))
    org = await create(c, uniq("namesake"), "org")
    r = await c.post(
        "/kb",
        json={
            "name": "mine",
            "collection_name": org["collection_name"],
            "scope": "personal",
            **MODEL,
        },
    )
    assert r.status_code == 201, r.text
    personal = r.json()
    async with runtime.sessionmaker() as s, s.begin():
        row = tracking_row(personal["collection_name"], uuid.UUID(personal["id"]), "mine.txt")
        s.add(row)
    try:
        mine = (await c.get(f"/kb/{personal['id']}/ingestion")).json()
        theirs = (await c.get(f"/kb/{org['id']}/ingestion")).json()
        assert counts(mine) == ("indexing", 1, 0, 0, 1)
        assert counts(theirs) == ("complete", 0, 0, 0, 0)
    finally:
        async with runtime.sessionmaker() as s, s.begin():
            await s.execute(delete(RagDocument).where(RagDocument.id == row.id))


async def test_an_upload_retires_no_other_row_not_even_a_failed_one_of_the_same_name(
    client: Client,
) -> None:
    c = client("alice", "acme", (VIEW, EDIT))
    kb = await create(c, uniq("noaddr"), "org")
    failed = []
    for _ in range(2):
        r = await upload(c, kb["id"], "notes.txt", BLANK)
        assert r.status_code == 202, r.text
        failed.append(r.json()["tracking_id"])
        await wait_complete(c, kb["id"])  # each failure is recorded before the next upload
    r = await upload(c, kb["id"], "notes.txt", "Notes about capybaras.")
    good = r.json()["tracking_id"]
    await wait_complete(c, kb["id"])

    items = (await c.get(f"/kb/{kb['id']}/documents")).json()["items"]
    by_id = {d["id"]: d for d in items}
    assert set(by_id) == {*failed, good}
    assert [by_id[d]["status"] for d in failed] == ["error", "error"]
    assert by_id[good]["status"] == "done"
    assert all(d["filename"] == "notes.txt" and d["source_path"] is None for d in items)
    ingestion, _ = await both_views(c, kb)
    assert counts(ingestion) == ("complete", 0, 1, 2, 3)


def index(view: dict[str, Any]) -> tuple[Any, Any]:
    return view["vector_index"], view["vector_rows_pending"]


async def test_the_status_says_what_the_vector_index_is_doing(
    client: Client, runtime: Runtime
) -> None:
    c = client("alice", "acme", (VIEW, EDIT))
    kb = await create(c, uniq("bulkst"), "org")
    name, kb_id = kb["collection_name"], uuid.UUID(kb["id"])
    ingestion, info = await both_views(c, kb)
    assert index(ingestion) == index(info) == ("ready", 0)

    # bulk mode with a document still pending (so the embedder's sweep does not fold yet),
    # and one chunk set written to the side table
    async with runtime.sessionmaker() as s, s.begin():
        inflight = tracking_row(name, kb_id, "inflight.txt")
        s.add(inflight)
        assert await bulkload.enter(s, name, kb["embedding_dim"])  # creates the table too
        stamp = chunk_stamp(kb_id, tracking_id=inflight.id, filename="inflight.txt")
        vectors = np.eye(2, kb["embedding_dim"], dtype=np.float32)
        await write_chunks(s, name, uuid.uuid4(), ["one", "two"], vectors, stamp)
    ingestion, info = await both_views(c, kb)
    assert index(ingestion) == index(info) == ("loading", 2)
    assert info["total_vectors"] == 2

    async with runtime.engine.connect() as held:  # what a running fold holds
        await held.execute(text("SELECT pg_advisory_lock(:k)"), {"k": bulkload.fold_lock_key(name)})
        ingestion, info = await both_views(c, kb)
        assert index(ingestion) == index(info) == ("building", 2)
        await held.execute(text("SELECT pg_advisory_unlock_all()"))

    assert await bulkload.fold(runtime.engine, name, bulkload.IndexBuild()) == "folded"
    ingestion, info = await both_views(c, kb)
    assert index(ingestion) == index(info) == ("ready", 0)
    assert info["total_vectors"] == 2
