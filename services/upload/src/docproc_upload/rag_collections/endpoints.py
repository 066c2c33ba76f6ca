"""``/api/v1/rag/collections``: collections by name (create, list, status, filter values, delete)."""

from __future__ import annotations

from fastapi import APIRouter, status

from docproc_upload.access import list_reachable
from docproc_upload.deps import Caller, RuntimeDep, Session
from docproc_upload.knowledge_bases.endpoints import kb_out
from docproc_upload.knowledge_bases.schemas import (
    CollectionChoices,
    CollectionDeletedOut,
    KnowledgeBaseCreate,
    KnowledgeBaseOut,
)
from docproc_upload.knowledge_bases.service import create_kb
from docproc_upload.openapi import CollectionNamePath
from docproc_upload.rag_collections import service
from docproc_upload.rag_collections.schemas import (
    CollectionCreate,
    CollectionInfo,
    FilterValues,
)
from docproc_upload.routes import PublicRoute

router = APIRouter(prefix="/api/v1", tags=["collections"], route_class=PublicRoute)


@router.post(
    "/rag/collections/{name}", status_code=status.HTTP_201_CREATED, response_model=KnowledgeBaseOut
)
async def create_collection(
    name: CollectionNamePath,
    body: CollectionCreate,
    caller: Caller,
    db: Session,
    runtime: RuntimeDep,
) -> KnowledgeBaseOut:
    choices = {field: getattr(body, field) for field in CollectionChoices.model_fields}
    create = KnowledgeBaseCreate(name=body.name or name, collection_name=name, **choices)
    async with db.begin():
        return kb_out(await create_kb(db, caller, create, runtime.settings))


@router.get("/rag/collections", response_model=list[CollectionInfo])
async def list_collections(caller: Caller, db: Session) -> list[CollectionInfo]:
    names = dict.fromkeys(kb.collection_name for kb in await list_reachable(db, caller))
    return [await service.collection_info(db, caller, name) for name in names]


@router.get("/rag/collections/{name}/info", response_model=CollectionInfo)
async def collection_info(name: CollectionNamePath, caller: Caller, db: Session) -> CollectionInfo:
    return await service.collection_info(db, caller, name)


@router.get("/rag/collections/{name}/filter-values", response_model=FilterValues)
async def filter_values(name: CollectionNamePath, caller: Caller, db: Session) -> FilterValues:
    return FilterValues(organizational_unit=await service.filter_values(db, caller, name))


@router.delete("/rag/collections/{name}", response_model=CollectionDeletedOut)
async def delete_collection(
    name: CollectionNamePath, caller: Caller, db: Session
) -> CollectionDeletedOut:
    async with db.begin():
        return await service.delete_collection(db, caller, name)
