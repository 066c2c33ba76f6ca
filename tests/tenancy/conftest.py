"""The whole API in-process on the embedded bus, on a fresh database of the test Postgres."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest
from docproc_cli.embedded import BUILDERS
from docproc_common.auth import mint_token
from docproc_common.runtime import Runtime, build_app, serve
from docproc_common.settings import AuthSettings, BusMode, Settings, StorageSettings
from docproc_common.testing.db import create_test_database
from docproc_common.testing.infra import find_repo_root, load_infra_env

Client = Callable[..., httpx.AsyncClient]


@pytest.fixture(scope="module")
async def runtime(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Runtime]:
    infra = load_infra_env(("postgres",))
    settings = Settings(
        database={"url": await create_test_database(infra["DATABASE__URL"])},
        bus={"mode": BusMode.EMBEDDED, "relay_interval_s": 0.05},
        storage=StorageSettings(media_dir=Path(tmp_path_factory.mktemp("media"))),
        embedder={"model_cache_dir": find_repo_root() / ".cache" / "models"},
    )
    rt = Runtime.create(settings)
    yield rt
    await rt.close()


@pytest.fixture(scope="module")
async def pipeline(runtime: Runtime) -> AsyncIterator[list[object]]:
    """All five services' consumers and tasks on the embedded bus (no HTTP server)."""
    specs = [build(runtime) for build in BUILDERS]
    stop = asyncio.Event()
    task = asyncio.create_task(serve(runtime, specs, stop=stop, http=False))
    yield list(specs)
    stop.set()
    await asyncio.wait_for(task, 60)


@pytest.fixture(scope="module")
def client(runtime: Runtime, pipeline: list[object]) -> Client:
    app = build_app(runtime, pipeline, [], "docproc-test")  # type: ignore[arg-type]

    def make(
        user: str, org: str | None = None, perms: tuple[str, ...] = (), admin: bool = False
    ) -> httpx.AsyncClient:
        token = mint_token(
            AuthSettings(),
            user_id=user,
            organization_id=org,
            permissions=list(perms),
            app_admin=admin,
        )
        return httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://docproc/api/v1",
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        )

    return make
