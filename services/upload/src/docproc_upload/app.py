"""The upload service as a ``ServiceSpec``: the public API, its MCP server (``/mcp``), the
request-size cap, the stuck gauge, the scheduled evaluation runs."""

from __future__ import annotations

import logging
from typing import Any

from docproc_common.errors import PayloadTooLarge
from docproc_common.periodic import Task, periodic
from docproc_common.runtime import Runtime, ServiceSpec
from fastapi import APIRouter, Depends

from docproc_upload.accounts.endpoints import router as accounts
from docproc_upload.asgi import send_error
from docproc_upload.chat.endpoints import router as chat
from docproc_upload.console import build_console_router, dev_sign_in_guard
from docproc_upload.credentials.endpoints import router as credentials
from docproc_upload.deps import Upload, UploadScope
from docproc_upload.embeddings.endpoints import router as embeddings
from docproc_upload.evaluations.endpoints import router as evaluations
from docproc_upload.evaluations.schedule import scheduled_runs
from docproc_upload.inputs import declare_no_nul, refuse_nul
from docproc_upload.knowledge_bases.endpoints import router as knowledge_bases
from docproc_upload.mcp_server.endpoints import McpEndpoint, mcp_router
from docproc_upload.metrics import REJECTIONS, STUCK
from docproc_upload.openapi import ERRORS, operation_id, operation_ids
from docproc_upload.rag_collections.endpoints import router as rag_collections
from docproc_upload.rag_documents import repository as documents
from docproc_upload.rag_documents.endpoints import router as rag_documents
from docproc_upload.search.endpoints import router as search
from docproc_upload.sync_sources.endpoints import router as sync_sources
from docproc_upload.vision_profiles.endpoints import router as vision_profiles

log = logging.getLogger(__name__)

NAME = "upload"


class BodySizeLimit:
    """ASGI middleware: refuse a request body above the cap early with 413, counting what streams in."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send)
            return
        received = 0

        async def limited_receive() -> Any:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise PayloadTooLarge("The request body is too large")
            return message

        try:
            await self.app(scope, limited_receive, send)
        except PayloadTooLarge:
            await self._refuse(send)

    async def _refuse(self, send: Any) -> None:
        REJECTIONS.labels("request_too_large").inc()
        await send_error(send, PayloadTooLarge("The request body is too large"))


def stuck_gauge(runtime: Runtime) -> Task:
    async def count() -> None:
        async with runtime.sessionmaker() as session:
            STUCK.set(await documents.count_stuck(session, runtime.settings.stuck_after_minutes))

    return periodic("counting stuck documents", count, 30, log)


def public_api(routers: list[APIRouter]) -> APIRouter:
    """Every route of the public API, none of which takes a NUL character (``refuse_nul``),
    each documenting the error answers (``openapi.ERRORS``) under its stable operation id."""
    api = APIRouter()
    for router in routers:
        api.include_router(
            router,
            dependencies=[Depends(refuse_nul)],
            responses=ERRORS,
            generate_unique_id_function=operation_id,
        )
    return api


def build(runtime: Runtime) -> ServiceSpec:
    service = Upload.create(runtime)
    mcp = McpEndpoint(service)
    routers = [
        knowledge_bases,
        rag_documents,
        rag_collections,
        search,
        evaluations,
        accounts,
        chat,
        credentials,
        embeddings,
        sync_sources,
        vision_profiles,
    ]
    return ServiceSpec(
        name=NAME,
        keys=frozenset({"auth", "vault"}),  # every request's token; secrets and embedding keys
        routers=[public_api(routers), mcp_router(mcp), build_console_router(runtime)],
        openapi=[declare_no_nul(operation_ids(routers))],
        tasks=[
            stuck_gauge(runtime),
            *scheduled_runs(runtime, service.clients, service.plans),
        ],
        middleware=[
            (UploadScope, {"upload": service}),
            (BodySizeLimit, {"max_bytes": runtime.settings.limits.max_request_bytes}),
            *dev_sign_in_guard(runtime.settings),  # outermost: before a byte is read
        ],
        on_shutdown=[mcp.close, service.close],
    )
