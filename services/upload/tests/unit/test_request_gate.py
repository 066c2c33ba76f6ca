"""Who is calling is known before a JSON body is read, and a JSON body is read only up to
``LIMITS__MAX_JSON_BODY_BYTES`` (``docproc_upload.routes.PublicRoute``): an unauthenticated
16 MiB body used to be received and parsed (the server's memory grew by 253 MiB) before
the 401. The API is driven at the ASGI level, so what it received is counted exactly; no
database is reached (every refusal comes before one)."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from docproc_common.auth import EDIT, VIEW, mint_token
from docproc_common.runtime import Runtime, build_app
from docproc_common.settings import DatabaseSettings, Settings
from docproc_testing.auth import DEV_AUTH
from docproc_upload.app import build
from docproc_upload.deps import caller
from docproc_upload.routes import PublicRoute, depends_on
from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute

MiB = 1 << 20
TOKEN = mint_token(DEV_AUTH, user_id="alice", organization_id="acme", permissions=[VIEW, EDIT])


@pytest.fixture(scope="module")
async def app() -> AsyncIterator[FastAPI]:
    # building the service opens no connection; the URL only has to parse
    settings = Settings(database=DatabaseSettings(url="postgresql+asyncpg://u:p@127.0.0.1:1/db"))
    runtime = Runtime.create(settings)
    spec = build(runtime)
    try:
        yield build_app(runtime, [spec], [], "gate-test")
    finally:
        for close in spec.on_shutdown:
            await close()
        await runtime.close()


class Answer:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.body_bytes_read = 0

    @property
    def status(self) -> int:
        return int(self.messages[0]["status"])

    def json(self) -> Any:
        return json.loads(b"".join(m.get("body", b"") for m in self.messages[1:]))


async def call(
    app: FastAPI,
    path: str,
    chunks: list[bytes],
    *,
    token: str | None = TOKEN,
    declare_length: bool = True,
    method: str = "POST",
    content_type: bytes = b"application/json",
) -> Answer:
    """``method path`` with a body sent in ``chunks``, as a server hands it over."""
    answer = Answer()
    headers = [(b"host", b"127.0.0.1"), (b"content-type", content_type)]
    if declare_length:
        headers.append((b"content-length", str(sum(map(len, chunks))).encode()))
    else:
        headers.append((b"transfer-encoding", b"chunked"))
    if token:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    pending = list(chunks)

    async def receive() -> dict[str, Any]:
        if not pending:
            return {"type": "http.disconnect"}
        body = pending.pop(0)
        answer.body_bytes_read += len(body)
        return {"type": "http.request", "body": body, "more_body": bool(pending)}

    async def send(message: dict[str, Any]) -> None:
        answer.messages.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    await app(scope, receive, send)
    return answer


def json_of_size(size: int) -> list[bytes]:
    """A JSON object of ``size`` bytes, in 64 KiB chunks."""
    body = b'{"name": "' + b"a" * (size - 12) + b'"}'
    return [body[i : i + 65536] for i in range(0, len(body), 65536)]


async def test_an_unauthenticated_body_is_refused_unread(app: FastAPI) -> None:
    for token in (None, "not-a-token"):
        r = await call(app, "/api/v1/kb", json_of_size(16 * MiB), token=token)
        assert r.status == 401, r.json()
        assert r.json()["error"]["code"] == "UNAUTHORIZED"
        assert r.body_bytes_read == 0


@pytest.mark.parametrize("declare_length", [True, False], ids=["declared", "chunked"])
async def test_a_json_body_past_the_cap_is_413(app: FastAPI, declare_length: bool) -> None:
    r = await call(app, "/api/v1/kb", json_of_size(2 * MiB), declare_length=declare_length)
    assert r.status == 413, r.json()
    assert "LIMITS__MAX_JSON_BODY_BYTES" in r.json()["error"]["message"]
    assert r.body_bytes_read <= (0 if declare_length else MiB + 65536)


async def test_every_search_filter_list_is_capped(app: FastAPI) -> None:
    search = {"query": "otters", "collections": ["c"]}
    for filters, field in [
        ({"source": ["upload"] * 101}, "filters.source"),
        ({"document_type": ["pdf"] * 101}, "filters.document_type"),
        ({"organizational_unit": ["u" * 201]}, "filters.organizational_unit.0"),
    ]:
        body = json.dumps({**search, "filters": filters}).encode()
        r = await call(app, "/api/v1/rag/search", [body])
        assert r.status == 422, r.json()
        assert [f["field"] for f in r.json()["error"]["details"]["fields"]] == [field]


def routes(found: list[BaseRoute]) -> list[BaseRoute]:
    """Every route, those of included routers too (FastAPI keeps an included router whole)."""
    out: list[BaseRoute] = []
    for route in found:
        included = getattr(route, "original_router", None)
        out += routes(included.routes) if included is not None else [route]
    return out


def test_every_public_route_is_gated(app: FastAPI) -> None:
    public = [
        r for r in routes(app.routes) if isinstance(r, APIRoute) and r.path.startswith("/api/v1/")
    ]
    assert len(public) > 40
    assert [r.path for r in public if not isinstance(r, PublicRoute)] == []


def written(route: APIRoute) -> list[tuple[str, str]]:
    """(method, path) of each way ``route`` takes a body, its path parameters filled in
    (``{kb_id}``, ``{evaluation_id:uuid}``)."""
    path = re.sub(
        r"\{(\w+)(?::\w+)?\}",
        lambda m: str(uuid.uuid4()) if m.group(1).endswith("id") else "c",
        route.path,
    )
    return [(m, path) for m in sorted(route.methods) if m in {"POST", "PUT", "PATCH"}]


async def test_no_route_reads_a_body_before_the_caller_is_known(app: FastAPI) -> None:
    """Every route that takes a body and a caller, a JSON one or an upload streaming its
    multipart (``/kb/{id}/documents``, ``/rag/collections/{name}/ingest``,
    ``/files/upload``), answers an unauthenticated request 401 having read none of it."""
    gated = [
        (method, path, route.body_field is not None)
        for route in routes(app.routes)
        if isinstance(route, APIRoute) and depends_on(route.dependant, caller)
        for method, path in written(route)
    ]
    assert sum(1 for *_, json_body in gated if not json_body) >= 3  # the uploads
    body = [b"--x\r\n" + b"a" * (4 * MiB)]
    for method, path, json_body in gated:
        content_type = b"application/json" if json_body else b"multipart/form-data; boundary=x"
        r = await call(app, path, body, token=None, method=method, content_type=content_type)
        assert (r.status, r.body_bytes_read) == (401, 0), (method, path, r.json())
