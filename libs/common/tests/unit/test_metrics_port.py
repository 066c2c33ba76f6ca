"""``/metrics`` on a port of its own (``HTTP__METRICS_PORT``, which the chart sets): the
public API port has no ``/metrics``, and the metrics port serves the exposition and nothing
else, so the counters reach only the scraper the network policy admits there. Unset,
``/metrics`` stays on the API port (``docproc dev``, one process). No database is reached:
the process's background loops retry against an address that refuses."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from docproc_common.runtime import Runtime, ServiceSpec, serve
from docproc_common.settings import BusMode, DatabaseSettings, Settings
from docproc_testing.infra import free_port
from pydantic import ValidationError

UNREACHABLE = DatabaseSettings(url="postgresql+asyncpg://u:p@127.0.0.1:1/db")
#: a series the stage's bus metrics export (``BusMetrics``), whoever else is registered
SERIES = "docproc_teardown_outbox_backlog"


def settings(**http: Any) -> Settings:
    return Settings(
        database=UNREACHABLE, bus={"mode": BusMode.EMBEDDED}, http={"host": "127.0.0.1", **http}
    )


async def get(port: int, path: str) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        for _ in range(100):
            try:
                return await client.get(f"http://127.0.0.1:{port}{path}")
            except httpx.TransportError:
                await asyncio.sleep(0.1)
    raise TimeoutError(f"nothing answers on port {port}")


@asynccontextmanager
async def serving(settings: Settings) -> AsyncIterator[None]:
    runtime = Runtime.create(settings)
    stop = asyncio.Event()
    task = asyncio.create_task(serve(runtime, [ServiceSpec("teardown")], stop=stop))
    try:
        yield
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)
        await runtime.close()


async def test_a_metrics_port_takes_metrics_off_the_api_port() -> None:
    api, metrics = free_port(), free_port()
    async with serving(settings(port=api, metrics_port=metrics)):
        exposition = await get(metrics, "/metrics")
        assert exposition.status_code == 200
        assert exposition.headers["content-type"].startswith("text/plain")
        assert f"# TYPE {SERIES} gauge" in exposition.text
        assert (await get(api, "/metrics")).status_code == 404
        assert (await get(api, "/healthz")).status_code == 200  # the probes stay
        # the metrics port serves nothing else
        assert (await get(metrics, "/healthz")).status_code == 404
        assert (await get(metrics, "/")).status_code == 404


async def test_without_one_metrics_stay_on_the_api_port() -> None:
    api = free_port()
    async with serving(settings(port=api)):
        exposition = await get(api, "/metrics")
        assert exposition.status_code == 200
        assert f"# TYPE {SERIES} gauge" in exposition.text


def test_the_metrics_port_is_not_the_api_port() -> None:
    with pytest.raises(ValidationError, match="HTTP__METRICS_PORT must differ from HTTP__PORT"):
        settings(port=8000, metrics_port=8000)
