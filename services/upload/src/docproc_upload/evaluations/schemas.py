"""The bodies of the evaluation routes (``/kb/{id}/evaluations``) and their answers."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from docproc_common.db.models import EvaluationRun, RagDocument, RetrievalEvaluation
from pydantic import BaseModel, ConfigDict, Field, field_validator

from docproc_upload.inputs import column_length
from docproc_upload.search.schemas import QUERY_CHARS

#: Queries one set holds: a run searches each once per mode (3 x 100 searches answer in
#: seconds), so a set is bounded rather than its run made asynchronous.
MAX_QUERIES = 100
#: Documents one query may judge.
MAX_JUDGMENTS = 100
#: Evaluation sets one knowledge base may hold (each is run on the schedule).
MAX_EVALUATIONS = 20
#: A grade: 0 is judged not relevant; higher is more relevant (nDCG's gain is the grade).
MAX_GRADE = 100
#: Each file of a BEIR-format upload (``queries.jsonl`` holds every split's queries).
MAX_BEIR_FILE_BYTES = 5 * 2**20

EVALUATION_NAME_CHARS = column_length(RetrievalEvaluation.name)
QUERY_ID_CHARS = 200
DOCUMENT_KEY_CHARS = column_length(RagDocument.filename)

#: A document as a query names it: its id, or its file name in the base.
DocumentKey = Annotated[str, Field(min_length=1, max_length=DOCUMENT_KEY_CHARS)]
Grade = Annotated[int, Field(ge=0, le=MAX_GRADE)]
#: A search mode, or ``rerank``: a search naming no mode (hybrid, vector on a collection
#: without a keyword index) with the base's reranker, scored when the base names one.
Mode = Literal["vector", "keyword", "hybrid", "rerank"]


class EvaluationQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=QUERY_ID_CHARS)
    text: str = Field(min_length=1, max_length=QUERY_CHARS)
    #: The documents judged for this query, each by its id or its file name in the base,
    #: with its grade (at least one above 0).
    relevant: dict[DocumentKey, Grade] = Field(min_length=1, max_length=MAX_JUDGMENTS)

    @field_validator("relevant")
    @classmethod
    def _one_relevant(cls, v: dict[str, int]) -> dict[str, int]:
        if not any(grade > 0 for grade in v.values()):
            raise ValueError("judge at least one document relevant (a grade above 0)")
        return v


class EvaluationCreate(BaseModel):
    """A set of queries, each with the documents relevant to it."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=EVALUATION_NAME_CHARS)
    queries: list[EvaluationQuery] = Field(min_length=1, max_length=MAX_QUERIES)

    @field_validator("queries")
    @classmethod
    def _unique_ids(cls, v: list[EvaluationQuery]) -> list[EvaluationQuery]:
        seen: set[str] = set()
        for query in v:
            if query.id in seen:
                raise ValueError(f"two queries have the id {query.id!r}")
            seen.add(query.id)
        return v


class ModeScores(BaseModel):
    """trec_eval's measures (graded judgments, linear gain), averaged over the set's
    queries; a query the mode found nothing for counts 0."""

    ndcg_at_10: float
    recall_at_10: float
    recall_at_100: float
    mrr_at_10: float


class SettingsSnapshot(BaseModel):
    """The base's settings a run searched with."""

    model_config = ConfigDict(extra="allow")

    embedding_provider: str
    embedding_model: str
    embedding_dim: int
    text_search_config: str
    vector_type: str
    #: What ``POST /rag/search`` searches with when a request names no mode.
    search_default_mode: str
    splitter_version: int
    ingestion_config: dict[str, Any]
    #: The base's reranker (provider, model, ...), null when it names none.
    rerank: dict[str, Any] | None = None
    #: The vector ranking's share of the hybrid blend the run searched with (null: a run
    #: from before bases chose it, at the product's 0.6).
    hybrid_vector_weight: float | None = None


class EvaluationRunOut(BaseModel):
    id: uuid.UUID
    evaluation_id: uuid.UUID
    trigger: Literal["manual", "scheduled"]
    #: ``failed``: a scheduled run that scored nothing (``error`` says why).
    status: Literal["ok", "failed"]
    error: str | None
    started_by: str | None
    started_at: datetime
    finished_at: datetime
    query_count: int
    #: Judged documents the base no longer lists (deleted since the set was made).
    missing_documents: int
    scores: dict[Mode, ModeScores]
    #: A mode not scored, and why (a collection without a keyword index, a reranker whose
    #: key is gone).
    skipped: dict[Mode, str]
    settings: SettingsSnapshot

    @classmethod
    def of(cls, run: EvaluationRun) -> EvaluationRunOut:
        return cls(
            id=run.id,
            evaluation_id=run.evaluation_id,
            trigger=run.trigger,
            status="failed" if run.error is not None else "ok",
            error=run.error,
            started_by=run.started_by,
            started_at=run.started_at,
            finished_at=run.finished_at,
            query_count=run.query_count,
            missing_documents=run.missing_documents,
            scores={m: ModeScores.model_validate(s) for m, s in run.scores.items()},
            skipped=run.skipped,
            settings=SettingsSnapshot.model_validate(run.settings),
        )


class EvaluationOut(BaseModel):
    id: uuid.UUID
    knowledge_base_id: uuid.UUID
    name: str
    query_count: int
    #: Documents judged, over all queries.
    judgment_count: int
    created_by: str
    created_at: datetime
    latest_run: EvaluationRunOut | None

    @classmethod
    def of(cls, evaluation: RetrievalEvaluation, latest: EvaluationRun | None) -> EvaluationOut:
        return cls(
            id=evaluation.id,
            knowledge_base_id=evaluation.knowledge_base_id,
            name=evaluation.name,
            query_count=len(evaluation.queries),
            judgment_count=sum(len(q["relevant"]) for q in evaluation.queries),
            created_by=evaluation.created_by,
            created_at=evaluation.created_at,
            latest_run=EvaluationRunOut.of(latest) if latest is not None else None,
        )


class StoredQuery(BaseModel):
    id: str
    text: str
    #: Each judged document by its id, with its grade.
    relevant: dict[str, int]


class EvaluationDetail(EvaluationOut):
    queries: list[StoredQuery]
