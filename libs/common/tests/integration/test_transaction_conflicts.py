"""A request whose transaction Postgres aborts on a real deadlock answers 503 with
``Retry-After`` (the request again is the remedy), never a 500: seen by schemathesis as a
``POST /kb/{id}/reindex`` (rows locked in id order) meeting a stage recording a failure."""

from __future__ import annotations

import asyncio

import asyncpg
import httpx
import pytest
from docproc_common.http import create_app
from docproc_testing.db import create_test_database, plain_dsn
from docproc_testing.infra import load_infra_env
from fastapi import APIRouter
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

pytestmark = pytest.mark.integration


@pytest.fixture
async def url() -> str:
    url = await create_test_database(load_infra_env(("postgres",))["DATABASE__URL"], migrate=False)
    conn = await asyncpg.connect(plain_dsn(url))
    try:
        await conn.execute(
            "CREATE TABLE things (id int PRIMARY KEY); INSERT INTO things VALUES (1), (2)"
        )
    finally:
        await conn.close()
    return url


async def test_a_deadlocked_request_answers_503_and_applies_nothing(url: str) -> None:
    engine: AsyncEngine = create_async_engine(url)
    other = await asyncpg.connect(plain_dsn(url))
    holds_two, waits_on_one = asyncio.Event(), asyncio.Event()
    router = APIRouter()

    @router.post("/things")
    async def lock_both() -> dict[str, str]:
        async with engine.begin() as conn:
            # this side detects the cycle (the other waits far longer before looking)
            await conn.execute(text("SET LOCAL deadlock_timeout = '50ms'"))
            await conn.execute(text("SELECT id FROM things WHERE id = 1 FOR UPDATE"))
            await conn.execute(text("UPDATE things SET id = 11 WHERE id = 1"))
            waits_on_one.set()
            await holds_two.wait()
            await asyncio.sleep(0.2)  # the other is waiting on row 1 by now
            await conn.execute(text("SELECT id FROM things WHERE id = 2 FOR UPDATE"))
        return {"status": "both"}

    async def the_other_order() -> None:
        async with other.transaction():
            await other.execute("SET LOCAL deadlock_timeout = '30s'")
            await other.execute("SELECT id FROM things WHERE id = 2 FOR UPDATE")
            await waits_on_one.wait()
            holds_two.set()
            await other.execute("SELECT id FROM things WHERE id = 1 FOR UPDATE")

    app = create_app(title="t", routers=[router])
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            response, _ = await asyncio.gather(client.post("/things"), the_other_order())
        assert response.status_code == 503, response.text
        assert response.headers["Retry-After"] == "1"
        assert response.json()["error"] == {
            "code": "UNAVAILABLE",
            "message": "The request met a concurrent change and was not applied; retry it",
            "details": {},
        }
        assert sorted(r["id"] for r in await other.fetch("SELECT id FROM things")) == [1, 2]
    finally:
        await other.close()
        await engine.dispose()
