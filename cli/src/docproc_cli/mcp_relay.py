"""``docproc mcp``: a docproc deployment's MCP server on stdio, for a desktop agent.

A relay, not a second server: each request the agent sends over stdin goes to the
deployment's ``/mcp`` (Streamable HTTP) with the agent's bearer token, and the answer
comes back as the deployment gave it. The tools, the resources and every check (the
token, the reach table, the refusals, the audit) stay on the server.
"""

from __future__ import annotations

import contextlib
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    CallToolRequestParams,
    CallToolResult,
    ListResourcesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
)

#: How long one request to the deployment may take (a search embeds its query first).
TIMEOUT_S = 120.0


def endpoint(url: str) -> str:
    """The ``/mcp`` of the deployment at ``url`` (its base URL, or its ``/mcp`` already)."""
    base = url.rstrip("/")
    return base if base.endswith("/mcp") else f"{base}/mcp"


def reason(exc: BaseException) -> str:
    """What went wrong, from inside the exception groups the SDK's task groups raise."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return str(exc) or type(exc).__name__


class Unreachable(Exception):
    """The deployment could not be reached, or refused the token, at start."""


def relay_server(remote: Client, url: str) -> Server[Any]:
    """A stdio ``Server`` whose every answer is ``remote``'s."""

    async def forward(call: Any) -> Any:
        try:
            return await call
        except MCPError:
            raise
        except Exception as exc:  # the deployment went away: the agent sees why
            raise MCPError(
                INTERNAL_ERROR, f"docproc at {url} did not answer: {reason(exc)}"
            ) from exc

    async def list_tools(
        _ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        result: ListToolsResult = await forward(
            remote.list_tools(cursor=params.cursor if params else None)
        )
        return result

    async def call_tool(
        _ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        result: CallToolResult = await forward(remote.call_tool(params.name, params.arguments))
        return result

    async def list_resources(
        _ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        result: ListResourcesResult = await forward(
            remote.list_resources(cursor=params.cursor if params else None)
        )
        return result

    async def read_resource(
        _ctx: ServerRequestContext[Any, Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        result: ReadResourceResult = await forward(remote.read_resource(params.uri))
        return result

    return Server(
        "docproc",
        instructions=remote.instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


async def relay(url: str, token: str) -> None:
    """Serve stdio until the agent closes it, each request relayed to ``url``'s ``/mcp``
    (no answer kept: a base listed a minute ago may be gone or new)."""
    target = endpoint(url)
    async with contextlib.AsyncExitStack() as stack:
        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT_S)
        )
        try:
            remote = await stack.enter_async_context(
                Client(streamable_http_client(target, http_client=http), cache=None)
            )
        except Exception as exc:
            raise Unreachable(
                f"docproc at {target} refused or did not answer: {reason(exc)}"
            ) from exc
        server = relay_server(remote, target)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
