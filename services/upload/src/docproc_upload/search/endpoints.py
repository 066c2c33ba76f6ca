"""``/api/v1/rag/search``: top-k chunks of the collections or knowledge bases the caller reaches."""

from __future__ import annotations

from fastapi import APIRouter

from docproc_upload.deps import Caller, UploadDep
from docproc_upload.routes import PublicRoute
from docproc_upload.search import service
from docproc_upload.search.schemas import SearchRequest, SearchResponse

router = APIRouter(prefix="/api/v1", tags=["search"], route_class=PublicRoute)


@router.post("/rag/search", response_model=SearchResponse)
async def search(body: SearchRequest, caller: Caller, upload: UploadDep) -> SearchResponse:
    # reads only, each statement its own transaction (service.search)
    hits = await service.search(upload.runtime, upload.clients, caller, body, upload.plans)
    return SearchResponse(results=hits)
