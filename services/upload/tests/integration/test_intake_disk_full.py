"""A knowledge-base upload onto a local store whose disk refuses the write mid-file (issue
#14, F12): 507, no row, no event, no partial file; the next upload, with room again, 202.

The upload service's routers in-process on a fresh database; the full disk is this
process's ``RLIMIT_FSIZE`` lowered for the one request (``docproc_testing.disk``).
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from docproc_common.auth import EDIT, VIEW
from docproc_common.runtime import Runtime, build_app
from docproc_testing.db import fetch
from docproc_testing.disk import file_size_limit
from docproc_testing.runtime import LOCAL_MODEL, api_client
from docproc_upload.app import build

pytestmark = pytest.mark.integration


async def count(runtime: Runtime, table: str) -> int:
    rows = await fetch(runtime.settings.database.url, f"SELECT count(*) FROM {table}")
    return int(rows[0][0])


async def test_f12_a_full_disk_answers_507_and_leaves_no_partial_file(runtime: Runtime) -> None:
    app = build_app(runtime, [build(runtime)], [], "docproc-test")
    async with api_client(app, "alice", perms=(VIEW, EDIT)) as client:
        r = await client.post("/kb", json={"name": f"disk {uuid.uuid4().hex[:6]}", **LOCAL_MODEL})
        assert r.status_code == 201, r.text
        kb = r.json()
        media = Path(runtime.settings.storage.media_dir)
        big = ("big.txt", b"words and more words\n" * 20_000, "text/plain")  # ~420 KB
        with file_size_limit(64 * 1024):
            r = await client.post(f"/kb/{kb['id']}/documents", files={"file": big})
        assert r.status_code == 507, r.text
        assert r.json()["error"]["code"] == "INSUFFICIENT_STORAGE"
        assert [p for p in media.rglob("*") if p.is_file()] == []
        assert await count(runtime, "rag_documents") == 0
        assert await count(runtime, "outbox") == 0

        r = await client.post(f"/kb/{kb['id']}/documents", files={"file": big})
        assert r.status_code == 202, r.text
        assert len([p for p in media.rglob("*") if p.is_file()]) == 1
