"""The chat-attachment API under ``/api/v1``: thin handlers over ``ChatFiles``."""

from __future__ import annotations

import uuid
from typing import Annotated

from docproc_common.errors import PayloadTooLarge
from fastapi import APIRouter, Query, Request, Response, status

from docproc_upload.chat.schemas import (
    AttachOut,
    AttachRequest,
    ChatFileInfo,
    ChatFileOut,
    MessageAttachmentsOut,
    RenderOut,
    RenderRequest,
)
from docproc_upload.chat.service import MAX_UNIT_CHARS, MiB
from docproc_upload.deps import Caller, UploadDep
from docproc_upload.downloads import download_headers
from docproc_upload.metrics import REJECTIONS
from docproc_upload.multipart import multipart_openapi, read_upload_form

_UPLOAD_BODY = multipart_openapi(
    {"organizational_unit": {"type": "string", "maxLength": MAX_UNIT_CHARS}}
)
CHAT_TEXT_FIELDS = frozenset({"organizational_unit"})


router = APIRouter(prefix="/api/v1", tags=["chat files"])


@router.post(
    "/files/upload",
    status_code=status.HTTP_201_CREATED,
    response_model=ChatFileOut,
    openapi_extra=_UPLOAD_BODY,
)
async def upload_chat_file(request: Request, caller: Caller, upload: UploadDep) -> ChatFileOut:
    """Upload one chat attachment (multipart ``file``, optional ``organizational_unit``)."""
    limit_mb = upload.runtime.settings.limits.chat_max_upload_size_mb
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
    return await upload.chat.upload(caller, form)


@router.get("/files/{file_id:uuid}/info", response_model=ChatFileInfo)
async def chat_file_info(file_id: uuid.UUID, caller: Caller, upload: UploadDep) -> ChatFileInfo:
    """The file's record, to its owner only; anyone else gets the same 404 as for no file."""
    return await upload.chat.info(caller, file_id)


@router.get(
    "/files/{file_id:uuid}",
    response_class=Response,
    responses={200: {"description": "The file's bytes", "content": {"*/*": {}}}},
)
async def download_chat_file(file_id: uuid.UUID, caller: Caller, upload: UploadDep) -> Response:
    """The file's bytes, to its owner only; anyone else gets the same 404 as for no file."""
    found = await upload.chat.download(caller, file_id)
    return Response(
        content=found.data,
        media_type=found.mime_type,
        headers=download_headers(found.filename, inline=found.inline),
    )


@router.post("/messages/{message_id}/attachments", response_model=AttachOut)
async def attach_chat_files(
    message_id: uuid.UUID, body: AttachRequest, caller: Caller, upload: UploadDep
) -> AttachOut:
    """Link the caller's own unlinked files to a message: all of them, or none (400)."""
    return await upload.chat.attach(caller, message_id, body.file_ids)


@router.get("/messages/{message_id}/attachments", response_model=MessageAttachmentsOut)
async def message_attachments(
    message_id: uuid.UUID,
    caller: Caller,
    upload: UploadDep,
    agent_id: Annotated[str | None, Query(max_length=128)] = None,
    conversation_id: Annotated[str | None, Query(max_length=128)] = None,
) -> MessageAttachmentsOut:
    """The caller's files on a message with what each added to the prompt (history replay)."""
    return await upload.chat.message_attachments(caller, message_id, agent_id, conversation_id)


@router.post("/files/render", response_model=RenderOut)
async def render_chat_files(
    body: RenderRequest,
    caller: Caller,
    upload: UploadDep,
    dry_run: Annotated[
        bool,
        Query(description="Answer the parts and references, write nothing (input guardrail)"),
    ] = False,
) -> RenderOut:
    """Route the caller's files for one agent's turn: inline parts or workspace references."""
    return await upload.chat.render(caller, body, dry_run=dry_run)
