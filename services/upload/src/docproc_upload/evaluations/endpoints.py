"""``/api/v1/kb/{kb_id}/evaluations``: a knowledge base's evaluation sets, their runs and
history. Reading needs what viewing the base needs; creating, running and deleting what
editing it needs."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Request, status

from docproc_upload.deps import Caller, Session, UploadDep
from docproc_upload.evaluations import service
from docproc_upload.evaluations.schemas import (
    EVALUATION_NAME_CHARS,
    MAX_BEIR_FILE_BYTES,
    EvaluationCreate,
    EvaluationDetail,
    EvaluationOut,
    EvaluationRunOut,
)
from docproc_upload.multipart import multipart_openapi, read_upload_form
from docproc_upload.routes import PublicRoute

# A set's id is matched as a UUID in the path (``{evaluation_id:uuid}``), so that
# ``/evaluations/beir`` is never taken for one: a GET there is a 405, not a 422.
router = APIRouter(prefix="/api/v1", tags=["evaluations"], route_class=PublicRoute)

BEIR_FILES = ("queries", "qrels")
BEIR_BODY = multipart_openapi(
    {"name": {"type": "string", "minLength": 1, "maxLength": EVALUATION_NAME_CHARS}},
    file_fields={"queries": "queries.jsonl", "qrels": "test.tsv"},
    required=("name",),
)


@router.post(
    "/kb/{kb_id}/evaluations", status_code=status.HTTP_201_CREATED, response_model=EvaluationOut
)
async def create_evaluation(
    kb_id: uuid.UUID, body: EvaluationCreate, caller: Caller, db: Session
) -> EvaluationOut:
    """A set of queries, each with its relevant documents (by id or file name) and their
    grades; 400 naming every judged document the base does not hold, nothing stored."""
    async with db.begin():
        return await service.create_evaluation(db, caller, kb_id, body)


@router.post(
    "/kb/{kb_id}/evaluations/beir",
    status_code=status.HTTP_201_CREATED,
    response_model=EvaluationOut,
    openapi_extra=BEIR_BODY,
)
async def upload_beir_evaluation(
    kb_id: uuid.UUID, caller: Caller, db: Session, upload: UploadDep, request: Request
) -> EvaluationOut:
    """A set from BEIR's files (multipart ``queries``: queries.jsonl, ``qrels``: a qrels
    TSV, ``name``): the judged queries, each corpus id naming the document whose file name
    without its extension is that id."""
    form = await read_upload_form(
        request.headers.get("content-type"),
        request.stream(),
        MAX_BEIR_FILE_BYTES,
        too_large=f"A BEIR file is larger than {MAX_BEIR_FILE_BYTES // 2**20} MiB",
        text_fields=frozenset({"name"}),
        file_fields=BEIR_FILES,
    )
    body = await upload.runtime.pool.run(
        service.parse_beir,
        form.fields.get("name"),
        form.files["queries"].data,
        form.files["qrels"].data,
    )
    async with db.begin():
        return await service.create_evaluation(db, caller, kb_id, body, by_stem=True)


@router.get("/kb/{kb_id}/evaluations", response_model=list[EvaluationOut])
async def list_evaluations(kb_id: uuid.UUID, caller: Caller, db: Session) -> list[EvaluationOut]:
    """The base's sets, oldest first, each with its latest run."""
    return await service.list_evaluations(db, caller, kb_id)


@router.get("/kb/{kb_id}/evaluations/{evaluation_id:uuid}", response_model=EvaluationDetail)
async def get_evaluation(
    kb_id: uuid.UUID, evaluation_id: uuid.UUID, caller: Caller, db: Session
) -> EvaluationDetail:
    return await service.get_evaluation(db, caller, kb_id, evaluation_id)


@router.delete(
    "/kb/{kb_id}/evaluations/{evaluation_id:uuid}", status_code=status.HTTP_204_NO_CONTENT
)
async def delete_evaluation(
    kb_id: uuid.UUID, evaluation_id: uuid.UUID, caller: Caller, db: Session
) -> None:
    """The set and its runs."""
    async with db.begin():
        await service.delete_evaluation(db, caller, kb_id, evaluation_id)


@router.post(
    "/kb/{kb_id}/evaluations/{evaluation_id:uuid}/run",
    status_code=status.HTTP_201_CREATED,
    response_model=EvaluationRunOut,
)
async def run_evaluation(
    kb_id: uuid.UUID, evaluation_id: uuid.UUID, caller: Caller, db: Session, upload: UploadDep
) -> EvaluationRunOut:
    """Score every mode on the base as it stands (each query searched as ``POST
    /rag/search`` does, top 100), kept with the base's settings; it answers in seconds (a
    set holds at most 100 queries). 409 while another run of the set is in progress."""
    async with db.begin():
        run = await service.prepare_run(db, caller, upload.clients, kb_id, evaluation_id)
    async with service.exclusive_run(upload.runtime, evaluation_id):
        scored = await service.score(upload.runtime, run, upload.plans)
        async with db.begin():
            return await service.record_run(db, caller, run, scored)


@router.get(
    "/kb/{kb_id}/evaluations/{evaluation_id:uuid}/runs", response_model=list[EvaluationRunOut]
)
async def list_evaluation_runs(
    kb_id: uuid.UUID,
    evaluation_id: uuid.UUID,
    caller: Caller,
    db: Session,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> list[EvaluationRunOut]:
    """The set's runs, newest first (manual and scheduled)."""
    return await service.list_runs(db, caller, kb_id, evaluation_id, limit)
