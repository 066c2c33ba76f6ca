"""The public HTTP API under ``/api/v1``: thin handlers over ``service``.

No ``from __future__ import annotations`` here: FastAPI must see the closure-local
dependency aliases as objects, not strings.
"""

import uuid
from typing import Annotated

from docproc_common.access import Access, list_reachable, resolve_kb
from docproc_common.auth import Principal, principal_from_header
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.errors import PayloadTooLarge
from docproc_common.runtime import Runtime
from docproc_common.storage import clean_filename
from fastapi import APIRouter, Depends, Header, Query, Request, status
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload import collections, service
from docproc_upload.intake import IntakeGuard
from docproc_upload.metrics import REJECTIONS
from docproc_upload.multipart import multipart_openapi, read_upload_form
from docproc_upload.schemas import (
    CollectionCreate,
    CollectionDeletedOut,
    CollectionInfo,
    DocumentOut,
    DocumentPage,
    FilterValues,
    GrantIn,
    IngestionStatus,
    KnowledgeBaseCreate,
    KnowledgeBaseOut,
    KnowledgeBasePatch,
    RAGIngestResponse,
    ReindexOut,
    SearchRequest,
    SearchResponse,
)

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

ERRORS = {
    400: {"description": "Invalid input (error envelope, details.fields names the inputs)"},
    401: {"description": "Missing or invalid bearer token"},
    404: {"description": "Collection not found (also when access is denied)"},
    409: {"description": "Conflict"},
    413: {"description": "Payload too large"},
    503: {"description": "Busy or an upstream service unavailable; retry after Retry-After"},
}


def build_router(runtime: Runtime, clients: EmbeddingClients) -> APIRouter:
    router = APIRouter(prefix="/api/v1", responses=ERRORS)  # type: ignore[arg-type]
    intake = IntakeGuard(runtime)

    async def principal(authorization: Annotated[str | None, Header()] = None) -> Principal:
        return principal_from_header(runtime.settings.auth, authorization)

    async def session() -> AsyncSession:  # type: ignore[misc]
        async with runtime.sessionmaker() as s:
            yield s

    Caller = Annotated[Principal, Depends(principal)]
    Session = Annotated[AsyncSession, Depends(session)]
    Replace = Annotated[
        bool,
        Query(
            description="Once indexed, the new document retires the base's earlier documents "
            "of the same file name (their chunks stay searchable until then)"
        ),
    ]

    @router.post(
        "/kb", status_code=status.HTTP_201_CREATED, response_model=KnowledgeBaseOut, tags=["kb"]
    )
    async def create_kb(body: KnowledgeBaseCreate, caller: Caller, db: Session) -> KnowledgeBaseOut:
        async with db.begin():
            kb = await service.create_kb(db, caller, body, runtime.settings)
        return KnowledgeBaseOut.model_validate(kb, from_attributes=True)

    @router.get("/kb", response_model=list[KnowledgeBaseOut], tags=["kb"])
    async def list_kbs(caller: Caller, db: Session) -> list[KnowledgeBaseOut]:
        kbs = await list_reachable(db, caller)
        return [KnowledgeBaseOut.model_validate(kb, from_attributes=True) for kb in kbs]

    @router.get("/kb/{kb_id}", response_model=KnowledgeBaseOut, tags=["kb"])
    async def get_kb(kb_id: uuid.UUID, caller: Caller, db: Session) -> KnowledgeBaseOut:
        kb = await resolve_kb(db, caller, kb_id, Access.VIEW)
        return KnowledgeBaseOut.model_validate(kb, from_attributes=True)

    @router.patch("/kb/{kb_id}", response_model=KnowledgeBaseOut, tags=["kb"])
    async def patch_kb(
        kb_id: uuid.UUID, body: KnowledgeBasePatch, caller: Caller, db: Session
    ) -> KnowledgeBaseOut:
        """Change what was sent: the embedding provider, key or endpoint, ``ingestion_config``
        (only the settings that change), ``is_default`` (the app admin)."""
        async with db.begin():
            kb = await service.update_kb(db, caller, runtime.settings, kb_id, body)
            out = KnowledgeBaseOut.model_validate(kb, from_attributes=True)
        return out

    @router.post(
        "/kb/{kb_id}/reindex",
        status_code=status.HTTP_202_ACCEPTED,
        response_model=ReindexOut,
        tags=["kb"],
    )
    async def reindex_kb(kb_id: uuid.UUID, caller: Caller) -> ReindexOut:
        """Re-parse the stored originals with the base's current ``ingestion_config``; each
        document keeps its chunks until its new set replaces them (``GET .../ingestion``)."""
        return await collections.reindex_kb(runtime, caller, kb_id)

    @router.post(
        "/kb/{kb_id}/documents",
        status_code=status.HTTP_202_ACCEPTED,
        response_model=RAGIngestResponse,
        tags=["kb"],
        openapi_extra=KB_UPLOAD_BODY,
    )
    async def upload_document(
        kb_id: uuid.UUID, caller: Caller, request: Request, replace: Replace = False
    ) -> RAGIngestResponse:
        """Upload one document (multipart ``file``; optional ``ingestion`` JSON,
        ``organizational_unit`` and ``document_date``)."""
        return await upload_into(kb_id, caller, request, replace)

    @router.post(
        "/rag/collections/{name}/ingest",
        status_code=status.HTTP_202_ACCEPTED,
        response_model=RAGIngestResponse,
        tags=["rag"],
        openapi_extra=KB_UPLOAD_BODY,
    )
    async def ingest_into_collection(
        name: str, caller: Caller, request: Request, replace: Replace = False
    ) -> RAGIngestResponse:
        """The same upload, addressed by collection name: into the one knowledge base on the
        name the caller may edit (409 when there are several: use ``/kb/{kb_id}/documents``)."""
        async with runtime.sessionmaker() as session:
            kb_id = await service.kb_to_ingest_into(session, caller, name)
        return await upload_into(kb_id, caller, request, replace)

    async def upload_into(
        kb_id: uuid.UUID, caller: Principal, request: Request, replace: bool
    ) -> RAGIngestResponse:
        await intake.admit()  # before the body is read: a busy pipeline costs no upload
        limit_mb = runtime.settings.limits.max_upload_size_mb
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
        return await service.upload_document(
            runtime,
            caller,
            kb_id,
            incoming,
            form.fields.get("ingestion"),
            form.organizational_unit,
            form.fields.get("document_date"),
            replace=replace,
        )

    @router.get("/kb/{kb_id}/ingestion", response_model=IngestionStatus, tags=["kb"])
    async def ingestion(kb_id: uuid.UUID, caller: Caller, db: Session) -> IngestionStatus:
        return await service.ingestion_status(db, caller, kb_id)

    @router.get("/rag/collections/{name}/info", response_model=CollectionInfo, tags=["rag"])
    async def collection_info(name: str, caller: Caller, db: Session) -> CollectionInfo:
        return await service.collection_info(db, caller, name)

    @router.delete("/rag/collections/{name}", response_model=CollectionDeletedOut, tags=["rag"])
    async def delete_collection(name: str, caller: Caller) -> CollectionDeletedOut:
        return await collections.delete_collection(runtime, caller, name)

    @router.post(
        "/rag/collections/{name}",
        status_code=status.HTTP_201_CREATED,
        response_model=KnowledgeBaseOut,
        tags=["rag"],
    )
    async def create_collection(
        name: str, body: CollectionCreate, caller: Caller, db: Session
    ) -> KnowledgeBaseOut:
        create = KnowledgeBaseCreate(
            name=body.name or name,
            collection_name=name,
            scope=body.scope,
            embedding_provider=body.embedding_provider,
            embedding_model=body.embedding_model,
            embedding_secret_id=body.embedding_secret_id,
            embedding_base_url=body.embedding_base_url,
            embedding_endpoint_id=body.embedding_endpoint_id,
            ingestion_config=body.ingestion_config,
            text_search_config=body.text_search_config,
        )
        async with db.begin():
            kb = await service.create_kb(db, caller, create, runtime.settings)
        return KnowledgeBaseOut.model_validate(kb, from_attributes=True)

    @router.get("/rag/collections", response_model=list[CollectionInfo], tags=["rag"])
    async def list_collections(caller: Caller, db: Session) -> list[CollectionInfo]:
        names = dict.fromkeys(kb.collection_name for kb in await list_reachable(db, caller))
        return [await service.collection_info(db, caller, name) for name in names]

    @router.get("/rag/collections/{name}/filter-values", response_model=FilterValues, tags=["rag"])
    async def filter_values(name: str, caller: Caller, db: Session) -> FilterValues:
        return FilterValues(organizational_unit=await collections.filter_values(db, caller, name))

    @router.delete("/kb/{kb_id}", response_model=CollectionDeletedOut, tags=["kb"])
    async def delete_kb(kb_id: uuid.UUID, caller: Caller) -> CollectionDeletedOut:
        return await collections.delete_kb(runtime, caller, kb_id)

    @router.get("/kb/{kb_id}/documents", response_model=DocumentPage, tags=["kb"])
    async def list_documents(
        kb_id: uuid.UUID,
        caller: Caller,
        db: Session,
        limit: Annotated[int, Query(ge=1, le=500)] = 50,
        cursor: str | None = None,
    ) -> DocumentPage:
        return await collections.list_documents(
            db, caller, kb_id, limit=limit, before=collections.parse_cursor(cursor)
        )

    @router.put("/kb/{kb_id}/grants", status_code=status.HTTP_204_NO_CONTENT, tags=["kb"])
    async def put_grant(kb_id: uuid.UUID, body: GrantIn, caller: Caller, db: Session) -> None:
        async with db.begin():
            await collections.grant(db, caller, kb_id, body.user_id, body.permission)

    @router.delete(
        "/kb/{kb_id}/grants/{user_id}", status_code=status.HTTP_204_NO_CONTENT, tags=["kb"]
    )
    async def delete_grant(kb_id: uuid.UUID, user_id: str, caller: Caller, db: Session) -> None:
        async with db.begin():
            await collections.revoke(db, caller, kb_id, user_id)

    @router.delete(
        "/organizations/{organization_id}",
        response_model=list[CollectionDeletedOut],
        tags=["admin"],
    )
    async def delete_organization(
        organization_id: str, caller: Caller
    ) -> list[CollectionDeletedOut]:
        return await collections.delete_owner(runtime, caller, organization_id=organization_id)

    @router.delete("/users/{user_id}", response_model=list[CollectionDeletedOut], tags=["admin"])
    async def delete_account(user_id: str, caller: Caller) -> list[CollectionDeletedOut]:
        return await collections.delete_owner(runtime, caller, user_id=user_id)

    @router.delete(
        "/rag/documents/{document_id}", status_code=status.HTTP_204_NO_CONTENT, tags=["rag"]
    )
    async def delete_document(document_id: uuid.UUID, caller: Caller) -> None:
        await collections.delete_document(runtime, caller, document_id)

    @router.post("/rag/documents/{document_id}/retry", response_model=DocumentOut, tags=["rag"])
    async def retry_document(document_id: uuid.UUID, caller: Caller) -> DocumentOut:
        return await collections.retry_document(runtime, caller, document_id)

    @router.post("/rag/search", response_model=SearchResponse, tags=["rag"])
    async def search(body: SearchRequest, caller: Caller) -> SearchResponse:
        return SearchResponse(results=await service.search(runtime, clients, caller, body))

    return router
