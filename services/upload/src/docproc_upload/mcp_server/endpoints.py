"""``/mcp``: the MCP server over Streamable HTTP, behind the bearer token of ``/api/v1``.

Stateless, answering each POST with JSON: any upload replica serves any message, so the
service scales as its routes do, and each message is answered for the caller its own
request's token names (never for whoever opened a session). A request without a valid
token is refused with a 401 before the MCP layer reads it (the API's envelope inside a
JSON-RPC error, ``refuse``); its body is
capped at ``LIMITS__MAX_JSON_BODY_BYTES`` like a route's JSON body.

The SDK's session manager runs a task group for the requests it serves: it is started by
the first request (so an app built without ``serve``, as tests build it, serves ``/mcp``
too) and stopped by ``close`` at shutdown.
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

from docproc_common.errors import Unauthorized
from fastapi import APIRouter
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError
from starlette.routing import Route

from docproc_upload.bearer import principal_from_header
from docproc_upload.deps import Upload
from docproc_upload.mcp_server.server import CALLER_KEY, build_server

PATH = "/mcp"


async def refuse(send: Any, error: Unauthorized) -> None:
    """The 401 of ``/api/v1``, its envelope as the ``data`` of a JSON-RPC error: the form an
    MCP client reads a refused request's reason from (a bare envelope it reports only as
    "an error response")."""
    body = JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=ErrorData(code=INVALID_REQUEST, message=error.message, data=error.envelope()),
    )
    payload = body.model_dump_json(by_alias=True, exclude_unset=True).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
        (b"www-authenticate", b"Bearer"),
    ]
    await send({"type": "http.response.start", "status": error.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


class McpEndpoint:
    """The ASGI app at ``/mcp``."""

    def __init__(self, upload: Upload) -> None:
        self.settings = upload.runtime.settings
        self.manager = StreamableHTTPSessionManager(
            build_server(upload),
            json_response=True,
            stateless=True,
            max_request_body_size=self.settings.limits.max_json_body_bytes,
        )
        self._running: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        authorization = dict(scope.get("headers") or []).get(b"authorization")
        try:
            caller = principal_from_header(
                self.settings.auth, authorization.decode("latin-1") if authorization else None
            )
        except Unauthorized as exc:
            await refuse(send, exc)
            return
        scope.setdefault("state", {})[CALLER_KEY] = caller
        await self._started()
        await self.manager.handle_request(scope, receive, send)

    async def _started(self) -> None:
        if self._running is None:  # no await since the check: one first request starts it
            # a context of its own: the task outlives the request that happened to start it
            self._running = asyncio.create_task(self._run(), context=contextvars.Context())
        if not self._ready.is_set():
            ready = asyncio.create_task(self._ready.wait())
            await asyncio.wait({ready, self._running}, return_when=asyncio.FIRST_COMPLETED)
            ready.cancel()
            if self._running.done():  # it could not start: say why, on every request
                self._running.result()
                raise RuntimeError("the MCP session manager stopped")

    async def _run(self) -> None:
        async with self.manager.run():
            self._ready.set()
            await self._stop.wait()

    async def close(self) -> None:
        self._stop.set()
        if self._running is not None:
            await self._running


def mcp_router(endpoint: McpEndpoint) -> APIRouter:
    """``/mcp``, every method (the transport answers those it does not take)."""
    router = APIRouter(include_in_schema=False)
    router.routes.append(Route(PATH, endpoint, include_in_schema=False))
    return router
