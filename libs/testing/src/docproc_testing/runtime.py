"""A ``Runtime`` on a fresh, migrated database of the test Postgres, for in-process tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from docproc_common.runtime import Runtime
from docproc_common.settings import Settings, StorageSettings

from docproc_testing.db import create_test_database
from docproc_testing.infra import find_repo_root, load_infra_env


@asynccontextmanager
async def fresh_runtime(
    media_dir: Path, *, embedder: dict[str, Any] | None = None, **settings: Any
) -> AsyncIterator[Runtime]:
    """Files under ``media_dir``; the local model from the repository's cache (nothing is
    downloaded); ``embedder`` and any other settings section as keyword arguments."""
    infra = load_infra_env(("postgres",))
    runtime = Runtime.create(
        Settings(
            database={"url": await create_test_database(infra["DATABASE__URL"])},
            storage=StorageSettings(media_dir=media_dir),
            embedder={
                "model_cache_dir": find_repo_root() / ".cache" / "models",
                **(embedder or {}),
            },
            **settings,
        )
    )
    try:
        yield runtime
    finally:
        await runtime.close()
