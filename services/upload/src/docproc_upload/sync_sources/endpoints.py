"""The sync routes under ``/api/v1``: thin handlers over ``docproc_upload.sync_sources.service``."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from docproc_upload.access import Access
from docproc_upload.deps import Caller, RuntimeDep, Session
from docproc_upload.inputs import INT4_MAX
from docproc_upload.routes import PublicRoute
from docproc_upload.sync_sources import service
from docproc_upload.sync_sources.schemas import (
    CloneRequest,
    ConnectorOut,
    LocalSyncRequest,
    RunOut,
    SourceCreate,
    SourceOut,
    SourcePatch,
    SyncLogPage,
)

router = APIRouter(prefix="/api/v1", tags=["sync"], route_class=PublicRoute)
Limit = Annotated[int, Query(ge=1, le=200)]
Offset = Annotated[int, Query(ge=0, le=INT4_MAX)]


@router.get("/rag/sync/connectors", response_model=list[ConnectorOut])
async def list_connectors(caller: Caller) -> list[ConnectorOut]:
    return service.connectors(caller)


# -- a knowledge base's own sources -----------------------------------------------------------


@router.post(
    "/kb/{kb_id}/sync-sources",
    status_code=status.HTTP_201_CREATED,
    response_model=SourceOut,
    responses={200: {"model": SourceOut, "description": "dry_run: checked, nothing saved"}},
)
async def create_source(
    kb_id: uuid.UUID,
    body: SourceCreate,
    caller: Caller,
    db: Session,
    runtime: RuntimeDep,
    response: Response,
    dry_run: Annotated[
        bool,
        Query(
            description="Check the source and answer it with its audience sentence, "
            "saving nothing (a wizard's last step before it saves)"
        ),
    ] = False,
) -> SourceOut:
    async with db.begin() as transaction:
        out = await service.create_source(db, caller, kb_id, body, sync=runtime.settings.sync)
        if dry_run:
            await transaction.rollback()
            response.status_code = status.HTTP_200_OK
    return out


@router.get("/kb/{kb_id}/sync-sources", response_model=list[SourceOut])
async def list_kb_sources(kb_id: uuid.UUID, caller: Caller, db: Session) -> list[SourceOut]:
    return await service.list_kb_sources(db, caller, kb_id)


@router.get("/kb/{kb_id}/sync-sources/{source_id}", response_model=SourceOut)
async def get_kb_source(
    kb_id: uuid.UUID, source_id: uuid.UUID, caller: Caller, db: Session
) -> SourceOut:
    src = await service.source_in_kb(db, caller, kb_id, source_id, Access.VIEW)
    return await service.source_out(db, caller, src, with_audience=True)


@router.patch("/kb/{kb_id}/sync-sources/{source_id}", response_model=SourceOut)
async def patch_kb_source(
    kb_id: uuid.UUID,
    source_id: uuid.UUID,
    body: SourcePatch,
    caller: Caller,
    db: Session,
    runtime: RuntimeDep,
) -> SourceOut:
    async with db.begin():
        src = await service.source_in_kb(db, caller, kb_id, source_id, Access.EDIT)
        return await service.update_source(
            db, caller, src, body, route_kb=kb_id, sync=runtime.settings.sync
        )


@router.delete("/kb/{kb_id}/sync-sources/{source_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_kb_source(
    kb_id: uuid.UUID, source_id: uuid.UUID, caller: Caller, db: Session
) -> Response:
    async with db.begin():
        src = await service.source_in_kb(db, caller, kb_id, source_id, Access.EDIT)
        await service.delete_source(db, caller, src)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/kb/{kb_id}/sync-sources/{source_id}/clone",
    status_code=status.HTTP_201_CREATED,
    response_model=SourceOut,
)
async def clone_kb_source(
    kb_id: uuid.UUID, source_id: uuid.UUID, body: CloneRequest, caller: Caller, db: Session
) -> SourceOut:
    async with db.begin():
        src = await service.source_in_kb(db, caller, kb_id, source_id, Access.EDIT)
        return await service.clone_source(db, caller, src, body)


@router.post(
    "/kb/{kb_id}/sync-sources/{source_id}/run",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=RunOut,
)
async def run_kb_source(
    kb_id: uuid.UUID, source_id: uuid.UUID, caller: Caller, db: Session
) -> RunOut:
    async with db.begin():
        src = await service.source_in_kb(db, caller, kb_id, source_id, Access.EDIT)
        return await service.run(db, caller, src)


@router.post("/kb/{kb_id}/sync-sources/{source_id}/cancel", response_model=RunOut)
async def cancel_kb_source(
    kb_id: uuid.UUID, source_id: uuid.UUID, caller: Caller, db: Session
) -> RunOut:
    async with db.begin():
        src = await service.source_in_kb(db, caller, kb_id, source_id, Access.EDIT)
        return await service.cancel(db, src)


@router.get("/kb/{kb_id}/sync-sources/{source_id}/logs", response_model=SyncLogPage)
async def kb_source_logs(
    kb_id: uuid.UUID,
    source_id: uuid.UUID,
    caller: Caller,
    db: Session,
    limit: Limit = 20,
    offset: Offset = 0,
) -> SyncLogPage:
    return await service.source_logs(db, caller, kb_id, source_id, limit, offset)


# -- every source the caller reaches (these may move a source) -------------------------------


@router.get("/rag/sync/sources", response_model=list[SourceOut])
async def list_sources(
    caller: Caller, db: Session, limit: Limit = 100, offset: Offset = 0
) -> list[SourceOut]:
    return await service.list_sources(db, caller, limit=limit, offset=offset)


@router.get("/rag/sync/sources/{source_id}", response_model=SourceOut)
async def get_source(source_id: uuid.UUID, caller: Caller, db: Session) -> SourceOut:
    src = await service.reachable_source(db, caller, source_id, Access.VIEW)
    return await service.source_out(db, caller, src, with_audience=True)


@router.patch("/rag/sync/sources/{source_id}", response_model=SourceOut)
async def patch_source(
    source_id: uuid.UUID, body: SourcePatch, caller: Caller, db: Session, runtime: RuntimeDep
) -> SourceOut:
    async with db.begin():
        src = await service.reachable_source(db, caller, source_id, Access.EDIT)
        return await service.update_source(
            db, caller, src, body, route_kb=None, sync=runtime.settings.sync
        )


@router.delete("/rag/sync/sources/{source_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_source(source_id: uuid.UUID, caller: Caller, db: Session) -> Response:
    async with db.begin():
        src = await service.reachable_source(db, caller, source_id, Access.EDIT)
        await service.delete_source(db, caller, src)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/rag/sync/sources/{source_id}/clone",
    status_code=status.HTTP_201_CREATED,
    response_model=SourceOut,
)
async def clone_source(
    source_id: uuid.UUID, body: CloneRequest, caller: Caller, db: Session
) -> SourceOut:
    async with db.begin():
        src = await service.reachable_source(db, caller, source_id, Access.EDIT)
        return await service.clone_source(db, caller, src, body)


@router.post(
    "/rag/sync/sources/{source_id}/run",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=RunOut,
)
async def run_source(source_id: uuid.UUID, caller: Caller, db: Session) -> RunOut:
    async with db.begin():
        src = await service.reachable_source(db, caller, source_id, Access.EDIT)
        return await service.run(db, caller, src)


@router.post("/rag/sync/sources/{source_id}/cancel", response_model=RunOut)
async def cancel_source(source_id: uuid.UUID, caller: Caller, db: Session) -> RunOut:
    async with db.begin():
        src = await service.reachable_source(db, caller, source_id, Access.EDIT)
        return await service.cancel(db, src)


@router.get("/rag/sync/logs", response_model=SyncLogPage)
async def sync_logs(
    caller: Caller,
    db: Session,
    source_id: uuid.UUID | None = None,
    collection_name: str | None = None,
    limit: Limit = 20,
    offset: Offset = 0,
) -> SyncLogPage:
    return await service.all_logs(
        db,
        caller,
        source_id=source_id,
        collection_name=collection_name,
        limit=limit,
        offset=offset,
    )


@router.post("/rag/sync/local", status_code=status.HTTP_202_ACCEPTED, response_model=RunOut)
async def sync_local(
    body: LocalSyncRequest, caller: Caller, db: Session, runtime: RuntimeDep
) -> RunOut:
    async with db.begin():
        return await service.local_sync(db, caller, body, sync=runtime.settings.sync)
