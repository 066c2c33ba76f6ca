"""A fresh, migrated database per test run on the shared test server, so runs never see each other."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import asyncpg
from docproc_common.db.migrate import upgrade_async


def plain_dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


async def fetch(url: str, sql: str, *args: Any) -> list[asyncpg.Record]:
    """``sql``'s rows, read on a connection of its own to ``url`` (outside any app session)."""
    conn = await asyncpg.connect(plain_dsn(url))
    try:
        return list(await conn.fetch(sql, *args))
    finally:
        await conn.close()


async def create_test_database(admin_url: str, *, migrate: bool = True) -> str:
    """Create ``docproc_t_<random>`` next to ``admin_url``'s database and return its URL."""
    name = f"docproc_t_{uuid.uuid4().hex[:12]}"
    conn = await asyncpg.connect(plain_dsn(admin_url))
    try:
        await conn.execute(f"CREATE DATABASE {name}")
    finally:
        await conn.close()
    base, _, _ = admin_url.rpartition("/")
    url = f"{base}/{name}"
    if migrate:
        await upgrade_async(url)
    return url


def create_test_database_sync(admin_url: str, *, migrate: bool = True) -> str:
    return asyncio.run(create_test_database(admin_url, migrate=migrate))
