"""A process on a database whose schema is behind its code: not ready, and quiet, until migrated."""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path

import asyncpg
import httpx
import pytest
from docproc_common.bus.delivery import Delivery, Subscription
from docproc_common.bus.outbox import enqueue
from docproc_common.db.migrate import upgrade_async
from docproc_common.events import CollectionDeleted
from docproc_common.runtime import Runtime, ServiceSpec, serve
from docproc_common.settings import BusMode, Settings, StorageSettings
from docproc_testing.db import create_test_database, plain_dsn
from docproc_testing.infra import free_port, load_infra_env

pytestmark = pytest.mark.integration


async def _readyz(port: int) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        for _ in range(100):
            try:
                return await client.get(f"http://127.0.0.1:{port}/readyz")
            except httpx.TransportError:
                await asyncio.sleep(0.1)
    raise TimeoutError("the HTTP server did not start")


def _runtime(url: str, media: Path, port: int) -> Runtime:
    return Runtime.create(
        Settings(
            database={"url": url},
            storage=StorageSettings(media_dir=media),
            bus={"mode": BusMode.EMBEDDED, "relay_interval_s": 0.01},
            http={"host": "127.0.0.1", "port": port},
        )
    )


async def test_a_database_without_the_vector_extension_is_a_schema_behind(
    tmp_path: Path,
) -> None:
    infra = load_infra_env(("postgres",))
    url = await create_test_database(infra["DATABASE__URL"], migrate=False)
    port = free_port()
    runtime = _runtime(url, tmp_path, port)
    stop = asyncio.Event()
    task = asyncio.create_task(serve(runtime, [], stop=stop))
    try:
        response = await _readyz(port)
        assert response.status_code == 503
        assert response.json()["failures"] == ["database: SchemaBehind", "schema: SchemaBehind"]
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)
        await runtime.close()


async def test_not_ready_until_migrated_and_the_failing_loops_log_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The platform's DBA created the extension; the migration Job has not run yet."""
    infra = load_infra_env(("postgres",))
    url = await create_test_database(infra["DATABASE__URL"], migrate=False)
    conn = await asyncpg.connect(plain_dsn(url))
    try:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    finally:
        await conn.close()
    port = free_port()
    runtime = _runtime(url, tmp_path, port)
    caplog.set_level(logging.INFO)
    handled: list[CollectionDeleted] = []

    async def handler(event: CollectionDeleted, _delivery: Delivery) -> None:
        handled.append(event)

    # the embedded bus delivers collections.deleted to the consumer named "teardown"
    stage = ServiceSpec("teardown", subscriptions=[Subscription(CollectionDeleted.TOPIC, handler)])
    stop = asyncio.Event()
    task = asyncio.create_task(serve(runtime, [stage], stop=stop))
    try:
        response = await _readyz(port)
        assert response.status_code == 503
        assert response.json()["failures"] == ["schema: SchemaBehind"]
        await asyncio.sleep(3)  # ~300 relay ticks at 10 ms, were it not backing off
        failing = [r for r in caplog.records if "failed (" in r.getMessage()]
        assert {r.getMessage().split(" failed")[0] for r in failing} == {
            "the outbox relay",
            "reading the outbox backlog",
            # the stage consumes nothing (and the process keeps running) until migrated
            "waiting for the schema (the migration Job) before consuming",
        }
        assert len(failing) == 3, [r.getMessage() for r in failing]
        assert not task.done()

        await upgrade_async(url)
        assert (await _readyz(port)).status_code == 200
        for _ in range(150):  # the relay's backed-off wait is at most 10 s
            if any("the outbox relay recovered" in r.getMessage() for r in caplog.records):
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the relay never logged its recovery")
        async with runtime.sessionmaker() as session, session.begin():
            await enqueue(session, CollectionDeleted(teardown_id=uuid.uuid4(), collection_name="x"))
        for _ in range(200):  # the stage starts consuming at most 10 s after the migration
            if handled:
                break
            await asyncio.sleep(0.1)
        assert [e.collection_name for e in handled] == ["x"]
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)
        await runtime.close()


async def test_a_newer_releases_schema_keeps_the_old_pods_ready(tmp_path: Path) -> None:
    """helm upgrade migrates first (pre-upgrade hook) while the old pods keep serving: a
    revision their code does not know is ahead, not behind; a known older one is behind."""
    infra = load_infra_env(("postgres",))
    url = await create_test_database(infra["DATABASE__URL"])  # at this code's head
    port = free_port()
    runtime = _runtime(url, tmp_path, port)
    stop = asyncio.Event()
    task = asyncio.create_task(serve(runtime, [], stop=stop))
    conn = await asyncpg.connect(plain_dsn(url))
    try:
        assert (await _readyz(port)).status_code == 200
        await conn.execute("UPDATE alembic_version SET version_num = 'ffff_next_release'")
        assert (await _readyz(port)).status_code == 200
        await conn.execute("UPDATE alembic_version SET version_num = '0001'")
        response = await _readyz(port)
        assert response.status_code == 503
        assert response.json()["failures"] == ["schema: SchemaBehind"]
    finally:
        await conn.close()
        stop.set()
        await asyncio.wait_for(task, 30)
        await runtime.close()
