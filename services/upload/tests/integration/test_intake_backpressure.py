"""Knowledge-base intake answers "busy" (503, ``Retry-After``) once a queue is at its bound.

The upload service's routers in-process on a fresh database with small bounds and no
sampling interval; no parser, embedder or relay runs, so what the uploads leave waiting
stays waiting until the test moves it on (as the stages would). A refused upload leaves
no row, no file and no event.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from docproc_common.runtime import Runtime
from docproc_common.settings import LimitSettings
from docproc_testing.db import fetch
from docproc_testing.runtime import LOCAL_MODEL, fresh_runtime

pytestmark = pytest.mark.integration

LIMITS = LimitSettings(
    intake_max_parse_queue=2,
    intake_max_embed_queue=2,
    intake_max_outbox_backlog=3,
    intake_retry_after_s=7,
    intake_sample_s=0,
)


@pytest.fixture(scope="module")
async def runtime(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Runtime]:
    async with fresh_runtime(tmp_path_factory.mktemp("media"), limits=LIMITS) as rt:
        yield rt


async def sql(runtime: Runtime, query: str) -> list[asyncpg.Record]:
    return await fetch(runtime.settings.database.url, query)


@pytest.fixture(autouse=True)
async def drained(runtime: Runtime) -> None:
    """Each test starts with every queue empty, whatever the module's tests ran before it
    (the order is shuffled): what an earlier test left waiting is moved on, as the stages
    would."""
    await sql(runtime, "UPDATE rag_documents SET status = 'done', parsed_path = 'p/x'")
    await sql(runtime, "UPDATE outbox SET published_at = now()")


def files(runtime: Runtime) -> list[Path]:
    return sorted(p for p in Path(runtime.settings.storage.media_dir).rglob("*") if p.is_file())


async def upload(client: httpx.AsyncClient, kb: dict[str, Any], name: str) -> httpx.Response:
    return await client.post(
        f"/kb/{kb['id']}/documents", files={"file": (name, b"some text\n", "text/plain")}
    )


async def test_each_full_queue_refuses_intake_with_retry_after_and_leaves_nothing(
    runtime: Runtime, alice: httpx.AsyncClient
) -> None:
    r = await alice.post("/kb", json={"name": f"busy {uuid.uuid4().hex[:6]}", **LOCAL_MODEL})
    assert r.status_code == 201, r.text
    kb = r.json()

    async def refused(queue: str) -> None:
        before = (await sql(runtime, "SELECT count(*) AS n FROM rag_documents"))[0]["n"]
        events = (await sql(runtime, "SELECT count(*) AS n FROM outbox"))[0]["n"]
        stored = files(runtime)
        r = await upload(alice, kb, "late.txt")
        assert r.status_code == 503, r.text
        assert r.headers["Retry-After"] == "7"
        error = r.json()["error"]
        assert error["code"] == "UNAVAILABLE"
        assert error["details"] == {"queue": queue}
        assert (await sql(runtime, "SELECT count(*) AS n FROM rag_documents"))[0]["n"] == before
        assert (await sql(runtime, "SELECT count(*) AS n FROM outbox"))[0]["n"] == events
        assert files(runtime) == stored

    for name in ("a.txt", "b.txt"):
        assert (await upload(alice, kb, name)).status_code == 202
    await refused("parse")  # two wait for the parser

    await sql(runtime, "UPDATE rag_documents SET parsed_path = 'p/a' WHERE filename = 'a.txt'")
    assert (await upload(alice, kb, "c.txt")).status_code == 202  # one parsed: room again
    await sql(runtime, "UPDATE rag_documents SET parsed_path = 'p/x' WHERE parsed_path IS NULL")
    await refused("embed")  # three wait for the embedder

    await sql(runtime, "UPDATE rag_documents SET status = 'done'")
    await refused("outbox")  # three events not yet published

    await sql(runtime, "UPDATE outbox SET published_at = now()")
    assert (await upload(alice, kb, "d.txt")).status_code == 202


async def test_the_rag_ingest_route_is_guarded_too(
    runtime: Runtime, alice: httpx.AsyncClient
) -> None:
    r = await alice.post("/kb", json={"name": f"busy {uuid.uuid4().hex[:6]}", **LOCAL_MODEL})
    kb = r.json()
    for name in ("e.txt", "f.txt"):
        assert (await upload(alice, kb, name)).status_code == 202
    r = await alice.post(
        f"/rag/collections/{kb['collection_name']}/ingest",
        files={"file": ("g.txt", b"more text\n", "text/plain")},
    )
    assert r.status_code == 503, r.text
    assert r.headers["Retry-After"] == "7"
