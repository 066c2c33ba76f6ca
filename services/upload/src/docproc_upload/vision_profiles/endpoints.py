"""``/api/v1/vision-profiles``: thin routes over ``vision_profiles.service``."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Response, status

from docproc_upload.deps import Caller, RuntimeDep, Session
from docproc_upload.routes import PublicRoute
from docproc_upload.vision_profiles import service
from docproc_upload.vision_profiles.schemas import VisionProfileCreate, VisionProfileOut

router = APIRouter(prefix="/api/v1", tags=["vision-profiles"], route_class=PublicRoute)


@router.get("/vision-profiles", response_model=list[VisionProfileOut])
async def list_vision_profiles(caller: Caller, db: Session) -> list[VisionProfileOut]:
    return [
        VisionProfileOut.model_validate(p, from_attributes=True)
        for p in await service.visible(db, caller)
    ]


@router.post(
    "/vision-profiles", status_code=status.HTTP_201_CREATED, response_model=VisionProfileOut
)
async def create_vision_profile(
    body: VisionProfileCreate, caller: Caller, db: Session, runtime: RuntimeDep
) -> VisionProfileOut:
    async with db.begin():
        profile = await service.create(db, caller, runtime.settings, body)
        return VisionProfileOut.model_validate(profile, from_attributes=True)


@router.delete("/vision-profiles/{profile_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_vision_profile(profile_id: uuid.UUID, caller: Caller, db: Session) -> Response:
    async with db.begin():
        await service.delete(db, caller, profile_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
