"""The chat-attachment API under ``/api/v1``: each route owns its transactions (``deps``)
over ``service``, and holds none while a file is parsed, stored or read."""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated

from docproc_common.errors import PayloadTooLarge
from fastapi import APIRouter, Path, Query, Request, Response, status
from fastapi.responses import StreamingResponse

from docproc_upload.chat import service
from docproc_upload.chat.schemas import (
    AttachOut,
    AttachRequest,
    ChatFileInfo,
    ChatFileOut,
    MessageAttachmentsOut,
    RenderOut,
    RenderRequest,
    WorkspaceListingOut,
)
from docproc_upload.deps import Caller, RuntimeDep, Session, UploadDep
from docproc_upload.downloads import download_headers
from docproc_upload.metrics import REJECTIONS
from docproc_upload.multipart import multipart_openapi, read_upload_form
from docproc_upload.routes import PublicRoute

_UPLOAD_BODY = multipart_openapi(
    {"organizational_unit": {"type": "string", "maxLength": service.MAX_UNIT_CHARS}}
)
CHAT_TEXT_FIELDS = frozenset({"organizational_unit"})


router = APIRouter(prefix="/api/v1", tags=["chat files"], route_class=PublicRoute)


@router.post(
    "/files/upload",
    status_code=status.HTTP_201_CREATED,
    response_model=ChatFileOut,
    openapi_extra=_UPLOAD_BODY,
)
async def upload_chat_file(
    request: Request, caller: Caller, db: Session, upload: UploadDep
) -> ChatFileOut:
    """Upload one chat attachment (multipart ``file``, optional ``organizational_unit``).

    Checked and parsed, then stored, then recorded in one short transaction; the file is
    removed again when the row is not committed."""
    runtime = upload.runtime
    limit_mb = runtime.settings.limits.chat_max_upload_size_mb
    try:
        form = await read_upload_form(
            request.headers.get("content-type"),
            request.stream(),
            limit_mb * service.MiB,
            too_large=f"The file is larger than the {limit_mb} MB limit for chat attachments",
            text_fields=CHAT_TEXT_FIELDS,
        )
    except PayloadTooLarge:
        REJECTIONS.labels("too_large").inc()
        raise
    checked = await service.check_upload(runtime, upload.chat, form)
    path = await service.store(runtime, caller, checked)
    try:
        async with db.begin():
            answer = await service.add_file(db, caller, checked, path)
    except BaseException:
        await asyncio.shield(runtime.storage.delete(path))
        raise
    service.uploaded(checked)
    return answer


@router.get("/files/{file_id:uuid}/info", response_model=ChatFileInfo)
async def chat_file_info(file_id: uuid.UUID, caller: Caller, db: Session) -> ChatFileInfo:
    """The file's record, to its owner only; anyone else gets the same 404 as for no file."""
    return await service.info(db, caller, file_id)


@router.get(
    "/files/{file_id:uuid}",
    response_class=Response,
    responses={200: {"description": "The file's bytes", "content": {"*/*": {}}}},
)
async def download_chat_file(
    file_id: uuid.UUID, caller: Caller, db: Session, runtime: RuntimeDep
) -> Response:
    """The file's bytes, to its owner only; anyone else gets the same 404 as for no file.

    The transaction ends before the bytes are read: a slow store holds no connection."""
    async with db.begin():
        row = await service.own_file(db, caller, file_id)
    found = await service.download(runtime, row)
    return Response(
        content=found.data,
        media_type=found.mime_type,
        headers=download_headers(found.filename, inline=found.inline),
    )


@router.post("/messages/{message_id}/attachments", response_model=AttachOut)
async def attach_chat_files(
    message_id: uuid.UUID, body: AttachRequest, caller: Caller, db: Session
) -> AttachOut:
    """Link the caller's own unlinked files to a message: all of them, or none (400)."""
    async with db.begin():
        return await service.attach(db, caller, message_id, body.file_ids)


@router.get("/messages/{message_id}/attachments", response_model=MessageAttachmentsOut)
async def message_attachments(
    message_id: uuid.UUID,
    caller: Caller,
    db: Session,
    agent_id: Annotated[str | None, Query(max_length=128)] = None,
    conversation_id: Annotated[str | None, Query(max_length=128)] = None,
) -> MessageAttachmentsOut:
    """The caller's files on a message with what each added to the prompt (history replay)."""
    return await service.message_attachments(db, caller, message_id, agent_id, conversation_id)


@router.post("/files/render", response_model=RenderOut)
async def render_chat_files(
    body: RenderRequest,
    caller: Caller,
    db: Session,
    runtime: RuntimeDep,
    dry_run: Annotated[
        bool,
        Query(description="Answer the parts and references, write nothing (input guardrail)"),
    ] = False,
) -> RenderOut:
    """Route the caller's files for one agent's turn: inline parts or workspace references.

    Two short units around the rendering's storage I/O: the files read, then (unless a dry
    run) the render rows written."""
    async with db.begin():
        files = await service.files_to_render(db, caller, body)
    rendered = await service.render(runtime, caller, body, files, dry_run=dry_run)
    if not dry_run:
        async with db.begin():
            await service.save_renders(db, caller, body, files, rendered)
    links = service.links_for(runtime, caller, body, dry_run=dry_run)
    return service.rendered_out(files, rendered, dry_run=dry_run, links=links)


#: A link is a few hundred characters; anything far longer names nothing.
_LINK = Path(max_length=4096, description="A link from a render's `fetch` (or a listing)")


@router.get(
    "/workspace/files/{link}",
    response_class=StreamingResponse,
    responses={200: {"description": "The file's bytes", "content": {"*/*": {}}}},
)
async def workspace_file(
    link: Annotated[str, _LINK], caller: Caller, runtime: RuntimeDep
) -> StreamingResponse:
    """A file a render wrote into the caller's workspace, through the render's link: to
    the caller that rendered only, until the link expires; anything else is the same 404
    as for no file. No transaction: the link is the grant."""
    name, stream = await service.workspace_file(runtime, caller, link)
    return StreamingResponse(
        aiter(stream), media_type="application/octet-stream", headers=download_headers(name)
    )


@router.get("/workspace/listings/{link}", response_model=WorkspaceListingOut)
async def workspace_listing(
    link: Annotated[str, _LINK], caller: Caller, runtime: RuntimeDep
) -> WorkspaceListingOut:
    """An unpacked archive's members in the caller's workspace, each with its own link
    (expiring with this one), through the link a render gave; otherwise 404."""
    return await service.workspace_listing(runtime, caller, link)
