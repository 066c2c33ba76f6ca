"""Knowledge-base intake through database and storage faults (issue #14, F4 and F5 at the API).

The upload service's routers in-process on a fresh database reached through a TCP proxy
(``docproc_testing.proxies.TcpFaultProxy``), storing in moto S3 through an HTTP proxy that
answers a share of the requests 503 SlowDown / 500 (``S3FaultProxy``).

- F4: the connection reset before the COMMIT reaches Postgres, the backend terminated
  (``pg_terminate_backend``) with the row's transaction open: 503 with ``Retry-After``,
  no row, no event, no stored object. The connection reset *after* the COMMIT was sent
  (the outcome unknown to the service): the document was committed, so the upload is
  answered 202 with that one document and its object kept, never a row without its file
  nor a second row.
- F5: 30% of S3 requests failing are absorbed by the retries (every upload 202, every row
  names a stored object); 100% failing: 503 with ``Retry-After``, no row, no event, and no
  multipart upload left open.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from docproc_common.auth import EDIT, VIEW, mint_token
from docproc_common.runtime import Runtime, build_app
from docproc_common.settings import Settings
from docproc_common.storage import S3Storage
from docproc_testing.auth import DEV_AUTH
from docproc_testing.db import create_test_database, fetch, plain_dsn
from docproc_testing.proxies import S3FaultProxy, TcpFaultProxy
from docproc_testing.runtime import LOCAL_MODEL
from docproc_upload.app import build

pytestmark = pytest.mark.integration

#: COMMITs an upload sends before the one of its row (the checks' read transaction)
ROW_COMMIT = 1


@dataclass
class Rig:
    runtime: Runtime
    client: httpx.AsyncClient
    database_url: str  # direct, not through the proxy
    pg: TcpFaultProxy
    s3: S3FaultProxy
    kb: dict[str, Any]

    async def sql(self, query: str, *args: Any) -> list[asyncpg.Record]:
        return await fetch(self.database_url, query, *args)

    async def upload(self, name: str) -> httpx.Response:
        return await self.client.post(
            f"/kb/{self.kb['id']}/documents", files={"file": (name, b"some text\n", "text/plain")}
        )

    def stored(self) -> set[str]:
        storage = self.runtime.storage.sync
        assert isinstance(storage, S3Storage)
        listed = storage.client.get_paginator("list_objects_v2").paginate(
            Bucket=storage.bucket, Prefix=f"{storage.prefix}/"
        )
        cut = len(storage.prefix) + 1
        return {o["Key"][cut:] for page in listed for o in page.get("Contents", [])}

    def open_multipart_uploads(self) -> list[Any]:
        storage = self.runtime.storage.sync
        assert isinstance(storage, S3Storage)
        answer = storage.client.list_multipart_uploads(
            Bucket=storage.bucket, Prefix=f"{storage.prefix}/"
        )
        return list(answer.get("Uploads", []))

    async def documents(self) -> dict[str, str | None]:
        rows = await self.sql(
            "SELECT filename, storage_path FROM rag_documents WHERE knowledge_base_id = $1",
            uuid.UUID(self.kb["id"]),
        )
        return {r["filename"]: r["storage_path"] for r in rows}

    async def events(self) -> int:
        return int((await self.sql("SELECT count(*) AS n FROM outbox"))[0]["n"])

    async def terminate_writers(self) -> None:
        """``pg_terminate_backend`` of this database's connections inside a transaction."""
        name = self.database_url.rsplit("/", 1)[1]
        await self.sql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = $1 AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()",
            name,
        )


@pytest.fixture(scope="module")
async def rig(
    infra: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Rig]:
    database_url = await create_test_database(infra["DATABASE__URL"])
    direct = httpx.URL(plain_dsn(database_url))
    assert direct.host and direct.port
    pg = TcpFaultProxy(direct.host, direct.port)
    s3 = S3FaultProxy(infra["STORAGE__S3_ENDPOINT_URL"], seed=14)
    settings = Settings(
        database={"url": database_url.replace(f":{direct.port}/", f":{pg.port}/")},
        storage={
            "backend": "s3",
            "s3_endpoint_url": s3.endpoint_url,
            "s3_bucket": infra["STORAGE__S3_BUCKET"],
            "s3_prefix": f"faults-{uuid.uuid4().hex[:8]}",
            "media_dir": Path(tmp_path_factory.mktemp("media")),
        },
    )
    runtime = Runtime.create(settings)
    app = build_app(runtime, [build(runtime)], [], "docproc-test")
    token = mint_token(DEV_AUTH, user_id="alice", organization_id="acme", permissions=[VIEW, EDIT])
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app, raise_app_exceptions=False),
            base_url="http://127.0.0.1/api/v1",
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        ) as client:
            r = await client.post(
                "/kb", json={"name": f"faults {uuid.uuid4().hex[:6]}", **LOCAL_MODEL}
            )
            assert r.status_code == 201, r.text
            yield Rig(runtime, client, database_url, pg, s3, r.json())
    finally:
        await runtime.close()
        pg.close()
        s3.close()


@pytest.fixture(autouse=True)
def healed(rig: Rig) -> None:
    rig.pg.disarm()
    rig.s3.fail_ratio = 0.0


async def assert_refused_and_nothing_left(rig: Rig, r: httpx.Response, name: str) -> None:
    assert r.status_code == 503, r.text
    assert int(r.headers["Retry-After"]) >= 1
    assert r.json()["error"]["code"] == "UNAVAILABLE"
    assert name not in await rig.documents()
    assert not [k for k in rig.stored() if k.endswith(name)]


async def assert_consistent(rig: Rig) -> None:
    """I3 for this base: every row names a stored object; every object has its row."""
    docs = await rig.documents()
    stored = rig.stored()
    assert set(docs.values()) == stored
    assert rig.open_multipart_uploads() == []


@pytest.mark.parametrize("fault", ["reset_before_commit", "terminate_mid_write"])
async def test_f4_connection_lost_before_the_commit_answers_503_and_keeps_nothing(
    rig: Rig, fault: str
) -> None:
    name = f"{fault}.txt"
    events, matched = await rig.events(), rig.pg.matched
    if fault == "reset_before_commit":
        rig.pg.arm(b"COMMIT", "reset_before", skip=ROW_COMMIT)
    else:
        # the COMMIT held: its backend, idle in the open transaction, is terminated first
        rig.pg.arm(
            b"COMMIT",
            "call",
            on_match=lambda: asyncio.run(rig.terminate_writers()),
            skip=ROW_COMMIT,
        )
    r = await rig.upload(name)
    assert rig.pg.matched == matched + 1
    await assert_refused_and_nothing_left(rig, r, name)
    assert await rig.events() == events
    assert (await rig.upload(f"after-{name}")).status_code == 202  # the pool recovers
    await assert_consistent(rig)


async def test_f4_an_ambiguous_commit_that_landed_is_one_accepted_document(rig: Rig) -> None:
    events, matched = await rig.events(), rig.pg.matched
    rig.pg.arm(b"COMMIT", "reset_after", skip=ROW_COMMIT)
    r = await rig.upload("ambiguous.txt")
    assert rig.pg.matched == matched + 1
    assert r.status_code == 202, r.text
    docs = await rig.documents()
    assert r.json()["tracking_id"] in {
        str(row["id"]) for row in await rig.sql("SELECT id FROM rag_documents")
    }
    assert docs["ambiguous.txt"] in rig.stored()
    assert await rig.events() == events + 1
    await assert_consistent(rig)


async def test_f5_storage_errors_absorbed_then_refused(rig: Rig) -> None:
    rig.s3.fail_ratio = 0.3
    failed = rig.s3.failed
    for i in range(6):
        r = await rig.upload(f"flaky-{i}.txt")
        assert r.status_code == 202, r.text
    assert rig.s3.failed > failed  # the faults happened and the retries absorbed them
    await assert_consistent(rig)

    rig.s3.fail_ratio = 1.0
    events = await rig.events()
    for i in range(1):
        name = f"down-{i}.txt"
        r = await rig.upload(name)
        assert r.status_code == 503, r.text
        assert int(r.headers["Retry-After"]) >= 1
        assert name not in await rig.documents()
    assert await rig.events() == events
    rig.s3.fail_ratio = 0.0
    await assert_consistent(rig)
