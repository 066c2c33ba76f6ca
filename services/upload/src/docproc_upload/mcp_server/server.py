"""The MCP server of a process's ``Upload``: the tools of ``tools`` and, as resources, the
knowledge bases the caller can read, each answered for the caller of the HTTP request that
carried the message (``endpoints.McpEndpoint`` verified its bearer token)."""

from __future__ import annotations

import json
import uuid
from typing import Any

from docproc_common.auth import Principal
from docproc_common.errors import AppError, FieldError, NotFound, UnprocessableEntity
from docproc_common.http import answer_for
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListResourcesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    TextContent,
    TextResourceContents,
)
from mcp_types import Tool as McpTool
from pydantic import ValidationError

from docproc_upload.access import Access, list_reachable, resolve_kb
from docproc_upload.deps import Upload
from docproc_upload.mcp_server.tools import TOOLS, summary
from docproc_upload.rag_documents.service import list_documents

#: Where ``endpoints.McpEndpoint`` leaves the verified caller in the request's ``state``.
CALLER_KEY = "docproc_mcp_caller"
#: Where a tool error carries the API's error envelope, in the result's ``_meta``.
ERROR_META = "docproc/error"
#: The resource of a knowledge base: ``docproc://knowledge-bases/<id>``.
KB_URI = "docproc://knowledge-bases/"
#: The MCP specification's code for a resource that is not there.
RESOURCE_NOT_FOUND = -32002
#: Documents a knowledge base's resource lists (``GET /kb/{id}/documents``, first page).
RESOURCE_DOCUMENTS = 50

INSTRUCTIONS = (
    "docproc holds knowledge bases of parsed, indexed documents. list_knowledge_bases "
    "shows what you can read; search finds chunks and cites each one's document and "
    "chunk; read_document and get_chunk_context read around a hit; upload_text adds a "
    "note to a base you may edit."
)


def caller_of(ctx: ServerRequestContext[Any, Any]) -> Principal:
    """The caller the HTTP request of this message was verified as."""
    state = getattr(ctx.request, "scope", {}).get("state", {})
    principal = state.get(CALLER_KEY)
    if not isinstance(principal, Principal):  # only McpEndpoint serves this server
        raise MCPError(INVALID_PARAMS, "A bearer token is required")
    return principal


def _tool_list() -> list[McpTool]:
    return [
        McpTool(
            name=t.name,
            description=t.description,
            input_schema=t.arguments.model_json_schema(),
            output_schema=t.answer.model_json_schema(),
            annotations=t.hints(),
        )
        for t in TOOLS.values()
    ]


def refusal(error: AppError) -> CallToolResult:
    """A tool error: the envelope's message, and under ``_meta`` (``ERROR_META``) the
    envelope itself for a client that reads its code and fields. Not as structured content:
    a client checks that against the tool's output schema even on an error."""
    return CallToolResult(
        content=[TextContent(text=error.message)],
        is_error=True,
        _meta={ERROR_META: error.envelope()},
    )


def invalid_arguments(exc: ValidationError) -> UnprocessableEntity:
    """What a route answers for a body that does not validate, naming each field."""
    fields = [FieldError(".".join(str(p) for p in e["loc"]), e["msg"]) for e in exc.errors()]
    return UnprocessableEntity("The request is not valid", fields=fields)


def _kb_id(uri: str) -> uuid.UUID:
    try:
        if uri.startswith(KB_URI):
            return uuid.UUID(uri.removeprefix(KB_URI))
    except ValueError:
        pass
    raise MCPError(RESOURCE_NOT_FOUND, f"No resource {uri[:200]!r}", {"uri": uri[:200]})


def build_server(upload: Upload) -> Server[Any]:
    tool_list = _tool_list()
    schemas = {t.name: t.input_schema for t in tool_list}

    async def list_tools(
        _ctx: ServerRequestContext[Any, Any], _params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=tool_list)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        tool = TOOLS.get(params.name)
        if tool is None:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {params.name[:100]!r}")
        caller = caller_of(ctx)
        try:
            arguments = tool.arguments.model_validate(params.arguments or {})
            answer = await tool.call(upload, caller, arguments)
        except ValidationError as exc:
            return refusal(invalid_arguments(exc))
        except Exception as exc:  # noqa: BLE001 - answered as the routes answer it
            return refusal(answer_for(exc))
        data = answer.model_dump(mode="json")
        return CallToolResult(content=[TextContent(text=json.dumps(data))], structured_content=data)

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], _params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        caller = caller_of(ctx)
        async with upload.runtime.sessionmaker() as db:
            bases = [await summary(db, kb) for kb in await list_reachable(db, caller)]
        return ListResourcesResult(
            resources=[
                Resource(
                    uri=f"{KB_URI}{kb.id}",
                    name=kb.collection_name,
                    title=kb.name,
                    description=kb.description,
                    mime_type="application/json",
                )
                for kb in bases
            ]
        )

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        """The base (``GET /kb/{id}``, its status) and its newest documents (``GET
        /kb/{id}/documents``)."""
        caller = caller_of(ctx)
        kb_id = _kb_id(params.uri)
        try:
            async with upload.runtime.sessionmaker() as db:
                kb = await resolve_kb(db, caller, kb_id, Access.VIEW)
                base = await summary(db, kb)
                page = await list_documents(
                    db, caller, kb_id, limit=RESOURCE_DOCUMENTS, before=None
                )
        except Exception as exc:  # noqa: BLE001 - answered as the routes answer it
            error = answer_for(exc)
            code = (
                RESOURCE_NOT_FOUND
                if isinstance(error, NotFound)
                else INVALID_PARAMS
                if error.status_code < 500
                else INTERNAL_ERROR
            )
            raise MCPError(code, error.message, error.envelope()) from None
        body = {
            "knowledge_base": base.model_dump(mode="json"),
            "documents": page.model_dump(mode="json"),
        }
        return ReadResourceResult(
            contents=[
                TextResourceContents(
                    uri=params.uri, text=json.dumps(body), mime_type="application/json"
                )
            ]
        )

    return Server(
        "docproc",
        instructions=INSTRUCTIONS,
        get_tool_input_schema=schemas.get,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
