"""A ``Runtime`` on a fresh, migrated database of the test Postgres, for in-process tests,
and a client that calls an app built on it in-process with a minted token."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from docproc_common.auth import mint_token
from docproc_common.runtime import Runtime
from docproc_common.settings import Settings, StorageSettings

from docproc_testing.auth import DEV_AUTH
from docproc_testing.db import create_test_database
from docproc_testing.infra import find_repo_root, load_infra_env

#: A knowledge base's embedding fields for the bundled local model (no provider, no key).
LOCAL_MODEL = {
    "embedding_provider": "local",
    "embedding_model": "sentence-transformers/all-MiniLM-L6-v2",
}


@asynccontextmanager
async def fresh_runtime(
    media_dir: Path, *, embedder: dict[str, Any] | None = None, **settings: Any
) -> AsyncIterator[Runtime]:
    """Files under ``media_dir``; the local model from the repository's cache (nothing is
    downloaded); ``embedder`` and any other settings section as keyword arguments; ``ENV=dev``
    (the development keys) unless ``env`` is given."""
    infra = load_infra_env(("postgres",))
    runtime = Runtime.create(
        Settings(
            env=settings.pop("env", "dev"),
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


def api_client(
    app: Any,
    user: str,
    org: str | None = None,
    perms: tuple[str, ...] = (),
    *,
    admin: bool = False,
    timeout: float = 60,
) -> httpx.AsyncClient:
    """``app`` called in-process (ASGI) under ``/api/v1`` as ``user`` of ``org`` with
    ``perms`` (an app admin with ``admin``), by a token the default auth settings accept."""
    token = mint_token(
        DEV_AUTH, user_id=user, organization_id=org, permissions=list(perms), app_admin=admin
    )
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://127.0.0.1/api/v1",
        headers={"Authorization": f"Bearer {token}"},
        timeout=timeout,
    )
