"""Alembic environment: one history for every model table; runtime vector tables excluded."""

from __future__ import annotations

import asyncio
from typing import Any

from alembic import context
from docproc_common.db.models import Base
from docproc_common.db.vector_tables import is_vector_table
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

config = context.config


def include_name(name: str | None, type_: str, _parent: Any) -> bool:
    if type_ == "table" and name is not None:
        return not is_vector_table(name)
    return True


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        include_name=include_name,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _main() -> None:
    engine = create_async_engine(config.get_main_option("sqlalchemy.url") or "")
    async with engine.connect() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


asyncio.run(_main())
