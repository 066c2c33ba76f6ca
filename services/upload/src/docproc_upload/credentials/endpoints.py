"""``/api/v1/secrets``: thin routes over ``credentials.service``."""

from __future__ import annotations

import uuid
from typing import Annotated

from docproc_common.vault import SecretKind
from fastapi import APIRouter, Query, Response, status

from docproc_upload.credentials import service
from docproc_upload.credentials.schemas import SecretCreate, SecretOut
from docproc_upload.deps import Caller, RuntimeDep, Session
from docproc_upload.routes import PublicRoute

router = APIRouter(prefix="/api/v1", tags=["secrets"], route_class=PublicRoute)


@router.post("/secrets", status_code=status.HTTP_201_CREATED, response_model=SecretOut)
async def create_secret(
    body: SecretCreate, caller: Caller, db: Session, runtime: RuntimeDep
) -> SecretOut:
    async with db.begin():
        secret = await service.create(db, caller, runtime.settings, body)
        return SecretOut.model_validate(secret, from_attributes=True)


@router.get("/secrets", response_model=list[SecretOut])
async def list_secrets(
    caller: Caller, db: Session, kind: Annotated[SecretKind | None, Query()] = None
) -> list[SecretOut]:
    return [
        SecretOut.model_validate(s, from_attributes=True)
        for s in await service.visible(db, caller, kind)
    ]


@router.delete("/secrets/{secret_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_secret(secret_id: uuid.UUID, caller: Caller, db: Session) -> Response:
    async with db.begin():
        await service.delete(db, caller, secret_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
