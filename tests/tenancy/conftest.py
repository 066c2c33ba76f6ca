"""The whole API in-process on the embedded bus, on a fresh database of the test Postgres."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from docproc_cli.embedded import BUILDERS
from docproc_common.runtime import Runtime, build_app, serve
from docproc_common.settings import BusMode
from docproc_testing.runtime import api_client, fresh_runtime

Client = Callable[..., httpx.AsyncClient]


@pytest.fixture(scope="module")
async def runtime(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Runtime]:
    bus = {"mode": BusMode.EMBEDDED, "relay_interval_s": 0.05}
    async with fresh_runtime(tmp_path_factory.mktemp("media"), bus=bus) as rt:
        yield rt


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
        return api_client(app, user, org, perms, admin=admin, timeout=120)

    return make
