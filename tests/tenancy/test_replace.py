"""A replacement on the running pipeline (in-process API, embedded bus, five services).

A synced file changes: the new attempt is indexed, then completing it retires the
tracking row that points at the replaced vector document, its chunks and its stored
(parsed) file. The delete of the old chunks fails once: that is logged and retried,
never reported as a failed ingest of the new document.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from docproc_common import vectorstore
from docproc_common.events import DocumentDeleted, DocumentFailed
from docproc_common.runtime import Runtime
from sqlalchemy import text

from .conftest import Client
from .test_tenancy import EDIT, VIEW, create, uniq, wait_complete

pytestmark = pytest.mark.integration


async def rows(runtime: Runtime, sql: str, **params: Any) -> list[Any]:
    async with runtime.sessionmaker() as s:
        return list((await s.execute(text(sql), params)).all())


async def eventually(check: Callable[[], Awaitable[Any]], what: str, timeout: float = 90) -> Any:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await check()
        if value:
            return value
        if loop.time() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.2)


async def sync(
    admin: httpx.AsyncClient, runtime: Runtime, kb: dict[str, Any], path: Path
) -> dict[str, Any]:
    r = await admin.post("/rag/sync/local", json={"path": str(path), "knowledge_base_id": kb["id"]})
    assert r.status_code == 202, r.text
    log_id = uuid.UUID(r.json()["sync_log_id"])

    async def finished() -> dict[str, Any] | None:
        (log,) = await rows(
            runtime,
            "SELECT status, ingested, updated, failed FROM sync_logs WHERE id = :i",
            i=log_id,
        )
        return dict(log._mapping) if log.status not in ("queued", "running") else None

    log: dict[str, Any] = await eventually(finished, "the sync run")
    return log


async def documents(runtime: Runtime, kb_id: str) -> list[Any]:
    return await rows(
        runtime,
        "SELECT id, status, error_message, vector_document_id, parsed_path "
        "FROM rag_documents WHERE knowledge_base_id = :k",
        k=uuid.UUID(kb_id),
    )


async def chunk_sets(runtime: Runtime, collection: str) -> set[uuid.UUID]:
    found = await rows(runtime, f"SELECT DISTINCT document_id FROM rag_{collection}")
    return {r[0] for r in found}


async def test_a_replacement_retires_the_old_row_chunks_and_file_and_a_failed_delete_is_no_failure(
    client: Client,
    runtime: Runtime,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    admin = client("root", None, (VIEW, EDIT), admin=True)
    kb = await create(admin, uniq("repl"), "app")
    name = kb["collection_name"]
    media = runtime.settings.storage.media_dir
    notes = tmp_path / "notes.md"
    notes.write_text("# Birds\n\nPenguins live in Antarctica.\n")

    first = await sync(admin, runtime, kb, tmp_path)
    assert (first["status"], first["ingested"]) == ("done", 1), first
    await wait_complete(admin, kb["id"])
    (old,) = await documents(runtime, kb["id"])
    assert old.status == "done"
    assert old.parsed_path and (media / old.parsed_path).is_file()
    assert await chunk_sets(runtime, name) == {old.vector_document_id}

    real_delete = vectorstore.delete_documents
    calls: list[list[uuid.UUID]] = []

    async def failing_once(session: Any, collection: str, ids: Any) -> int:
        calls.append(list(ids))
        if len(calls) == 1:
            raise ConnectionError("postgres at db-internal.example:5432 went away")
        return await real_delete(session, collection, ids)

    monkeypatch.setattr("docproc_teardown.service.delete_documents", failing_once)
    caplog.set_level(logging.WARNING, "docproc_common.bus")

    notes.write_text("# Birds\n\nPenguins cannot fly, they swim.\n")
    bumped = notes.stat().st_mtime_ns + 2_000_000_000
    os.utime(notes, ns=(bumped, bumped))
    second = await sync(admin, runtime, kb, tmp_path)
    assert (second["status"], second["updated"], second["failed"]) == ("done", 1, 0), second

    async def replaced() -> Any:
        docs = await documents(runtime, kb["id"])
        return docs[0] if len(docs) == 1 and docs[0].id != old.id else None

    new = await eventually(replaced, "the replacement to retire the old document")
    assert (new.status, new.error_message) == ("done", None)

    # after the row, durably: its stored file, and its chunks once the retried delete ran
    async def old_file_and_chunks_gone() -> bool:
        file_gone = not (media / old.parsed_path).exists()
        return file_gone and await chunk_sets(runtime, name) == {new.vector_document_id}

    await eventually(old_file_and_chunks_gone, "the old file and chunks to be deleted")
    assert new.parsed_path and (media / new.parsed_path).is_file()
    assert len(calls) >= 2 and calls[0] == [old.vector_document_id]

    # the failed delete was logged ...
    failures = [
        r
        for r in caplog.records
        if DocumentDeleted.TOPIC in r.getMessage() and "ConnectionError" in r.getMessage()
    ]
    assert failures, "the failed delete was not logged"
    # ... and is not a failed ingest: the new document and the base show no failure
    assert (new.status, new.error_message) == ("done", None)
    status = (await admin.get(f"/kb/{kb['id']}/ingestion")).json()
    assert (status["indexing_status"], status["indexed_count"], status["failed_count"]) == (
        "complete",
        1,
        0,
    )
    reported = await rows(
        runtime,
        "SELECT count(*) FROM outbox WHERE topic = :t AND payload->>'collection_name' = :n",
        t=DocumentFailed.TOPIC,
        n=name,
    )
    assert reported[0][0] == 0
    hits = (
        await admin.post(
            "/rag/search", json={"query": "can penguins fly", "collections": [name], "top_k": 5}
        )
    ).json()["results"]
    assert hits and all("Antarctica" not in h["content"] for h in hits)
    assert "cannot fly" in hits[0]["content"]


async def test_an_upload_with_replace_retires_the_earlier_one_and_search_never_empties(
    client: Client, runtime: Runtime
) -> None:
    """``replace=true`` on both upload routes: the new document is indexed first, then the
    earlier ones of its name in the base go (row, chunks, files); search finds one all along."""
    org = f"org-{uuid.uuid4().hex[:6]}"
    alice = client("alice", org, (VIEW, EDIT))
    kb = await create(alice, uniq("uprepl"), "org")
    name, kb_id = kb["collection_name"], kb["id"]
    media = runtime.settings.storage.media_dir

    async def upload(text_: str, url: str) -> str:
        r = await alice.post(url, files={"file": ("notes.md", text_.encode())})
        assert r.status_code == 202, r.text
        return str(r.json()["tracking_id"])

    await upload("# Birds\n\nPenguins live in Antarctica.\n", f"/kb/{kb_id}/documents")
    await wait_complete(alice, kb_id)
    (old,) = await documents(runtime, kb_id)
    (old_file,) = await rows(
        runtime, "SELECT storage_path FROM rag_documents WHERE id = :i", i=old.id
    )

    seen: list[int] = []
    stop = asyncio.Event()

    async def keep_searching() -> None:
        while not stop.is_set():
            r = await alice.post(
                "/rag/search", json={"query": "penguins", "collections": [name], "top_k": 5}
            )
            assert r.status_code == 200, r.text
            seen.append(len(r.json()["results"]))
            await asyncio.sleep(0.02)

    searching = asyncio.create_task(keep_searching())
    try:
        new_id = await upload(
            "# Birds\n\nPenguins cannot fly, they swim.\n",
            f"/rag/collections/{name}/ingest?replace=true",
        )

        async def replaced() -> Any:
            docs = await documents(runtime, kb_id)
            return docs[0] if len(docs) == 1 and str(docs[0].id) == new_id else None

        new = await eventually(replaced, "the replacement to retire the earlier upload")

        async def old_chunks_and_files_gone() -> bool:
            files_gone = not any((media / p).exists() for p in (old.parsed_path, old_file[0]))
            return files_gone and await chunk_sets(runtime, name) == {new.vector_document_id}

        await eventually(old_chunks_and_files_gone, "the earlier chunks and files to be deleted")
    finally:
        stop.set()
        await searching
    assert new.status == "done"
    assert seen and min(seen) > 0, seen  # never empty in between
    hits = (
        await alice.post("/rag/search", json={"query": "can penguins fly", "collections": [name]})
    ).json()["results"]
    assert hits and all("Antarctica" not in h["content"] for h in hits)

    # without replace a revised upload is a second document; the base route replaces both
    await upload("# Birds\n\nPenguins are birds.\n", f"/kb/{kb_id}/documents")
    await wait_complete(alice, kb_id)
    assert len(await documents(runtime, kb_id)) == 2
    last = await upload("# Birds\n\nPenguins eat fish.\n", f"/kb/{kb_id}/documents?replace=true")

    async def one_left() -> bool:
        docs = await documents(runtime, kb_id)
        return [str(d.id) for d in docs] == [last] and docs[0].status == "done"

    await eventually(one_left, "the base route's replacement")

    async def one_chunk_set() -> bool:
        (only,) = await documents(runtime, kb_id)
        return await chunk_sets(runtime, name) == {only.vector_document_id}

    await eventually(one_chunk_set, "one chunk set")


async def test_a_replace_that_is_not_a_boolean_is_refused_before_anything_is_stored(
    client: Client, runtime: Runtime
) -> None:
    alice = client("alice", f"org-{uuid.uuid4().hex[:6]}", (VIEW, EDIT))
    kb = await create(alice, uniq("badrepl"), "org")
    r = await alice.post(
        f"/kb/{kb['id']}/documents?replace=maybe", files={"file": ("a.md", b"# a\n")}
    )
    assert r.status_code == 422, r.text
    assert [f["field"] for f in r.json()["error"]["details"]["fields"]] == ["replace"]
    assert await documents(runtime, kb["id"]) == []
    media = runtime.settings.storage.media_dir
    assert not (media / "rag" / kb["collection_name"]).exists()
