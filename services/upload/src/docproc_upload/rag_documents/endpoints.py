"""Documents: upload into a knowledge base (or a collection name), list, view, download,
delete, retry, and what can be ingested (``GET /rag/supported-formats``)."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from docproc_common.auth import Principal
from docproc_common.errors import PayloadTooLarge
from docproc_common.formats import PARSERS, Capabilities
from docproc_common.storage import clean_filename
from fastapi import APIRouter, Query, Request, status
from fastapi.responses import StreamingResponse
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.deps import Caller, RuntimeDep, Session, Upload, UploadDep
from docproc_upload.downloads import download_headers
from docproc_upload.metrics import REJECTIONS
from docproc_upload.multipart import multipart_openapi, read_upload_form
from docproc_upload.openapi import CollectionNamePath
from docproc_upload.rag_documents import service
from docproc_upload.rag_documents.ingest import ingest_file
from docproc_upload.rag_documents.schemas import (
    ChunkContext,
    DocumentOut,
    DocumentPage,
    ParsedDocument,
    ParsedPages,
    RAGIngestResponse,
    SupportedFormats,
)
from docproc_upload.routes import PublicRoute

router = APIRouter(prefix="/api/v1", tags=["documents"], route_class=PublicRoute)

KB_TEXT_FIELDS = frozenset({"ingestion", "organizational_unit", "document_date"})
KB_UPLOAD_BODY = multipart_openapi(
    {
        "ingestion": {
            "type": "string",
            "description": "JSON: only the ingestion settings that change",
        },
        "organizational_unit": {"type": "string", "maxLength": service.MAX_UNIT_CHARS},
        "document_date": {
            "type": "string",
            "format": "date",
            "description": "The document's own date (YYYY-MM-DD), for date_from/date_to",
        },
    }
)
Replace = Annotated[
    bool,
    Query(
        description="Once indexed, the new document retires the base's earlier documents "
        "of the same file name (their chunks stay searchable until then)"
    ),
]


@router.post(
    "/kb/{kb_id}/documents",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=RAGIngestResponse,
    openapi_extra=KB_UPLOAD_BODY,
)
async def upload_document(
    kb_id: uuid.UUID,
    caller: Caller,
    db: Session,
    upload: UploadDep,
    request: Request,
    replace: Replace = False,
) -> RAGIngestResponse:
    """Upload one document (multipart ``file``; optional ``ingestion`` JSON,
    ``organizational_unit`` and ``document_date``)."""
    return await _upload_into(db, upload, caller, kb_id, request, replace)


@router.post(
    "/rag/collections/{name}/ingest",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=RAGIngestResponse,
    openapi_extra=KB_UPLOAD_BODY,
)
async def ingest_into_collection(
    name: CollectionNamePath,
    caller: Caller,
    db: Session,
    upload: UploadDep,
    request: Request,
    replace: Replace = False,
) -> RAGIngestResponse:
    """The same upload, addressed by collection name: into the one knowledge base on the
    name the caller may edit (409 when there are several: use ``/kb/{kb_id}/documents``)."""
    async with db.begin():
        kb_id = await service.kb_to_ingest_into(db, caller, name)
    return await _upload_into(db, upload, caller, kb_id, request, replace)


async def _upload_into(
    db: AsyncSession,
    upload: Upload,
    caller: Principal,
    kb_id: uuid.UUID,
    request: Request,
    replace: bool,
) -> RAGIngestResponse:
    """Admit the upload, read its form under the upload cap, then ``ingest_file``."""
    await upload.intake.admit()  # before the body is read: a busy pipeline costs no upload
    limit_mb = upload.runtime.settings.limits.max_upload_size_mb
    try:
        form = await read_upload_form(
            request.headers.get("content-type"),
            request.stream(),
            limit_mb * 1024 * 1024,
            too_large=f"The file is larger than MAX_UPLOAD_SIZE_MB ({limit_mb} MB)",
            text_fields=KB_TEXT_FIELDS,
        )
    except PayloadTooLarge:
        REJECTIONS.labels("too_large").inc()
        raise
    incoming = service.IncomingFile(
        clean_filename(form.filename or "upload"), form.data, form.content_type
    )
    return await ingest_file(
        db,
        upload,
        caller,
        kb_id,
        incoming,
        ingestion=form.fields.get("ingestion"),
        organizational_unit=form.organizational_unit,
        document_date=form.fields.get("document_date"),
        replace=replace,
    )


@router.get("/kb/{kb_id}/documents", response_model=DocumentPage)
async def list_documents(
    kb_id: uuid.UUID,
    caller: Caller,
    db: Session,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    cursor: str | None = None,
) -> DocumentPage:
    return await service.list_documents(
        db, caller, kb_id, limit=limit, before=service.parse_cursor(cursor)
    )


@router.get("/rag/supported-formats", response_model=SupportedFormats)
async def get_supported_formats(
    _caller: Caller,
    runtime: RuntimeDep,
    parser: Annotated[
        Literal["pymupdf", "liteparse", "llamaparse"] | None,
        Query(description="One parser; all three when omitted"),
    ] = None,
) -> SupportedFormats:
    capabilities = Capabilities.declared(runtime.settings.formats)
    return SupportedFormats(
        parsers=[service.formats_of(p, capabilities) for p in ([parser] if parser else PARSERS)]
    )


@router.get("/rag/documents/{document_id}", response_model=ParsedDocument)
async def get_document(
    document_id: uuid.UUID,
    caller: Caller,
    db: Session,
    runtime: RuntimeDep,
    offset: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=service.MAX_CONTENT_CHARS)] = 1_000_000,
) -> ParsedDocument:
    return await service.parsed_document(
        db, runtime.storage, caller, document_id, offset=offset, limit=limit
    )


Neighbours = Annotated[int, Query(ge=0, le=service.MAX_NEIGHBOURS)]


@router.get("/rag/documents/{document_id}/chunks", response_model=ChunkContext)
async def get_chunk_context(
    document_id: uuid.UUID,
    caller: Caller,
    db: Session,
    chunk_no: Annotated[
        int, Query(ge=0, le=service.MAX_CHUNK_NO, description="A search hit's chunk_no")
    ],
    before: Neighbours = 2,
    after: Neighbours = 2,
) -> ChunkContext:
    """A chunk of the document and up to ``before``/``after`` chunks around it; 404 until
    the document is ``done``."""
    return await service.chunk_context(
        db, caller, document_id, chunk_no, before=before, after=after
    )


@router.get("/kb/{kb_id}/documents/{document_id}/parsed", response_model=ParsedPages)
async def get_parsed(
    kb_id: uuid.UUID, document_id: uuid.UUID, caller: Caller, db: Session
) -> ParsedPages:
    """The document's chunks page by page; 404 until it is ``done``."""
    return await service.parsed_pages(db, caller, kb_id, document_id)


@router.get(
    "/kb/{kb_id}/documents/{document_id}/download",
    response_class=StreamingResponse,
    responses={200: {"description": "The original file", "content": {"*/*": {}}}},
)
async def download_document(
    kb_id: uuid.UUID, document_id: uuid.UUID, caller: Caller, db: Session, runtime: RuntimeDep
) -> StreamingResponse:
    """The stored original, streamed; a synced document keeps none (``has_file`` false).

    The transaction ends before the first byte: a slow download holds no connection."""
    async with db.begin():
        filename, path = await service.stored_original(db, caller, kb_id, document_id)
    try:
        stream = await runtime.storage.open(path)
    except FileNotFoundError:
        raise service.original_gone() from None
    return StreamingResponse(
        aiter(stream), media_type="application/octet-stream", headers=download_headers(filename)
    )


@router.delete("/rag/documents/{document_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_document(document_id: uuid.UUID, caller: Caller, db: Session) -> None:
    async with db.begin():
        await service.delete_document(db, caller, document_id)


@router.post("/rag/documents/{document_id}/retry", response_model=DocumentOut)
async def retry_document(document_id: uuid.UUID, caller: Caller, db: Session) -> DocumentOut:
    async with db.begin():
        return await service.retry_document(db, caller, document_id)
