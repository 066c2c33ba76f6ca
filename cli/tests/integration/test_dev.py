"""``docproc dev``: the five services in one process on the embedded bus, for real.

Also the trace: one upload is one trace, from the HTTP request through the
outbox to the parser's and the embedder's handlers.
"""

from __future__ import annotations

import asyncio
import socket
import uuid
from pathlib import Path

import httpx
import pytest
from docproc_cli.embedded import embedded_settings, run_dev
from docproc_common.auth import EDIT, VIEW, mint_token
from docproc_common.runtime import Runtime, build_app
from docproc_common.settings import Settings, StorageSettings
from docproc_testing.auth import DEV_AUTH
from docproc_testing.db import create_test_database
from docproc_testing.infra import find_repo_root, load_infra_env
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

pytestmark = pytest.mark.integration
EXPORTER = InMemorySpanExporter()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def tracing() -> InMemorySpanExporter:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
    trace.set_tracer_provider(provider)
    return EXPORTER


async def test_dev_ingests_and_searches_in_one_trace(
    tmp_path: Path, tracing: InMemorySpanExporter
) -> None:
    infra = load_infra_env(("postgres",))
    port = free_port()
    settings = Settings(
        database={"url": await create_test_database(infra["DATABASE__URL"])},
        storage=StorageSettings(media_dir=tmp_path / "media"),
        http={"port": port},
        embedder={"model_cache_dir": find_repo_root() / ".cache" / "models"},
    )
    settings = embedded_settings(settings)
    stop = asyncio.Event()
    server = asyncio.create_task(run_dev(settings, stop))
    token = mint_token(DEV_AUTH, user_id="root", permissions=[VIEW, EDIT], app_admin=True)
    api = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(
            base_url=api, headers={"Authorization": f"Bearer {token}"}, timeout=60
        ) as c:
            for _ in range(200):
                try:
                    if (await c.get("/readyz")).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.2)
            name = f"dev_{uuid.uuid4().hex[:8]}"
            kb = (
                await c.post(
                    "/api/v1/kb",
                    json={
                        "name": name,
                        "collection_name": name,
                        "scope": "app",
                        "embedding_provider": "local",
                        "embedding_model": "sentence-transformers/all-MiniLM-L6-v2",
                    },
                )
            ).json()
            tracing.clear()
            accepted = await c.post(
                f"/api/v1/kb/{kb['id']}/documents",
                files={
                    "file": ("otters.md", b"# Otters\n\nSea otters hold hands while they sleep.")
                },
            )
            assert accepted.status_code == 202
            for _ in range(300):
                state = (await c.get(f"/api/v1/kb/{kb['id']}/ingestion")).json()
                if state["indexing_status"] == "complete":
                    break
                await asyncio.sleep(0.2)
            assert state["indexed_count"] == 1
            hits = (
                await c.post(
                    "/api/v1/rag/search", json={"query": "sleeping otters", "collections": [name]}
                )
            ).json()["results"]
            assert "hold hands" in hits[0]["content"]
    finally:
        stop.set()
        await asyncio.wait_for(server, 60)

    spans = tracing.get_finished_spans()
    request = next(s for s in spans if s.kind == trace.SpanKind.SERVER and "documents" in s.name)
    parser = next(s for s in spans if s.name == "docproc.documents.accepted.v1 process")
    embedder = next(s for s in spans if s.name == "docproc.documents.parsed.v1 process")
    assert (
        request.context is not None and parser.context is not None and embedder.context is not None
    )
    assert parser.context.trace_id == request.context.trace_id == embedder.context.trace_id
    assert parser.parent is not None and parser.parent.span_id == request.context.span_id
    assert embedder.parent is not None and embedder.parent.span_id == parser.context.span_id


async def test_readyz_is_503_when_the_database_is_unreachable(tmp_path: Path) -> None:
    settings = Settings(
        database={"url": "postgresql+asyncpg://nobody@127.0.0.1:1/none"},
        storage=StorageSettings(media_dir=tmp_path),
    )
    runtime = Runtime.create(settings)
    try:
        app = build_app(runtime, [], [], "t")
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
        ) as c:
            assert (await c.get("/healthz")).status_code == 200
            ready = await c.get("/readyz")
            assert ready.status_code == 503
            assert ready.json()["failures"][0].startswith("database")
    finally:
        await runtime.close()
