"""An organization or an account is gone: ``DELETE /organizations/{id}``, ``/users/{id}``."""

from __future__ import annotations

from docproc_common.auth import Principal
from fastapi import APIRouter
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.deps import Caller, Session
from docproc_upload.knowledge_bases import service
from docproc_upload.knowledge_bases.schemas import CollectionDeletedOut
from docproc_upload.routes import PublicRoute

router = APIRouter(prefix="/api/v1", tags=["admin"], route_class=PublicRoute)


async def _tear_down_owned(
    db: AsyncSession,
    caller: Principal,
    *,
    organization_id: str | None = None,
    user_id: str | None = None,
) -> list[CollectionDeletedOut]:
    """Each name the owner held is torn down in its own transaction."""
    async with db.begin():
        names = await service.owned(db, caller, organization_id=organization_id, user_id=user_id)
    results = []
    for name, ids in names.items():
        async with db.begin():
            result = await service.tear_down_owned(db, caller, name, ids)
        if result is not None:
            results.append(result)
    return results


@router.delete("/organizations/{organization_id}", response_model=list[CollectionDeletedOut])
async def delete_organization(
    organization_id: str, caller: Caller, db: Session
) -> list[CollectionDeletedOut]:
    return await _tear_down_owned(db, caller, organization_id=organization_id)


@router.delete("/users/{user_id}", response_model=list[CollectionDeletedOut])
async def delete_account(user_id: str, caller: Caller, db: Session) -> list[CollectionDeletedOut]:
    return await _tear_down_owned(db, caller, user_id=user_id)
