"""Async engine and session factory.

One process owns one pooled engine, built at start-up from the settings and
passed to whatever needs it. Every connection gets pgvector's asyncpg codec so
vectors travel in binary (COPY included).
"""

from __future__ import annotations

from typing import Any

from pgvector.asyncpg import register_vector
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from docproc_common.settings import DatabaseSettings


class SchemaBehind(RuntimeError):
    """The database's schema is not at this code's Alembic head (the migration Job has not run)."""


def create_engine(settings: DatabaseSettings, *, url: str | None = None) -> AsyncEngine:
    engine = create_async_engine(
        url or settings.url,
        pool_size=settings.pool_size,
        max_overflow=settings.max_overflow,
        pool_pre_ping=True,
        echo=settings.echo,
    )

    @event.listens_for(engine.sync_engine, "connect")
    def _register_vector(dbapi_connection: Any, _record: Any) -> None:
        try:
            dbapi_connection.run_async(register_vector)
        except ValueError as exc:  # asyncpg: "unknown type: public.vector"
            raise SchemaBehind(
                "the vector extension is not in this database yet: run the migration"
            ) from exc

    return engine


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


async def driver_connection(session: AsyncSession) -> Any:
    """The asyncpg connection under ``session``, inside the session's transaction."""
    conn = await session.connection()
    raw = await conn.get_raw_connection()
    return raw.driver_connection


async def backlog(session: AsyncSession, table: str, where: str = "") -> tuple[int, float]:
    """A queue table's depth and lag: its rows (those matching ``where``) and the age in
    seconds of the oldest by ``created_at``, for metrics and alerts."""
    sql = f"SELECT count(*), COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0) FROM {table}"
    row = (await session.execute(text(f"{sql} WHERE {where}" if where else sql))).one()
    return int(row[0]), float(row[1])
