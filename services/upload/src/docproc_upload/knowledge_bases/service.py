"""Knowledge bases: creation, settings, reindexing, grants, and deletion through durable teardown.

Deleting removes rows inside the request and commits a ``collection_teardowns``
reservation with them; the physical table and the files go only after commit,
in the teardown service. A rollback therefore keeps the table next to the rows
it restores, and a crash after commit is finished by redelivery or the hourly
sweep. While the reservation exists the name is not free: a claim, an upload and
a worker's vector write all refuse it.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Sequence

from docproc_common.auth import EDIT, Principal
from docproc_common.bulkload import index_state
from docproc_common.db.models import (
    CollectionGrant,
    DocumentStatus,
    KnowledgeBase,
    Scope,
)
from docproc_common.db.vector_tables import validate_collection_name
from docproc_common.documents import Release, accept_document
from docproc_common.errors import (
    CollectionNotFound,
    Conflict,
    FieldError,
    Forbidden,
    InvalidInput,
    NotFound,
)
from docproc_common.formats import Capabilities, check_supported
from docproc_common.ingestion import IngestionConfig
from docproc_common.names import is_reserved, kbs_named, lock_name
from docproc_common.rerank.client import RerankConfig
from docproc_common.settings import Settings
from docproc_common.unfiled import adopts_operator
from docproc_common.vectorstore import (
    DEFAULT_TEXT_SEARCH_CONFIG,
    DEFAULT_VECTOR_TYPE,
    HNSW_MAX_DIMENSIONS,
    VectorType,
    text_search_config_exists,
)
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.access import Access, resolve_kb
from docproc_upload.audit import record
from docproc_upload.embeddings.service import (
    EMBEDDING_FIELDS,
    check_reranker,
    choose_embedding,
    move_embedding,
)
from docproc_upload.ingestion_config import ROOT, check_secret_bindings, merge_config
from docproc_upload.knowledge_bases import repository
from docproc_upload.knowledge_bases.schemas import (
    CollectionDeletedOut,
    IngestionStatus,
    KnowledgeBaseCreate,
    KnowledgeBasePatch,
    ReindexOut,
)
from docproc_upload.rag_documents import repository as documents
from docproc_upload.sync_sources.repository import deactivate_sources_for_kb


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


def _vector_type(given: VectorType | None, existing: Sequence[KnowledgeBase]) -> str:
    """The new base's vector type: the collection's when the name exists (its table was
    created with it), else ``given`` or ``DEFAULT_VECTOR_TYPE``."""
    if not existing:
        return given or DEFAULT_VECTOR_TYPE
    theirs = existing[0].vector_type
    if given is not None and given != theirs:
        raise InvalidInput(
            f"The collection '{existing[0].collection_name}' stores its embeddings as "
            f"'{theirs}'; a knowledge base on the same name adopts it",
            fields=[FieldError("vector_type", "contradicts the existing collection")],
        )
    return theirs


def _fits_the_index(model: str, dimensions: int, vector_type: str) -> None:
    """A new collection's embeddings fit its HNSW index (``HNSW_MAX_DIMENSIONS``): pgvector
    refuses the index on wider ones, so the first write would fail."""
    limit = HNSW_MAX_DIMENSIONS[vector_type]
    if dimensions <= limit:
        return
    wider = [t for t, most in HNSW_MAX_DIMENSIONS.items() if most >= dimensions]
    remedy = (
        f'create it with "vector_type": "{wider[0]}" (at most {HNSW_MAX_DIMENSIONS[wider[0]]})'
        if wider
        else f"choose a model of at most {max(HNSW_MAX_DIMENSIONS.values())} dimensions"
    )
    raise InvalidInput(
        f"The model '{model}' embeds at {dimensions} dimensions; the HNSW index of a "
        f"'{vector_type}' collection takes at most {limit}: {remedy}",
        fields=[FieldError("embedding_model", f"{dimensions} dimensions exceed {limit}")],
    )


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
    await lock_name(session, name, wait_s=1.0)
    if await is_reserved(session, name):
        raise Conflict(
            f"The collection name '{name}' is being torn down; try again later",
            fields=[FieldError("collection_name", "reserved by a pending deletion")],
        )
    existing = await kbs_named(session, name)
    if (
        not existing
        and not principal.app_admin
        and await repository.unowned_content(session, name, principal.organization_id)
    ):
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
    await check_secret_bindings(
        session, principal, body.ingestion_config, organization_id=organization_id, kept=None
    )
    rerank = await check_reranker(
        session, principal, settings, body.rerank, scope=scope, organization_id=organization_id
    )
    text_search_config = await _text_search_config(session, body.text_search_config, existing)
    vector_type = _vector_type(body.vector_type, existing)
    if not existing:
        _fits_the_index(choice.model, choice.dimensions, vector_type)
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
        vector_type=vector_type,
        rerank=rerank.to_json() if rerank is not None else None,
        hybrid_vector_weight=body.hybrid_vector_weight,
        is_default=body.is_default,
    )
    session.add(kb)
    await session.flush()
    await record(
        session,
        principal,
        "knowledge_base.created",
        kb,
        {"collection_name": name, "scope": kb.scope},
    )
    return kb


async def _kb_to_patch(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID, sent: set[str]
) -> KnowledgeBase:
    """The base resolved for editing; the app admin changing only ``is_default`` (the one
    power here that is theirs) needs no further reach."""
    if sent <= {"is_default"} and principal.app_admin:
        kb = await repository.kb(session, kb_id)
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
        await check_secret_bindings(
            session,
            principal,
            config,
            organization_id=kb.organization_id,
            kept=kb.ingestion_config,
        )
    rerank_changed = False
    if "rerank" in sent:
        kept = RerankConfig.of(kb.rerank)
        rerank = await check_reranker(
            session,
            principal,
            settings,
            patch.rerank,
            scope=Scope(kb.scope),
            organization_id=kb.organization_id,
            kept=kept,
        )
        rerank_changed = rerank != kept
    if EMBEDDING_FIELDS & sent:
        await move_embedding(session, principal, settings, kb, patch)
    if rerank_changed:
        kb.rerank = rerank.to_json() if rerank is not None else None
        await record(
            session,
            principal,
            "kb.rerank_changed",
            kb,
            {"provider": rerank.provider if rerank is not None else None},
        )
    if "hybrid_vector_weight" in sent and patch.hybrid_vector_weight != kb.hybrid_vector_weight:
        await record(
            session,
            principal,
            "kb.hybrid_vector_weight_changed",
            kb,
            {"from": kb.hybrid_vector_weight, "to": patch.hybrid_vector_weight},
        )
        kb.hybrid_vector_weight = patch.hybrid_vector_weight
    if config is not None and config.model_dump(mode="json") != kb.ingestion_config:
        kb.ingestion_config = config.model_dump(mode="json")
        await record(
            session,
            principal,
            "kb.ingestion_config_changed",
            kb,
            {"changed": sorted(patch.ingestion_config or {})},
        )
    if patch.is_default is not None and patch.is_default != kb.is_default:
        kb.is_default = patch.is_default
        await record(
            session, principal, "kb.default_set" if kb.is_default else "kb.default_unset", kb
        )
    await session.flush()
    return kb


async def _reaches(session: AsyncSession, principal: Principal, kb: KnowledgeBase) -> bool:
    try:
        await resolve_kb(session, principal, kb.id, Access.EDIT)
    except NotFound:
        return False
    return True


def status_of(counts: dict[str, int]) -> IngestionStatus:
    processing = counts.get(DocumentStatus.PROCESSING, 0)
    return IngestionStatus(
        indexing_status="indexing" if processing else "complete",
        processing_count=processing,
        indexed_count=counts.get(DocumentStatus.DONE, 0),
        failed_count=counts.get(DocumentStatus.ERROR, 0),
        document_count=sum(counts.values()),
    )


async def status_for(
    session: AsyncSession, name: str, kbs: Sequence[KnowledgeBase]
) -> IngestionStatus:
    """The documents' counts (``status_of``) and the vector index's state, for these bases."""
    status = status_of(await documents.status_counts(session, list(kbs)))
    state, pending = await index_state(
        session, name, [kb.id for kb in kbs], include_operator=adopts_operator(kbs)
    )
    return status.model_copy(update={"vector_index": state, "vector_rows_pending": pending})


async def ingestion_status(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID
) -> IngestionStatus:
    kb = await resolve_kb(session, principal, kb_id, Access.VIEW)
    return await status_for(session, kb.collection_name, [kb])


async def tear_down(
    session: AsyncSession,
    principal: Principal,
    name: str,
    kbs: Sequence[KnowledgeBase],
) -> CollectionDeletedOut:
    """Remove ``kbs`` and reserve the name for the teardown.

    A default base is emptied instead of deleted. Their own rows go, and the unfiled rows
    they take that no base left on the name takes too (``documents.Release``). Where the
    table stays, an emptied base loses only the chunks of those rows, and a chunk with no
    row stays with it. The last bases on a name drop its table, unless it holds an unfiled
    chunk they do not take (an operator ingest under an organization's base, another
    tenant's): a caller has no authority over that, so only what the bases take is purged.
    The rows a dropped table leaves behind are marked failed by the teardown service.
    """
    release = await Release.plan(session, name, kbs)
    emptied = {kb.id for kb in kbs if kb.is_default}
    drops_table = not release.siblings and not await repository.holds_unfiled_beyond(
        session,
        name,
        operator=release.taken.operator,
        organization_ids=sorted(release.taken.organization_ids),
    )
    await release.reserve(session, drop_table=drops_table, emptied=emptied)
    for kb in kbs:
        if kb.id not in emptied:  # its sources keep their config, unlinked and inactive
            await deactivate_sources_for_kb(session, kb.id)
    await repository.delete_kbs(session, [kb.id for kb in kbs if kb.id not in emptied])
    docs = release.docs
    for kb in kbs:
        await record(
            session,
            principal,
            "knowledge_base.emptied" if kb.id in emptied else "knowledge_base.deleted",
            kb,
            {
                "collection_name": name,
                "documents": sum(d.knowledge_base_id == kb.id for d in docs),
            },
        )
    return CollectionDeletedOut(
        collection_name=name,
        knowledge_bases_deleted=len(kbs) - len(emptied),
        knowledge_bases_emptied=len(emptied),
        documents_deleted=len(docs),
        table_dropped=drops_table,
    )


async def delete_kb(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID
) -> CollectionDeletedOut:
    """``DELETE /kb/{id}``: this knowledge base; a sibling on the same name keeps the table."""
    kb = await resolve_kb(session, principal, kb_id, Access.EDIT)
    await lock_name(session, kb.collection_name)
    kb = await resolve_kb(session, principal, kb_id, Access.EDIT)
    return await tear_down(session, principal, kb.collection_name, [kb])


async def owned(
    session: AsyncSession,
    principal: Principal,
    *,
    organization_id: str | None = None,
    user_id: str | None = None,
) -> dict[str, list[uuid.UUID]]:
    """An organization or an account is gone: the knowledge bases it owned, by name.

    Called by the platform's identity side (app admins only). An organization takes
    its org and personal bases; an account takes its personal bases. Each name is torn
    down in its own transaction (``tear_down_owned``).
    """
    if not principal.app_admin:
        raise Forbidden("Only an app admin may remove an organization's or an account's data")
    kbs = await repository.kbs_owned(session, organization_id=organization_id, user_id=user_id)
    by_name: dict[str, list[uuid.UUID]] = {}
    for kb in kbs:
        by_name.setdefault(kb.collection_name, []).append(kb.id)
    return dict(sorted(by_name.items()))


async def tear_down_owned(
    session: AsyncSession, principal: Principal, name: str, ids: Sequence[uuid.UUID]
) -> CollectionDeletedOut | None:
    """Tear down the gone owner's bases ``ids`` on ``name``; None when none is left."""
    await lock_name(session, name)
    rows = [kb for kb in await kbs_named(session, name) if kb.id in set(ids)]
    for kb in rows:
        kb.is_default = False  # the owner is gone: nothing to keep a default for
    return await tear_down(session, principal, name, rows) if rows else None


async def reindex_kb(
    session: AsyncSession, principal: Principal, settings: Settings, kb_id: uuid.UUID
) -> ReindexOut:
    """``POST /kb/{id}/reindex``: re-parse every stored original with the base's configuration.

    Through the one pipeline (``DocumentAccepted`` -> parser -> embedder), a new attempt
    per document; each document keeps its chunks until its new set replaces them in one
    transaction, so a search never finds the base empty. Its documents are ``processing``
    meanwhile, so ``GET /kb/{id}/ingestion`` says ``indexing``. A synced document keeps no
    original and a document the configured parser does not read keeps its chunks; both
    are counted, not queued.
    """
    kb = await resolve_kb(session, principal, kb_id, Access.EDIT)
    if await is_reserved(session, kb.collection_name):
        raise Conflict("The collection is being deleted; nothing was queued")
    config = IngestionConfig.model_validate(kb.ingestion_config)
    stored = config.model_dump(mode="json")
    capabilities = Capabilities.declared(settings.formats)
    queued = no_original = unsupported = 0
    for doc in await documents.documents_of(session, [kb.id], lock=True):
        if not doc.storage_path:
            no_original += 1
            continue
        try:
            check_supported(doc.filename, config.parser, capabilities)
        except InvalidInput:
            unsupported += 1
            continue
        doc.ingestion_config = stored
        await accept_document(session, doc)
        queued += 1
    await record(
        session,
        principal,
        "kb.reindexed",
        kb,
        {"queued": queued, "skipped": no_original + unsupported},
    )
    return ReindexOut(
        knowledge_base_id=kb_id,
        queued=queued,
        skipped_no_original=no_original,
        skipped_unsupported=unsupported,
    )


async def grant(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID, user_id: str, permission: str
) -> None:
    """An explicit grant widens what a user's role allows on this one collection."""
    kb = await resolve_kb(session, principal, kb_id, Access.EDIT)
    existing = await repository.grant_of(session, kb.id, user_id)
    if existing is None:
        session.add(
            CollectionGrant(knowledge_base_id=kb.id, user_id=user_id, permission=permission)
        )
    else:
        existing.permission = permission
    await record(
        session,
        principal,
        "knowledge_base.granted",
        kb,
        {"user_id": user_id, "permission": permission},
    )


async def revoke(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID, user_id: str
) -> None:
    kb = await resolve_kb(session, principal, kb_id, Access.EDIT)
    await repository.delete_grant(session, kb.id, user_id)
    await record(session, principal, "knowledge_base.revoked", kb, {"user_id": user_id})
