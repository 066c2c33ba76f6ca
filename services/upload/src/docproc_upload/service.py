"""The upload service's logic: knowledge bases, document intake, status, search, deletion.

Sync sources and runs live in ``docproc_upload.sync_sources``.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from docproc_common.access import Access, resolve_collection, resolve_kb
from docproc_common.auth import EDIT, Principal
from docproc_common.bus.outbox import enqueue
from docproc_common.db.models import (
    DocumentStatus,
    KnowledgeBase,
    RagDocument,
    Scope,
)
from docproc_common.db.vector_tables import validate_collection_name
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.errors import (
    CollectionNotFound,
    Conflict,
    FieldError,
    Forbidden,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
)
from docproc_common.events import DocumentAccepted
from docproc_common.formats import check_supported
from docproc_common.ingestion import ROOT, merge_config
from docproc_common.runtime import Runtime
from docproc_common.settings import Settings
from docproc_common.storage import new_storage_path
from docproc_common.vectorstore import (
    DEFAULT_TEXT_SEARCH_CONFIG,
    SearchFilters,
    count_vectors,
    text_search_config_exists,
)
from docproc_common.vectorstore import search as vector_search
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload import repository
from docproc_upload.audit import record
from docproc_upload.embeddings.service import EMBEDDING_FIELDS, choose_embedding, move_embedding
from docproc_upload.inputs import column_length
from docproc_upload.metrics import DOCUMENTS, REJECTIONS, UPLOAD_BYTES
from docproc_upload.schemas import (
    CollectionInfo,
    IngestionStatus,
    KnowledgeBaseCreate,
    KnowledgeBasePatch,
    RAGIngestResponse,
    SearchHit,
    SearchRequest,
)

log = logging.getLogger(__name__)


def _derive_name(display: str) -> str:
    stem = "".join(ch if ch.isascii() and ch.isalnum() else "_" for ch in display.lower()).strip(
        "_"
    )
    stem = "_".join(p for p in stem.split("_") if p) or "kb"
    if stem[0].isdigit():
        stem = f"kb_{stem}"
    return f"{stem[:38]}_{secrets.token_hex(3)}"


def _scope_for(principal: Principal, requested: str | None) -> Scope:
    scope = (
        Scope(requested)
        if requested
        else (Scope.ORG if principal.organization_id else Scope.PERSONAL)
    )
    if scope is Scope.APP and not principal.app_admin:
        raise Forbidden("Only an app admin may create an app-scoped knowledge base")
    if scope is Scope.ORG and (not principal.organization_id or not principal.has(EDIT)):
        raise Forbidden(
            "Creating an organization knowledge base needs collections:edit in an organization"
        )
    return scope


def _default_is_for_the_app_admin(principal: Principal) -> None:
    if not principal.app_admin:
        raise Forbidden(
            "Only the app admin sets or unsets an organization's default knowledge base",
            fields=[FieldError("is_default", "app admin only")],
        )


async def _text_search_config(
    session: AsyncSession, given: str | None, existing: Sequence[KnowledgeBase]
) -> str:
    """The new base's text-search configuration: the collection's when the name exists
    (its table's keyword column was generated with it), else ``given`` or ``simple``."""
    if existing:
        theirs = existing[0].text_search_config
        if given is not None and given != theirs:
            raise InvalidInput(
                f"The collection '{existing[0].collection_name}' reads its keyword index "
                f"with the '{theirs}' text-search configuration; a knowledge base on the "
                "same name adopts it",
                fields=[FieldError("text_search_config", "contradicts the existing collection")],
            )
        return theirs
    if given is None:
        return DEFAULT_TEXT_SEARCH_CONFIG
    if not await text_search_config_exists(session, given):
        raise InvalidInput(
            f"'{given}' is not a text-search configuration of the database "
            "(SELECT cfgname FROM pg_ts_config lists them: simple, english, spanish, ...)",
            fields=[FieldError("text_search_config", "not a text-search configuration")],
        )
    return given


async def create_kb(
    session: AsyncSession, principal: Principal, body: KnowledgeBaseCreate, settings: Settings
) -> KnowledgeBase:
    if body.is_default:
        _default_is_for_the_app_admin(principal)
    scope = _scope_for(principal, body.scope)
    if body.collection_name is not None:
        name = validate_collection_name(body.collection_name)
    else:
        name = _derive_name(body.name)
    await repository.lock_name(session, name, wait_s=1.0)
    if await repository.is_reserved(session, name):
        raise Conflict(
            f"The collection name '{name}' is being torn down; try again later",
            fields=[FieldError("collection_name", "reserved by a pending deletion")],
        )
    existing = await repository.kbs_named(session, name)
    if not existing and not principal.app_admin and await repository.unowned_content(session, name):
        raise Conflict(
            f"The collection name '{name}' is already taken",
            fields=[FieldError("collection_name", "already taken")],
        )
    if existing:
        reachable = [await _reaches(session, principal, kb) for kb in existing]
        if not all(reachable):
            raise Conflict(
                f"The collection name '{name}' is already taken",
                fields=[FieldError("collection_name", "already taken")],
            )
    organization_id = principal.organization_id if scope is not Scope.APP else None
    choice = await choose_embedding(
        session,
        principal,
        settings,
        scope=scope,
        organization_id=organization_id,
        provider=body.embedding_provider,
        model=body.embedding_model,
        secret_id=body.embedding_secret_id,
        base_url=body.embedding_base_url,
        endpoint_id=body.embedding_endpoint_id,
        existing=existing,
    )
    text_search_config = await _text_search_config(session, body.text_search_config, existing)
    kb = KnowledgeBase(
        name=body.name,
        collection_name=name,
        scope=scope.value,
        owner_id=principal.user_id,
        organization_id=organization_id,
        embedding_provider=choice.provider,
        embedding_model=choice.model,
        embedding_dim=choice.dimensions,
        embedding_secret_id=choice.secret_id,
        embedding_base_url=choice.base_url,
        embedding_endpoint_id=choice.endpoint_id,
        ingestion_config=body.ingestion_config.model_dump(mode="json"),
        text_search_config=text_search_config,
        is_default=body.is_default,
    )
    session.add(kb)
    await session.flush()
    await record(
        session,
        principal,
        "knowledge_base.created",
        target=str(kb.id),
        organization_id=kb.organization_id,
        details={"collection_name": name, "scope": kb.scope},
    )
    return kb


async def _kb_to_patch(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID, sent: set[str]
) -> KnowledgeBase:
    """The base resolved for editing; the app admin changing only ``is_default`` (the one
    power here that is theirs) needs no further reach."""
    if sent <= {"is_default"} and principal.app_admin:
        kb = await session.get(KnowledgeBase, kb_id)
        if kb is None:
            raise CollectionNotFound()
        return kb
    return await resolve_kb(session, principal, kb_id, Access.EDIT)


async def update_kb(
    session: AsyncSession,
    principal: Principal,
    settings: Settings,
    kb_id: uuid.UUID,
    patch: KnowledgeBasePatch,
) -> KnowledgeBase:
    """``PATCH /kb/{id}``: every field sent is checked before anything changes (one transaction).

    ``ingestion_config`` is merged with the stored configuration and the pair validated
    as one (400 naming ``ingestion_config.<field>``). What is indexed keeps its chunks
    until ``POST /kb/{id}/reindex`` re-parses it.
    """
    sent = set(patch.model_fields_set)
    if "is_default" in sent:
        _default_is_for_the_app_admin(principal)
        if patch.is_default is None:
            raise InvalidInput(
                "is_default is true or false", fields=[FieldError("is_default", "not a boolean")]
            )
    kb = await _kb_to_patch(session, principal, kb_id, sent)
    config = None
    if "ingestion_config" in sent:
        if patch.ingestion_config is None:
            raise InvalidInput(
                "The ingestion configuration cannot be removed; send the settings that change",
                fields=[FieldError(ROOT, "must be an object")],
            )
        config = merge_config(kb.ingestion_config, patch.ingestion_config)
    if EMBEDDING_FIELDS & sent:
        await move_embedding(session, principal, settings, kb, patch)
    if config is not None and config.model_dump(mode="json") != kb.ingestion_config:
        kb.ingestion_config = config.model_dump(mode="json")
        await record(
            session,
            principal,
            "kb.ingestion_config_changed",
            target=str(kb.id),
            organization_id=kb.organization_id,
            details={"changed": sorted(patch.ingestion_config or {})},
        )
    if patch.is_default is not None and patch.is_default != kb.is_default:
        kb.is_default = patch.is_default
        await record(
            session,
            principal,
            "kb.default_set" if kb.is_default else "kb.default_unset",
            target=str(kb.id),
            organization_id=kb.organization_id,
        )
    await session.flush()
    return kb


async def _reaches(session: AsyncSession, principal: Principal, kb: KnowledgeBase) -> bool:
    try:
        await resolve_kb(session, principal, kb.id, Access.EDIT)
    except NotFound:
        return False
    return True


@dataclass(frozen=True, slots=True)
class IncomingFile:
    filename: str
    data: bytes
    content_type: str | None


def parse_override(raw: str | None) -> dict[str, object] | None:
    if raw is None or not raw.strip():
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            "The ingestion field is not valid JSON",
            fields=[FieldError("ingestion_config", "not valid JSON")],
        ) from exc
    if not isinstance(value, dict):
        raise InvalidInput(
            "The ingestion field must be a JSON object",
            fields=[FieldError("ingestion_config", "must be an object")],
        )
    return value


async def kb_to_ingest_into(session: AsyncSession, principal: Principal, name: str) -> uuid.UUID:
    """``POST /rag/collections/{name}/ingest``: the one knowledge base on ``name`` the caller
    may edit. None is "Collection not found" (as for a denial); several are refused rather
    than guessed between (an organization's base and its owner's personal twin)."""
    validate_collection_name(name)
    kbs = await resolve_collection(session, principal, name, Access.EDIT)
    if len(kbs) > 1:
        raise Conflict(
            f"The collection name '{name}' holds {len(kbs)} knowledge bases you can edit; "
            "upload into one of them with POST /api/v1/kb/{kb_id}/documents",
            details={"knowledge_base_ids": [str(kb.id) for kb in kbs]},
        )
    return kbs[0].id


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_document_date(raw: str | None) -> date | None:
    """The uploader's ``document_date``: a calendar date ``YYYY-MM-DD``, or None when blank."""
    value = (raw or "").strip()
    if not value:
        return None
    try:
        if not _ISO_DATE.fullmatch(value):
            raise ValueError(value)
        return date.fromisoformat(value)
    except ValueError as exc:
        raise InvalidInput(
            "document_date must be a calendar date written YYYY-MM-DD",
            fields=[FieldError("document_date", "not a date")],
        ) from exc


MAX_UNIT_CHARS = column_length(RagDocument.organizational_unit)


def parse_organizational_unit(raw: str | None) -> str | None:
    """The uploader's ``organizational_unit``: trimmed, None when blank, at most the column."""
    unit = (raw or "").strip()
    if len(unit) > MAX_UNIT_CHARS:
        raise InvalidInput(
            f"organizational_unit may be at most {MAX_UNIT_CHARS} characters",
            fields=[FieldError("organizational_unit", "too long")],
        )
    return unit or None


async def upload_document(
    runtime: Runtime,
    principal: Principal,
    kb_id: uuid.UUID,
    incoming: IncomingFile,
    ingestion: str | None,
    organizational_unit: str | None,
    document_date: str | None = None,
    *,
    replace: bool = False,
) -> RAGIngestResponse:
    """Validate everything, store the original, then commit the row and its event together.

    Every refusal happens before the file is stored and before any row exists. With
    ``replace`` the row is marked to retire the earlier documents of its name in the base
    once it is ``done`` (the embedder's completion, ``documents.retire_replaced``).
    """
    max_bytes = runtime.settings.limits.max_upload_size_mb * 1024 * 1024
    async with runtime.sessionmaker() as session:
        kb = await resolve_kb(session, principal, kb_id, Access.EDIT)
        if len(incoming.data) > max_bytes:
            REJECTIONS.labels("too_large").inc()
            raise PayloadTooLarge(
                f"The file is larger than MAX_UPLOAD_SIZE_MB ({runtime.settings.limits.max_upload_size_mb} MB)",
                fields=[FieldError("file", "too large")],
            )
        config = merge_config(kb.ingestion_config, parse_override(ingestion))
        own_date = parse_document_date(document_date)
        unit = parse_organizational_unit(organizational_unit)
        try:
            ext = check_supported(incoming.filename, config.parser)
        except InvalidInput:
            REJECTIONS.labels("unsupported_type").inc()
            raise
        if await repository.is_reserved(session, kb.collection_name):
            raise Conflict("The collection is being deleted; the upload was not accepted")
        collection, kb_org, kb_ident = kb.collection_name, kb.organization_id, kb.id
    storage_path = new_storage_path(f"rag/{collection}", incoming.filename)
    await runtime.storage.put(storage_path, incoming.data, incoming.content_type)
    try:
        async with runtime.sessionmaker() as session, session.begin():
            attempt = uuid.uuid4()
            doc = RagDocument(
                collection_name=collection,
                knowledge_base_id=kb_ident,
                organization_id=kb_org,
                uploaded_by=principal.user_id,
                filename=incoming.filename[:1024],
                filesize=len(incoming.data),
                filetype=ext,
                status=DocumentStatus.PROCESSING,
                storage_path=storage_path,
                source="upload",
                organizational_unit=unit,
                document_date=own_date,
                ingestion_config=config.model_dump(mode="json"),
                attempt_id=attempt,
                replace_by_name=replace,
            )
            session.add(doc)
            await session.flush()
            await enqueue(
                session,
                DocumentAccepted(
                    document_id=doc.id,
                    attempt_id=attempt,
                    collection_name=collection,
                    knowledge_base_id=kb_ident,
                    storage_path=storage_path,
                    filename=doc.filename,
                    filetype=ext,
                    ingestion_config=doc.ingestion_config,
                ),
            )
    except BaseException:
        await runtime.storage.delete(storage_path)
        raise
    UPLOAD_BYTES.labels("knowledge_base").observe(len(incoming.data))
    DOCUMENTS.labels("accept", "ok").inc()
    return RAGIngestResponse(
        message="The document was accepted and is being processed",
        filename=incoming.filename,
        collection_name=collection,
        tracking_id=doc.id,
    )


def _status(counts: dict[str, int]) -> IngestionStatus:
    processing = counts.get(DocumentStatus.PROCESSING, 0)
    return IngestionStatus(
        indexing_status="indexing" if processing else "complete",
        processing_count=processing,
        indexed_count=counts.get(DocumentStatus.DONE, 0),
        failed_count=counts.get(DocumentStatus.ERROR, 0),
        document_count=sum(counts.values()),
    )


async def ingestion_status(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID
) -> IngestionStatus:
    kb = await resolve_kb(session, principal, kb_id, Access.VIEW)
    return _status(await repository.status_counts(session, [kb]))


async def collection_info(session: AsyncSession, principal: Principal, name: str) -> CollectionInfo:
    validate_collection_name(name)
    kbs = await resolve_collection(session, principal, name, Access.VIEW)
    status = _status(await repository.status_counts(session, kbs))
    vectors = await count_vectors(
        session, name, [kb.id for kb in kbs], include_operator=repository.adopts_operator(kbs)
    )
    return CollectionInfo(collection_name=name, total_vectors=vectors, **status.model_dump())


_LEGACY_FILTER = "parent_doc_id == "


def _filters(req: SearchRequest) -> SearchFilters:
    f = req.filters
    parent: uuid.UUID | None = f.parent_doc_id if f else None
    if req.filter is not None:
        expr = req.filter.strip()
        if f is not None and f.parent_doc_id is not None:
            raise InvalidInput(
                "Give either the legacy filter string or filters.parent_doc_id, not both",
                fields=[FieldError("filter", "conflicts with filters.parent_doc_id")],
            )
        value = expr[len(_LEGACY_FILTER) :].strip() if expr.startswith(_LEGACY_FILTER) else ""
        try:
            parent = uuid.UUID(value.strip("\"'"))
        except ValueError as exc:
            raise InvalidInput(
                'The filter string only accepts parent_doc_id == "<id>"; use filters instead',
                fields=[FieldError("filter", "unsupported expression")],
            ) from exc
    if f is None:
        return SearchFilters(parent_doc_id=parent)
    return SearchFilters(
        source=f.source,
        document_type=f.document_type,
        organizational_unit=f.organizational_unit,
        date_from=f.date_from,
        date_to=f.date_to,
        parent_doc_id=parent,
    )


def billing_kb(principal: Principal, kbs: list[KnowledgeBase]) -> KnowledgeBase:
    """Whose embedding configuration (and key) answers a query on a shared name.

    The caller's own organization first, then an app-scoped base, never a third
    tenant's: resolving to another organization's row would open *its* key and
    send this caller's text through it.
    """
    for kb in kbs:
        if principal.organization_id and kb.organization_id == principal.organization_id:
            return kb
    for kb in kbs:
        if kb.scope == Scope.APP:
            return kb
    return kbs[0]


async def _searched_bases(
    session: AsyncSession, principal: Principal, req: SearchRequest
) -> list[tuple[str, list[KnowledgeBase]]]:
    """The bases a search reads, by collection name, all resolved before a vector is read.

    A name reaches every base on it the caller may view. ``knowledge_base_ids`` (an agent
    bound to bases) are exactly those bases, names never re-resolved: two bound bases on
    one name are searched together and the name's other bases are not. Any one the caller
    cannot view refuses the whole search as "Collection not found".
    """
    if req.knowledge_base_ids is not None:
        by_name: dict[str, list[KnowledgeBase]] = {}
        for kb_id in dict.fromkeys(req.knowledge_base_ids):
            kb = await resolve_kb(session, principal, kb_id, Access.VIEW)
            by_name.setdefault(kb.collection_name, []).append(kb)
        return list(by_name.items())
    resolved: list[tuple[str, list[KnowledgeBase]]] = []
    for name in dict.fromkeys(req.collections or []):
        validate_collection_name(name, field="collections")
        resolved.append((name, await resolve_collection(session, principal, name, Access.VIEW)))
    return resolved


async def search(
    runtime: Runtime, clients: EmbeddingClients, principal: Principal, req: SearchRequest
) -> list[SearchHit]:
    filters = _filters(req)
    async with runtime.sessionmaker() as session, session.begin():
        resolved = await _searched_bases(session, principal, req)
        hits: list[SearchHit] = []
        for name, kbs in resolved:
            billed = billing_kb(principal, kbs)
            query = None
            if req.mode != "keyword":  # a keyword search embeds nothing
                client = await clients.for_collection(billed, session)
                query = (await client.embed([req.query]))[0]
            for h in await vector_search(
                session,
                name,
                query,
                knowledge_base_ids=[kb.id for kb in kbs],
                top_k=req.top_k,
                filters=filters,
                include_operator=repository.adopts_operator(kbs),
                mode=req.mode,
                text_query=req.query,
                text_search_config=billed.text_search_config,
            ):
                hits.append(
                    SearchHit(
                        collection_name=name,
                        document_id=h.tracking_id,
                        vector_document_id=h.document_id,
                        chunk_no=h.chunk_no,
                        filename=h.filename,
                        content=h.content,
                        score=h.score,
                        metadata=h.metadata,
                    )
                )
    hits.sort(key=lambda h: h.score, reverse=True)
    return hits[: req.top_k]
