"""What is addressed by collection name: its status, its filter values, its deletion, search.

A name reaches every knowledge base on it the caller may view (or edit); a name the
caller reaches nothing on is "Collection not found", as a denial is.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from docproc_common.auth import Principal
from docproc_common.connectors import CONNECTORS
from docproc_common.db.models import KnowledgeBase, Scope
from docproc_common.db.vector_tables import validate_collection_name
from docproc_common.documents import CLI_SOURCE, UPLOAD_SOURCE
from docproc_common.embedding.client import EmbeddingClient, EmbeddingClients
from docproc_common.errors import FieldError, InvalidInput
from docproc_common.runtime import Runtime
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from docproc_upload.access import Access, resolve_collection, resolve_kbs
from docproc_upload.knowledge_bases import repository as knowledge_bases
from docproc_upload.knowledge_bases.schemas import CollectionDeletedOut
from docproc_upload.knowledge_bases.service import status_for, tear_down
from docproc_upload.rag_collections.schemas import CollectionInfo, SearchHit, SearchRequest
from docproc_upload.vector_search import PlanCache, SearchFilters, count_vectors
from docproc_upload.vector_search import filter_values as vector_filter_values
from docproc_upload.vector_search import search as vector_search


async def collection_info(session: AsyncSession, principal: Principal, name: str) -> CollectionInfo:
    validate_collection_name(name)
    kbs = await resolve_collection(session, principal, name, Access.VIEW)
    status = await status_for(session, name, kbs)
    vectors = await count_vectors(
        session, name, [kb.id for kb in kbs], include_operator=knowledge_bases.adopts_operator(kbs)
    )
    return CollectionInfo(collection_name=name, total_vectors=vectors, **status.model_dump())


async def delete_collection(
    session: AsyncSession, principal: Principal, name: str
) -> CollectionDeletedOut:
    """``DELETE /rag/collections/{name}``: every knowledge base on the name the caller may edit."""
    validate_collection_name(name)
    await knowledge_bases.lock_name(session, name)
    kbs = await resolve_collection(session, principal, name, Access.EDIT)
    return await tear_down(session, principal, name, kbs)


async def filter_values(session: AsyncSession, principal: Principal, name: str) -> list[str]:
    validate_collection_name(name)
    kbs = await resolve_collection(session, principal, name, Access.VIEW)
    return await vector_filter_values(
        session, name, [kb.id for kb in kbs], include_operator=knowledge_bases.adopts_operator(kbs)
    )


_LEGACY_FILTER = "parent_doc_id == "
#: What ``filters.source`` may name: every value a document's chunks are stamped with.
SOURCES = frozenset({UPLOAD_SOURCE, CLI_SOURCE, *CONNECTORS})


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
    unknown = sorted(set(f.source or ()) - SOURCES)
    if unknown:  # a value nothing stamps would match nothing, silently
        raise InvalidInput(
            f"Unknown source {', '.join(repr(v[:50]) for v in unknown)}: "
            f"a document's source is one of {', '.join(sorted(SOURCES))}",
            fields=[FieldError("filters.source", "not a source docproc stamps")],
        )
    return SearchFilters(
        source=f.source,
        document_type=f.document_type,
        organizational_unit=f.organizational_unit,
        date_from=f.date_from,
        date_to=f.date_to,
        parent_doc_id=parent,
    )


def billing_kb(
    principal: Principal, name: str, kbs: list[KnowledgeBase], field: str
) -> KnowledgeBase:
    """Whose embedding configuration (and key) answers a query on ``name``.

    The caller's own base (its organization's, or its own personal one) first, then an
    app-scoped base. Never a third tenant's, reached only through a grant: that would
    open *its* key, bill it for this caller's query and send the text through it, so a
    name reached only that way refuses the search, naming its bases (``field``).
    """
    for kb in kbs:
        if (principal.organization_id and kb.organization_id == principal.organization_id) or (
            kb.scope == Scope.PERSONAL and kb.owner_id == principal.user_id
        ):
            return kb
    for kb in kbs:
        if kb.scope == Scope.APP:
            return kb
    named = ", ".join(f"{kb.id} (organization {kb.organization_id})" for kb in kbs)
    raise InvalidInput(
        f"'{name}' is searched here only through knowledge bases of another organization "
        f"({named}); a search embeds with the caller's own organization's base or an "
        "app-scoped one, never with another organization's key. Search through a base "
        "of your organization instead",
        fields=[FieldError(field, "no knowledge base of your organization or app-scoped")],
    )


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
        for kb in await resolve_kbs(session, principal, req.knowledge_base_ids, Access.VIEW):
            by_name.setdefault(kb.collection_name, []).append(kb)
        return list(by_name.items())
    resolved: list[tuple[str, list[KnowledgeBase]]] = []
    for name in dict.fromkeys(req.collections or []):
        validate_collection_name(name, field="collections")
        resolved.append((name, await resolve_collection(session, principal, name, Access.VIEW)))
    return resolved


@dataclass(frozen=True, slots=True)
class SearchPlan:
    """What a search reads, resolved before anything is embedded (``plan_search``): each
    collection with its bases, the base that bills its query and the client that embeds it
    (none for a keyword search)."""

    filters: SearchFilters
    collections: list[tuple[str, list[KnowledgeBase], KnowledgeBase, EmbeddingClient | None]]


async def plan_search(
    session: AsyncSession, clients: EmbeddingClients, principal: Principal, req: SearchRequest
) -> SearchPlan:
    """Every base resolved and each collection's embedding client opened, before a vector
    is read. A collection without a usable key or service refuses the search in every
    mode (the seed: it "refuses to index and to search until it has one")."""
    filters = _filters(req)
    field = "collections" if req.knowledge_base_ids is None else "knowledge_base_ids"
    collections = []
    for name, kbs in await _searched_bases(session, principal, req):
        billed = billing_kb(principal, name, kbs, field)
        resolved = await clients.resolve(billed, session)
        if resolved.degraded_reason is not None:  # every mode, though keyword embeds nothing
            raise resolved.refusal()
        client = None if req.mode == "keyword" else await clients.open(resolved)
        collections.append((name, kbs, billed, client))
    return SearchPlan(filters, collections)


@asynccontextmanager
async def _autocommit(runtime: Runtime) -> AsyncIterator[AsyncConnection]:
    """A connection on which each statement is its own transaction: no ``BEGIN``/``COMMIT``."""
    async with runtime.engine.connect() as connection:
        yield await connection.execution_options(isolation_level="AUTOCOMMIT")


async def search(
    runtime: Runtime,
    clients: EmbeddingClients,
    principal: Principal,
    req: SearchRequest,
    plans: PlanCache | None = None,
) -> list[SearchHit]:
    """``POST /rag/search``: the bases resolved (``plan_search``) on an autocommit
    connection, a statement per name and no ``BEGIN``/``COMMIT`` (reads that need no
    transaction), then ``search_plan`` (docs/benchmarks.md, "Search cost and hybrid
    search")."""
    async with _autocommit(runtime) as reader, AsyncSession(bind=reader) as session:
        plan = await plan_search(session, clients, principal, req)
    return await search_plan(runtime, plan, req, plans)


async def search_plan(
    runtime: Runtime, plan: SearchPlan, req: SearchRequest, plans: PlanCache | None = None
) -> list[SearchHit]:
    """The query embedded with no connection held, then each collection searched on one
    autocommit connection, a statement per collection once ``plans`` holds its estimates."""
    queries = {
        name: (await client.embed([req.query]))[0]
        for name, _, _, client in plan.collections
        if client is not None
    }
    hits: list[SearchHit] = []
    async with _autocommit(runtime) as reader:
        for name, kbs, billed, _ in plan.collections:
            for h in await vector_search(
                reader,
                name,
                queries.get(name),
                knowledge_base_ids=[kb.id for kb in kbs],
                top_k=req.top_k,
                filters=plan.filters,
                include_operator=knowledge_bases.adopts_operator(kbs),
                mode=req.mode,
                text_query=req.query,
                text_search_config=billed.text_search_config,
                plans=plans,
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
