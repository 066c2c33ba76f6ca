"""A knowledge base's evaluation sets and their runs: how well each search mode finds the
documents judged relevant, on the base as it stands, kept with the settings it had.

A set is queries with graded judgments (``POST /kb/{id}/evaluations``, or BEIR's
``queries.jsonl`` and a qrels file), each judged document resolved to a document of the
base when the set is made. A run (``score``) sends every query through the search of
``POST /rag/search`` (``search.service.search_plan``) in each mode, without the rerank
stage, and, when the base names a reranker, once more as a search naming no mode is
answered with it (``rerank``), ``top_k`` 100 each; it ranks
documents by their best chunk and measures the ranking with ``ir_measures`` (trec_eval's
nDCG@10, recall@10 and @100, MRR@10; graded judgments, linear gain). A set holds at most
``MAX_QUERIES`` queries, so a run answers in seconds; one set runs once at a time
(``exclusive_run``), whoever asks (a person, the schedule on any replica).
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import ir_measures
from docproc_common.auth import Principal
from docproc_common.db.models import (
    EvaluationRun,
    EvaluationTrigger,
    KnowledgeBase,
    RetrievalEvaluation,
)
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.errors import AppError, Conflict, FieldError, InvalidInput, NotFound
from docproc_common.rerank.client import Reranker
from docproc_common.runtime import Runtime
from docproc_common.splitters import SPLITTER_VERSION
from ir_measures import MRR, R, nDCG
from pydantic import ValidationError
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.access import Access, resolve_kb
from docproc_upload.audit import record
from docproc_upload.evaluations import repository
from docproc_upload.evaluations.schemas import (
    EVALUATION_NAME_CHARS,
    MAX_EVALUATIONS,
    MAX_GRADE,
    MAX_QUERIES,
    EvaluationCreate,
    EvaluationDetail,
    EvaluationOut,
    EvaluationRunOut,
    Mode,
    ModeScores,
    StoredQuery,
)
from docproc_upload.inputs import nul_path
from docproc_upload.metrics import EVALUATION_RUNS
from docproc_upload.search.repository import SearchFilters
from docproc_upload.search.schemas import SearchHit, SearchRequest
from docproc_upload.search.service import (
    HYBRID_VECTOR_WEIGHT,
    KeywordIndexMissing,
    PlanCache,
    SearchMode,
    SearchPlan,
    plan_rerank,
    query_client,
    search_plan,
)

MODES: tuple[SearchMode, ...] = ("vector", "keyword", "hybrid")
#: Hits a search of a run asks for: recall@100 needs them.
TOP_K = 100
#: ``ModeScores``' fields and the measure each holds.
MEASURES = {
    "ndcg_at_10": nDCG @ 10,
    "recall_at_10": R @ 10,
    "recall_at_100": R @ 100,
    "mrr_at_10": MRR @ 10,
}
#: Searches of one run in flight at once: the local model embeds their queries together.
SEARCHES_AT_ONCE = 4
#: Unknown documents an error names.
NAMED_AT_MOST = 10

Qrels = dict[str, dict[str, int]]
Ranking = dict[str, dict[str, float]]


def stem(filename: str) -> str:
    """A file name without its last extension (``4983.txt`` -> ``4983``), as
    ``repository.filename_stem``."""
    return re.sub(repository.STEM_PATTERN, "", filename)


def settings_snapshot(kb: KnowledgeBase) -> dict[str, Any]:
    """What a run searched with: the base's embedding, keyword configuration, vector type
    and ingestion settings, the search's default mode, the splitter's version, the base's
    reranker and the hybrid blend's vector weight."""
    return {
        "embedding_provider": kb.embedding_provider,
        "embedding_model": kb.embedding_model,
        "embedding_dim": kb.embedding_dim,
        "text_search_config": kb.text_search_config,
        "vector_type": kb.vector_type,
        "search_default_mode": SearchRequest.model_fields["mode"].default,
        "splitter_version": SPLITTER_VERSION,
        "ingestion_config": kb.ingestion_config,
        "rerank": kb.rerank,
        "hybrid_vector_weight": (
            HYBRID_VECTOR_WEIGHT if kb.hybrid_vector_weight is None else kb.hybrid_vector_weight
        ),
    }


# -- a set -----------------------------------------------------------------------------------


async def _refuse_unknown(
    session: AsyncSession, kb: KnowledgeBase, body: EvaluationCreate, *, by_stem: bool
) -> dict[str, uuid.UUID]:
    """Each document key of ``body`` -> the document of ``kb`` it names: by id or file name,
    or (``by_stem``, a BEIR corpus id) by file name without its extension. A key that names
    none or several, or a query naming one document twice, refuses the set (400)."""
    keys = {key for q in body.queries for key in q.relevant}
    ids: dict[str, uuid.UUID] = {}
    if not by_stem:
        for key in keys:
            try:
                ids[key] = uuid.UUID(key)
            except ValueError:
                continue
    names = keys - set(ids)
    rows = await repository.documents_named(
        session,
        kb,
        ids=set(ids.values()),
        filenames=() if by_stem else names,
        stems=names if by_stem else (),
    )
    listed = {ident for ident, _ in rows}
    by_name: dict[str, list[uuid.UUID]] = {}
    for ident, filename in rows:
        by_name.setdefault(stem(filename) if by_stem else filename, []).append(ident)
    found: dict[str, uuid.UUID] = {}
    problems: list[tuple[int, str, str]] = []  # (query, key, why)
    for i, query in enumerate(body.queries):
        seen: dict[uuid.UUID, str] = {}
        for key in query.relevant:
            if key in ids and ids[key] in listed:
                found[key] = ids[key]
            elif len(by_name.get(key, [])) == 1:
                found[key] = by_name[key][0]
            elif by_name.get(key):
                problems.append((i, key, f"names {len(by_name[key])} documents; use a document id"))
                continue
            else:
                problems.append((i, key, "not a document of the knowledge base"))
                continue
            if found[key] in seen:
                problems.append((i, key, f"the same document as {seen[found[key]]!r}"))
            seen[found[key]] = key
    if problems:
        raise _unknown(body, problems, by_stem=by_stem)
    return found


def _unknown(
    body: EvaluationCreate, problems: list[tuple[int, str, str]], *, by_stem: bool
) -> InvalidInput:
    named = ", ".join(dict.fromkeys(repr(key) for _, key, _ in problems[:NAMED_AT_MOST]))
    more = f" and {len(problems) - NAMED_AT_MOST} more" if len(problems) > NAMED_AT_MOST else ""
    if by_stem:
        return InvalidInput(
            f"The qrels name corpus ids that match no single document of the knowledge base: "
            f"{named}{more} (a corpus id names the document whose file name, without its "
            "extension, is that id)",
            fields=[
                FieldError("qrels", f"corpus id {key!r} of query {body.queries[i].id!r}: {why}")
                for i, key, why in problems[:NAMED_AT_MOST]
            ],
        )
    return InvalidInput(
        f"The queries judge documents that match no single document of the knowledge base: "
        f"{named}{more} (a document is named by its id or its file name)",
        fields=[
            FieldError(f"queries.{i}.relevant.{key}", why)
            for i, key, why in problems[:NAMED_AT_MOST]
        ],
    )


async def create_evaluation(
    session: AsyncSession,
    principal: Principal,
    kb_id: uuid.UUID,
    body: EvaluationCreate,
    *,
    by_stem: bool = False,
) -> EvaluationOut:
    """``POST /kb/{id}/evaluations``: the set stored with each judged document's id;
    nothing is stored when a judged document is not the base's."""
    kb = await resolve_kb(session, principal, kb_id, Access.EDIT)
    if await repository.count_evaluations(session, kb.id) >= MAX_EVALUATIONS:
        raise Conflict(
            f"The knowledge base holds {MAX_EVALUATIONS} evaluation sets, the most it may; "
            "delete one first"
        )
    documents = await _refuse_unknown(session, kb, body, by_stem=by_stem)
    evaluation = RetrievalEvaluation(
        knowledge_base_id=kb.id,
        name=body.name,
        queries=[
            {
                "id": q.id,
                "text": q.text,
                "relevant": {str(documents[key]): grade for key, grade in q.relevant.items()},
            }
            for q in body.queries
        ],
        created_by=principal.user_id,
    )
    session.add(evaluation)
    await session.flush()
    await session.refresh(evaluation, ["created_at"])
    await record(
        session,
        principal,
        "kb.evaluation_created",
        kb,
        {"evaluation_id": str(evaluation.id), "queries": len(body.queries)},
    )
    return EvaluationOut.of(evaluation, None)


async def list_evaluations(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID
) -> list[EvaluationOut]:
    kb = await resolve_kb(session, principal, kb_id, Access.VIEW)
    evaluations = await repository.evaluations_of(session, kb.id)
    latest = await repository.latest_runs(session, [e.id for e in evaluations])
    return [EvaluationOut.of(e, latest.get(e.id)) for e in evaluations]


async def _evaluation(
    session: AsyncSession, kb: KnowledgeBase, evaluation_id: uuid.UUID
) -> RetrievalEvaluation:
    evaluation = await repository.evaluation(session, kb.id, evaluation_id)
    if evaluation is None:
        raise NotFound("Evaluation not found")
    return evaluation


async def get_evaluation(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID, evaluation_id: uuid.UUID
) -> EvaluationDetail:
    kb = await resolve_kb(session, principal, kb_id, Access.VIEW)
    evaluation = await _evaluation(session, kb, evaluation_id)
    latest = (await repository.latest_runs(session, [evaluation.id])).get(evaluation.id)
    return EvaluationDetail(
        **EvaluationOut.of(evaluation, latest).model_dump(),
        queries=[StoredQuery.model_validate(q) for q in evaluation.queries],
    )


async def list_runs(
    session: AsyncSession,
    principal: Principal,
    kb_id: uuid.UUID,
    evaluation_id: uuid.UUID,
    limit: int,
) -> list[EvaluationRunOut]:
    kb = await resolve_kb(session, principal, kb_id, Access.VIEW)
    evaluation = await _evaluation(session, kb, evaluation_id)
    return [EvaluationRunOut.of(r) for r in await repository.runs(session, evaluation.id, limit)]


async def delete_evaluation(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID, evaluation_id: uuid.UUID
) -> None:
    kb = await resolve_kb(session, principal, kb_id, Access.EDIT)
    evaluation = await _evaluation(session, kb, evaluation_id)
    await repository.delete_evaluation(session, evaluation.id)
    await record(
        session, principal, "kb.evaluation_deleted", kb, {"evaluation_id": str(evaluation.id)}
    )


# -- BEIR's files ------------------------------------------------------------------------------


def _text(data: bytes, part: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"The {part} file is not UTF-8 text", fields=[FieldError(part, "not UTF-8")]
        ) from exc


def _beir_queries(data: bytes) -> dict[str, str]:
    """``queries.jsonl``: one JSON object a line, its ``_id`` and ``text``."""
    queries: dict[str, str] = {}
    for n, line in enumerate(_text(data, "queries").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            ident, text = item["_id"], item["text"]
        except (ValueError, TypeError, KeyError, RecursionError) as exc:
            raise InvalidInput(
                f"queries line {n} is not a JSON object with _id and text",
                fields=[FieldError("queries", f"line {n}: not a JSON object with _id and text")],
            ) from exc
        if not isinstance(ident, str | int) or not isinstance(text, str):
            raise InvalidInput(
                f"queries line {n}: _id is a string or a number and text a string",
                fields=[FieldError("queries", f"line {n}: _id or text of the wrong type")],
            )
        try:  # a lone surrogate (an escape such as "\ud800") is no text PostgreSQL keeps
            f"{ident}{text}".encode()
        except UnicodeEncodeError as exc:
            raise InvalidInput(
                f"queries line {n} holds a lone surrogate escape, which is not text",
                fields=[FieldError("queries", f"line {n}: not text (a lone surrogate)")],
            ) from exc
        if str(ident) in queries:
            raise InvalidInput(
                f"queries line {n} repeats the query id {str(ident)!r}",
                fields=[FieldError("queries", f"line {n}: the id {str(ident)!r} again")],
            )
        queries[str(ident)] = text
    return queries


def _beir_qrels(data: bytes, queries: Mapping[str, str]) -> Qrels:
    """A qrels file as BEIR writes it: ``query-id<TAB>corpus-id<TAB>score`` a line, under an
    optional header; the queries in the order the file first names them."""
    qrels: Qrels = {}
    for n, line in enumerate(_text(data, "qrels").splitlines(), 1):
        if not line.strip():
            continue
        columns = line.split("\t")
        if n == 1 and len(columns) == 3 and not columns[2].strip().lstrip("-").isdigit():
            continue  # the header
        if len(columns) != 3 or not columns[2].strip().isdigit():
            raise InvalidInput(
                f"qrels line {n} is not query-id, corpus-id and a score 0 to {MAX_GRADE}, "
                "separated by tabs",
                fields=[FieldError("qrels", f"line {n}: not query-id<TAB>corpus-id<TAB>score")],
            )
        query, corpus, score = columns[0].strip(), columns[1].strip(), int(columns[2])
        if query not in queries:
            raise InvalidInput(
                f"qrels line {n} judges the query {query!r}, which queries does not hold",
                fields=[FieldError("qrels", f"line {n}: query {query!r} is not in queries")],
            )
        if score > MAX_GRADE or not corpus:
            raise InvalidInput(
                f"qrels line {n}: a corpus id and a score 0 to {MAX_GRADE}",
                fields=[FieldError("qrels", f"line {n}: no corpus id or a score out of range")],
            )
        if corpus in qrels.setdefault(query, {}):
            raise InvalidInput(
                f"qrels line {n} judges {corpus!r} for {query!r} again",
                fields=[FieldError("qrels", f"line {n}: a second judgment of one pair")],
            )
        qrels[query][corpus] = score
    return qrels


def parse_beir(name: str | None, queries_file: bytes, qrels_file: bytes) -> EvaluationCreate:
    """A set from BEIR's ``queries.jsonl`` and a qrels file: the queries the qrels judge
    relevant (at least one score above 0), each corpus id kept as a document key to resolve
    by file name without its extension. Any problem is a 400 naming ``name``, ``queries``
    or ``qrels`` (with the line)."""
    if not name or not name.strip() or len(name) > EVALUATION_NAME_CHARS:
        raise InvalidInput(
            f"Name the set (1 to {EVALUATION_NAME_CHARS} characters)",
            fields=[FieldError("name", "required, at most 200 characters")],
        )
    queries = _beir_queries(queries_file)
    qrels = {q: docs for q, docs in _beir_qrels(qrels_file, queries).items() if any(docs.values())}
    if not qrels:
        raise InvalidInput(
            "The qrels judge no document relevant (a score above 0)",
            fields=[FieldError("qrels", "no relevant judgment")],
        )
    if len(qrels) > MAX_QUERIES:
        raise InvalidInput(
            f"The qrels judge {len(qrels)} queries; a set holds at most {MAX_QUERIES}: "
            "upload a sample of them",
            fields=[FieldError("qrels", f"{len(qrels)} judged queries, at most {MAX_QUERIES}")],
        )
    document = {
        "name": name.strip(),
        "queries": [{"id": q, "text": queries[q], "relevant": docs} for q, docs in qrels.items()],
    }
    nul = nul_path(document)
    if nul is not None:
        part = "name" if nul == "name" else "qrels" if ".relevant" in nul else "queries"
        raise InvalidInput(
            "The files may not contain the NUL character (U+0000)",
            fields=[FieldError(part, "contains a NUL character")],
        )
    try:
        return EvaluationCreate.model_validate(document)
    except ValidationError as exc:
        raise _beir_refusal(exc, document) from exc


def _beir_refusal(exc: ValidationError, document: dict[str, Any]) -> InvalidInput:
    """A set's limits (``EvaluationCreate``) broken by BEIR's files, named by file and query."""
    fields = []
    for error in exc.errors():
        loc = error["loc"]
        if len(loc) >= 3 and loc[0] == "queries" and isinstance(loc[1], int):
            query = document["queries"][loc[1]]["id"]
            part = "qrels" if loc[2] == "relevant" else "queries"
            fields.append(FieldError(part, f"query {query!r}: {error['msg']}"))
        else:
            fields.append(FieldError("queries", str(error["msg"])))
    return InvalidInput(
        "The files break a limit of an evaluation set: " + "; ".join(f.message for f in fields),
        fields=fields,
    )


# -- a run -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunPlan:
    """What a run searches and keeps, read in one transaction before anything is searched."""

    evaluation_id: uuid.UUID
    kb: KnowledgeBase
    queries: list[dict[str, Any]]
    #: The base searched alone, its query embedded with its own client, no rerank stage.
    plan: SearchPlan
    settings: dict[str, Any]
    missing_documents: int
    #: The base's reranker, opened; or why it could not be (the ``rerank`` mode skipped).
    reranker: Reranker | None = None
    rerank_refused: str | None = None


@dataclass(frozen=True, slots=True)
class Scored:
    started_at: datetime
    finished_at: datetime
    scores: dict[str, ModeScores] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


async def plan_run(
    session: AsyncSession,
    clients: EmbeddingClients,
    kb: KnowledgeBase,
    evaluation: RetrievalEvaluation,
) -> RunPlan:
    """The run of ``evaluation`` on ``kb``: its embedding client opened (a base without a
    usable key refuses, as its searches do), the judged documents it no longer lists counted."""
    client = await query_client(session, clients, kb, "vector")
    judged = {uuid.UUID(d) for q in evaluation.queries for d in q["relevant"]}
    listed = await repository.listed_ids(session, kb, judged)
    reranker, refused = None, None
    try:
        reranker = await plan_rerank(session, clients, kb, None)
    except AppError as exc:  # its key deleted or refused since it was set: scored without
        refused = exc.message
    return RunPlan(
        evaluation_id=evaluation.id,
        kb=kb,
        queries=list(evaluation.queries),
        plan=SearchPlan(SearchFilters(), [(kb.collection_name, [kb], kb, client)]),
        settings=settings_snapshot(kb),
        missing_documents=len(judged - listed),
        reranker=reranker,
        rerank_refused=refused,
    )


async def prepare_run(
    session: AsyncSession,
    principal: Principal,
    clients: EmbeddingClients,
    kb_id: uuid.UUID,
    evaluation_id: uuid.UUID,
) -> RunPlan:
    """``POST .../{eid}/run``: running needs what editing the base needs."""
    kb = await resolve_kb(session, principal, kb_id, Access.EDIT)
    return await plan_run(session, clients, kb, await _evaluation(session, kb, evaluation_id))


class RunInProgress(Conflict):
    def __init__(self) -> None:
        super().__init__("A run of this evaluation set is in progress; try again when it ends")


@asynccontextmanager
async def exclusive_run(runtime: Runtime, evaluation_id: uuid.UUID) -> AsyncIterator[None]:
    """Hold the set's run lock (a session advisory lock on a connection of its own) for the
    block; ``RunInProgress`` when another run holds it."""
    async with runtime.engine.connect() as connection:
        conn = await connection.execution_options(isolation_level="AUTOCOMMIT")
        if not await repository.try_lock_run(conn, evaluation_id):
            raise RunInProgress()
        try:
            yield
        finally:
            try:
                await repository.unlock_run(conn, evaluation_id)
            except BaseException:
                await conn.invalidate()  # a connection that keeps the lock goes, not to the pool
                raise


def ranked_documents(hits: Sequence[SearchHit]) -> dict[str, float]:
    """Documents ranked by their best chunk (``hits`` best first), a score by rank so that
    ties never reorder them; a chunk without a document row counts for none."""
    ranking: dict[str, float] = {}
    for hit in hits:
        if hit.document_id is not None:
            ranking.setdefault(str(hit.document_id), float(TOP_K - len(ranking)))
    return ranking


def measure(qrels: Qrels, ranking: Ranking) -> ModeScores:
    """``MEASURES`` averaged over every query of ``qrels``; one without a hit counts 0."""
    values = {name: dict.fromkeys(qrels, 0.0) for name in MEASURES}
    names = {str(m): n for n, m in MEASURES.items()}
    found = {q: docs for q, docs in ranking.items() if docs}
    if found:
        for metric in ir_measures.iter_calc(list(MEASURES.values()), qrels, found):
            values[names[str(metric.measure)]][metric.query_id] = float(metric.value)
    return ModeScores(**{name: statistics.fmean(v.values()) for name, v in values.items()})


async def _rankings(runtime: Runtime, run: RunPlan, mode: Mode, plans: PlanCache | None) -> Ranking:
    plan = run.plan
    if mode == "keyword":  # nothing to embed
        plan = replace(plan, collections=[(*c[:3], None) for c in plan.collections])
    if mode == "rerank" and run.reranker is not None:
        plan = replace(plan, rerankers={run.kb.collection_name: run.reranker})
    # ``rerank``: the request names no mode, as a search answered with the stage by default
    chosen = {} if mode == "rerank" else {"mode": mode}
    gate = asyncio.Semaphore(SEARCHES_AT_ONCE)
    ranking: Ranking = {}

    async def one(query: dict[str, Any]) -> None:
        request = SearchRequest(
            query=query["text"], knowledge_base_ids=[run.kb.id], top_k=TOP_K, **chosen
        )
        async with gate:
            ranking[query["id"]] = ranked_documents(
                await search_plan(runtime, plan, request, plans)
            )

    tasks = [asyncio.create_task(one(query)) for query in run.queries]
    try:
        await asyncio.gather(*tasks)
    except BaseException:  # the first failure stands; the other searches stop
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return ranking


async def score(runtime: Runtime, run: RunPlan, plans: PlanCache | None = None) -> Scored:
    """Every query searched in each mode (``MODES``, then ``rerank`` when the base names a
    reranker), measured off the event loop; a mode the collection cannot search (no keyword
    index, a reranker that could not be opened) is skipped with the reason."""
    started = datetime.now(UTC)
    qrels = {q["id"]: dict(q["relevant"]) for q in run.queries}
    scores: dict[str, ModeScores] = {}
    skipped: dict[str, str] = {}
    modes: list[Mode] = [*MODES, "rerank"] if run.reranker is not None else list(MODES)
    if run.rerank_refused is not None:
        skipped["rerank"] = run.rerank_refused
    for mode in modes:
        try:
            ranking = await _rankings(runtime, run, mode, plans)
        except KeywordIndexMissing as exc:
            skipped[mode] = exc.message
            continue
        scores[mode] = await runtime.pool.run(measure, qrels, ranking)
    return Scored(started, datetime.now(UTC), scores, skipped)


async def _keep(session: AsyncSession, row: EvaluationRun) -> None:
    """Insert a run; its set deleted while it ran (with its base, say) is a 404."""
    session.add(row)
    try:
        await session.flush()
    except IntegrityError as exc:
        raise NotFound("Evaluation not found: it was deleted during the run") from exc


async def record_run(
    session: AsyncSession,
    principal: Principal | None,
    run: RunPlan,
    scored: Scored,
) -> EvaluationRunOut:
    """Keep a run: a person's (``principal``, audited on the base) or the schedule's."""
    row = EvaluationRun(
        evaluation_id=run.evaluation_id,
        trigger=EvaluationTrigger.MANUAL if principal else EvaluationTrigger.SCHEDULED,
        started_by=principal.user_id if principal else None,
        started_at=scored.started_at,
        finished_at=scored.finished_at,
        scores={m: s.model_dump() for m, s in scored.scores.items()},
        skipped=scored.skipped,
        settings=run.settings,
        query_count=len(run.queries),
        missing_documents=run.missing_documents,
    )
    await _keep(session, row)
    EVALUATION_RUNS.labels(row.trigger, "ok").inc()
    if principal is not None:
        await record(
            session,
            principal,
            "kb.evaluation_run",
            run.kb,
            {"evaluation_id": str(run.evaluation_id), "run_id": str(row.id)},
        )
    return EvaluationRunOut.of(row)


async def record_failure(
    session: AsyncSession,
    kb: KnowledgeBase,
    evaluation: RetrievalEvaluation,
    started_at: datetime,
    exc: Exception,
) -> None:
    """Keep a scheduled run that scored nothing, with why (``failure``)."""
    row = EvaluationRun(
        evaluation_id=evaluation.id,
        trigger=EvaluationTrigger.SCHEDULED,
        started_at=started_at,
        finished_at=datetime.now(UTC),
        scores={},
        skipped={},
        settings=settings_snapshot(kb),
        query_count=len(evaluation.queries),
        missing_documents=0,
        error=failure(exc),
    )
    await _keep(session, row)
    EVALUATION_RUNS.labels(EvaluationTrigger.SCHEDULED, "failed").inc()


def failure(exc: Exception) -> str:
    """What a failed scheduled run keeps of its error: an ``AppError``'s message (written to
    be shown), else only its kind (the log has the rest)."""
    if isinstance(exc, AppError):
        return exc.message
    return f"{type(exc).__name__}; the upload service's log has the details"


def gauge_values(latest: Sequence[tuple[uuid.UUID, EvaluationRun]]) -> dict[tuple[str, str], float]:
    """nDCG@10 per base and mode from each set's newest scheduled run: the mean over every
    query of the base's sets (each set's mean weighted by its query count)."""
    sums: dict[tuple[str, str], list[float]] = {}
    for kb_id, run in latest:
        for mode, scores in run.scores.items():
            total = sums.setdefault((str(kb_id), mode), [0.0, 0.0])
            total[0] += scores["ndcg_at_10"] * run.query_count
            total[1] += run.query_count
    return {key: value / count for key, (value, count) in sums.items() if count}
