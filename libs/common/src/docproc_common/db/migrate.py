"""``python -m docproc_common.db.migrate``: bring the schema to head (the Helm hook Job runs this)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory

from docproc_common.settings import get_settings

_MIGRATIONS = Path(__file__).resolve().parents[1] / "migrations"


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def code_revisions() -> tuple[frozenset[str], frozenset[str]]:
    """This code's heads and every revision it knows (reads the migration scripts: call off
    the loop)."""
    script = ScriptDirectory.from_config(alembic_config(""))
    return frozenset(script.get_heads()), frozenset(r.revision for r in script.walk_revisions())


def upgrade(url: str) -> None:
    """Run in a worker thread: alembic's env.py owns its own event loop."""
    command.upgrade(alembic_config(url), "head")


async def upgrade_async(url: str) -> None:
    await asyncio.to_thread(upgrade, url)


def main() -> None:
    url = get_settings().database.url
    if not url:
        sys.exit("DATABASE__URL is not set")
    upgrade(url)


if __name__ == "__main__":
    main()
