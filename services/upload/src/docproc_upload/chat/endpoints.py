"""The chat-attachment API under ``/api/v1``: thin handlers over ``ChatFiles``.

No ``from __future__ import annotations`` here: FastAPI must see the closure-local
dependency aliases as objects, not strings.
"""

import uuid
from typing import Annotated

from docproc_common.auth import Principal, principal_from_header
from docproc_common.errors import PayloadTooLarge
from fastapi import APIRouter, Depends, Header, Query, Request, Response, status

from docproc_upload.chat.schemas import (
    AttachOut,
    AttachRequest,
    ChatFileInfo,
    ChatFileOut,
    MessageAttachmentsOut,
    RenderOut,
    RenderRequest,
)
from docproc_upload.chat.service import MAX_UNIT_CHARS, ChatFiles, MiB
from docproc_upload.downloads import download_headers
from docproc_upload.metrics import REJECTIONS
from docproc_upload.multipart import multipart_openapi, read_upload_form

ERRORS = {
    400: {"description": "Invalid input (error envelope; details.rule names the refusing check)"},
    401: {"description": "Missing or invalid bearer token"},
    404: {"description": "File not found (also when it belongs to someone else)"},
    413: {"description": "The file (or the whole request body) is too large"},
    503: {"description": "Too many files are being parsed right now; try again"},
}

_UPLOAD_BODY = multipart_openapi(
    {"organizational_unit": {"type": "string", "maxLength": MAX_UNIT_CHARS}}
)
CHAT_TEXT_FIELDS = frozenset({"organizational_unit"})


def build_router(chat: ChatFiles) -> APIRouter:
    router = APIRouter(prefix="/api/v1", tags=["chat files"], responses=ERRORS)  # type: ignore[arg-type]
    settings = chat.runtime.settings

    async def principal(authorization: Annotated[str | None, Header()] = None) -> Principal:
        return principal_from_header(settings.auth, authorization)

    Caller = Annotated[Principal, Depends(principal)]

    @router.post(
        "/files/upload",
        status_code=status.HTTP_201_CREATED,
        response_model=ChatFileOut,
        openapi_extra=_UPLOAD_BODY,
    )
    async def upload(request: Request, caller: Caller) -> ChatFileOut:
        """Upload one chat attachment (multipart ``file``, optional ``organizational_unit``)."""
        limit_mb = settings.limits.chat_max_upload_size_mb
        try:
            form = await read_upload_form(
                request.headers.get("content-type"),
                request.stream(),
                limit_mb * MiB,
                too_large=f"The file is larger than the {limit_mb} MB limit for chat attachments",
                text_fields=CHAT_TEXT_FIELDS,
            )
        except PayloadTooLarge:
            REJECTIONS.labels("too_large").inc()
            raise
        return await chat.upload(caller, form)

    @router.get("/files/{file_id}/info", response_model=ChatFileInfo)
    async def info(file_id: uuid.UUID, caller: Caller) -> ChatFileInfo:
        """The file's record, to its owner only; anyone else gets the same 404 as for no file."""
        return await chat.info(caller, file_id)

    @router.get(
        "/files/{file_id}",
        response_class=Response,
        responses={200: {"description": "The file's bytes", "content": {"*/*": {}}}},
    )
    async def download(file_id: uuid.UUID, caller: Caller) -> Response:
        """The file's bytes, to its owner only; anyone else gets the same 404 as for no file."""
        found = await chat.download(caller, file_id)
        return Response(
            content=found.data,
            media_type=found.mime_type,
            headers=download_headers(found.filename, inline=found.inline),
        )

    @router.post("/messages/{message_id}/attachments", response_model=AttachOut)
    async def attach(message_id: uuid.UUID, body: AttachRequest, caller: Caller) -> AttachOut:
        """Link the caller's own unlinked files to a message: all of them, or none (400)."""
        return await chat.attach(caller, message_id, body.file_ids)

    @router.get("/messages/{message_id}/attachments", response_model=MessageAttachmentsOut)
    async def message_attachments(
        message_id: uuid.UUID,
        caller: Caller,
        agent_id: Annotated[str | None, Query(max_length=128)] = None,
        conversation_id: Annotated[str | None, Query(max_length=128)] = None,
    ) -> MessageAttachmentsOut:
        """The caller's files on a message with what each added to the prompt (history replay)."""
        return await chat.message_attachments(caller, message_id, agent_id, conversation_id)

    @router.post("/files/render", response_model=RenderOut)
    async def render(
        body: RenderRequest,
        caller: Caller,
        dry_run: Annotated[
            bool,
            Query(description="Answer the parts and references, write nothing (input guardrail)"),
        ] = False,
    ) -> RenderOut:
        """Route the caller's files for one agent's turn: inline parts or workspace references."""
        return await chat.render(caller, body, dry_run=dry_run)

    return router
