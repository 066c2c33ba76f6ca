"""A fresh, migrated database per test run on the shared test server, so runs never see each other.

A migrated database is a copy of a template (``CREATE DATABASE ... TEMPLATE``, about a
tenth of a second) that the migrations built once per version of the migration scripts:
running them again took about 1.8 s a database, and the suite makes hundreds.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import docproc_common.migrations
from docproc_common.db.migrate import upgrade_async

#: Held while a template is built, so two test processes build it once between them.
_TEMPLATE_LOCK = 0x646F6370  # "docp"


def plain_dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


async def fetch(url: str, sql: str, *args: Any) -> list[asyncpg.Record]:
    """``sql``'s rows, read on a connection of its own to ``url`` (outside any app session)."""
    conn = await asyncpg.connect(plain_dsn(url))
    try:
        return list(await conn.fetch(sql, *args))
    finally:
        await conn.close()


def _migrations_digest() -> str:
    """What the migration scripts are: a changed or added script names a new template."""
    root = Path(next(iter(docproc_common.migrations.__path__)))
    digest = hashlib.sha256()
    for script in sorted(root.rglob("*.py")):
        digest.update(script.relative_to(root).as_posix().encode() + b"\0" + script.read_bytes())
    return digest.hexdigest()[:16]


async def _migrated_template(conn: asyncpg.Connection, admin_url: str) -> str:
    """The name of the database the current migrations built, building it when missing.

    Built under a temporary name and renamed when complete, under an advisory lock, so a
    template that exists is whole and two processes never build it at once.
    """
    template = f"docproc_template_{_migrations_digest()}"
    await conn.execute("SELECT pg_advisory_lock($1)", _TEMPLATE_LOCK)
    try:
        if not await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", template):
            building = f"{template}_{uuid.uuid4().hex[:6]}"
            await conn.execute(f"CREATE DATABASE {building}")
            await upgrade_async(f"{admin_url.rpartition('/')[0]}/{building}")
            await conn.execute(f"ALTER DATABASE {building} RENAME TO {template}")
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", _TEMPLATE_LOCK)
    return template


async def create_test_database(admin_url: str, *, migrate: bool = True) -> str:
    """Create ``docproc_t_<random>`` next to ``admin_url``'s database and return its URL:
    at the migrations' head (a copy of their template) unless ``migrate`` is false."""
    name = f"docproc_t_{uuid.uuid4().hex[:12]}"
    conn = await asyncpg.connect(plain_dsn(admin_url))
    try:
        template = await _migrated_template(conn, admin_url) if migrate else "template1"
        await conn.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
    finally:
        await conn.close()
    base, _, _ = admin_url.rpartition("/")
    return f"{base}/{name}"


def create_test_database_sync(admin_url: str, *, migrate: bool = True) -> str:
    return asyncio.run(create_test_database(admin_url, migrate=migrate))
