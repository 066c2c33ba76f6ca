"""The embedding catalog and registered endpoints: thin routes over ``embeddings.service``."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from docproc_upload.deps import Caller, RuntimeDep, Session
from docproc_upload.embeddings import repository, service
from docproc_upload.embeddings.schemas import (
    EmbeddingCatalogOut,
    EmbeddingEndpointCreate,
    EmbeddingEndpointOut,
    ServedModelsOut,
)
from docproc_upload.routes import PublicRoute

router = APIRouter(prefix="/api/v1", tags=["embeddings"], route_class=PublicRoute)


@router.get("/rag/embedding-models", response_model=EmbeddingCatalogOut)
async def embedding_models(_caller: Caller, runtime: RuntimeDep) -> EmbeddingCatalogOut:
    return service.catalog_out(runtime.settings)


@router.get("/rag/embedding-models/{provider}", response_model=ServedModelsOut)
async def served_embedding_models(
    provider: str,
    _caller: Caller,
    runtime: RuntimeDep,
    base_url: Annotated[str | None, Query()] = None,
) -> ServedModelsOut:
    """The catalog models that ``base_url`` (default: the provider's) says it serves."""
    return await service.served(runtime.settings, provider, base_url)


@router.get("/rag/embedding-endpoints", response_model=list[EmbeddingEndpointOut])
async def list_embedding_endpoints(caller: Caller, db: Session) -> list[EmbeddingEndpointOut]:
    return [
        EmbeddingEndpointOut.model_validate(e, from_attributes=True)
        for e in await repository.visible_endpoints(db, caller)
    ]


@router.post(
    "/rag/embedding-endpoints",
    status_code=status.HTTP_201_CREATED,
    response_model=EmbeddingEndpointOut,
)
async def create_embedding_endpoint(
    body: EmbeddingEndpointCreate, caller: Caller, db: Session, runtime: RuntimeDep
) -> EmbeddingEndpointOut:
    async with db.begin():
        endpoint = await service.register_endpoint(db, caller, body, runtime.settings)
        return EmbeddingEndpointOut.model_validate(endpoint, from_attributes=True)


@router.delete("/rag/embedding-endpoints/{endpoint_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_embedding_endpoint(
    endpoint_id: uuid.UUID, caller: Caller, db: Session
) -> Response:
    async with db.begin():
        await service.delete_endpoint(db, caller, endpoint_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
