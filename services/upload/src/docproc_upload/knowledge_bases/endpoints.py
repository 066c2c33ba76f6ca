"""``/api/v1/kb``: knowledge bases, their settings, reindexing, status and grants."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, status

from docproc_upload.access import Access, list_reachable, resolve_kb
from docproc_upload.deps import Caller, RuntimeDep, Session
from docproc_upload.knowledge_bases import service
from docproc_upload.knowledge_bases.schemas import (
    CollectionDeletedOut,
    GrantIn,
    IngestionStatus,
    KnowledgeBaseCreate,
    KnowledgeBaseOut,
    KnowledgeBasePatch,
    ReindexOut,
)
from docproc_upload.routes import PublicRoute

router = APIRouter(prefix="/api/v1", tags=["kb"], route_class=PublicRoute)


def kb_out(kb: object) -> KnowledgeBaseOut:
    return KnowledgeBaseOut.model_validate(kb, from_attributes=True)


@router.post("/kb", status_code=status.HTTP_201_CREATED, response_model=KnowledgeBaseOut)
async def create_kb(
    body: KnowledgeBaseCreate, caller: Caller, db: Session, runtime: RuntimeDep
) -> KnowledgeBaseOut:
    async with db.begin():
        return kb_out(await service.create_kb(db, caller, body, runtime.settings))


@router.get("/kb", response_model=list[KnowledgeBaseOut])
async def list_kbs(caller: Caller, db: Session) -> list[KnowledgeBaseOut]:
    return [kb_out(kb) for kb in await list_reachable(db, caller)]


@router.get("/kb/{kb_id}", response_model=KnowledgeBaseOut)
async def get_kb(kb_id: uuid.UUID, caller: Caller, db: Session) -> KnowledgeBaseOut:
    return kb_out(await resolve_kb(db, caller, kb_id, Access.VIEW))


@router.patch("/kb/{kb_id}", response_model=KnowledgeBaseOut)
async def patch_kb(
    kb_id: uuid.UUID, body: KnowledgeBasePatch, caller: Caller, db: Session, runtime: RuntimeDep
) -> KnowledgeBaseOut:
    """Change what was sent: the embedding provider, key or endpoint, ``ingestion_config``
    (only the settings that change), ``is_default`` (the app admin)."""
    async with db.begin():
        return kb_out(await service.update_kb(db, caller, runtime.settings, kb_id, body))


@router.delete("/kb/{kb_id}", response_model=CollectionDeletedOut)
async def delete_kb(kb_id: uuid.UUID, caller: Caller, db: Session) -> CollectionDeletedOut:
    async with db.begin():
        return await service.delete_kb(db, caller, kb_id)


@router.post("/kb/{kb_id}/reindex", status_code=status.HTTP_202_ACCEPTED, response_model=ReindexOut)
async def reindex_kb(
    kb_id: uuid.UUID, caller: Caller, db: Session, runtime: RuntimeDep
) -> ReindexOut:
    """Re-parse the stored originals with the base's current ``ingestion_config``; each
    document keeps its chunks until its new set replaces them (``GET .../ingestion``)."""
    async with db.begin():
        return await service.reindex_kb(db, caller, runtime.settings, kb_id)


@router.get("/kb/{kb_id}/ingestion", response_model=IngestionStatus)
async def kb_ingestion(kb_id: uuid.UUID, caller: Caller, db: Session) -> IngestionStatus:
    return await service.ingestion_status(db, caller, kb_id)


@router.put("/kb/{kb_id}/grants", status_code=status.HTTP_204_NO_CONTENT)
async def put_grant(kb_id: uuid.UUID, body: GrantIn, caller: Caller, db: Session) -> None:
    async with db.begin():
        await service.grant(db, caller, kb_id, body.user_id, body.permission)


@router.delete("/kb/{kb_id}/grants/{user_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_grant(kb_id: uuid.UUID, user_id: str, caller: Caller, db: Session) -> None:
    async with db.begin():
        await service.revoke(db, caller, kb_id, user_id)
