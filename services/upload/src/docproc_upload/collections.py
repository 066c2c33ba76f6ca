"""Collection lifecycle: deletion through durable teardown, documents, retries, grants, facets.

Deleting removes rows inside the request and commits a ``collection_teardowns``
reservation with them; the physical table and the files go only after commit,
in the teardown service. A rollback therefore keeps the table next to the rows
it restores, and a crash after commit is finished by redelivery or the hourly
sweep. While the reservation exists the name is not free: a claim, an upload and
a worker's vector write all refuse it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from docproc_common.access import Access, resolve_collection, resolve_kb
from docproc_common.auth import Principal
from docproc_common.bus.outbox import enqueue
from docproc_common.db.models import (
    CollectionGrant,
    CollectionTeardown,
    DocumentStatus,
    KnowledgeBase,
    RagDocument,
    Scope,
)
from docproc_common.db.vector_tables import validate_collection_name
from docproc_common.errors import (
    CollectionNotFound,
    Conflict,
    FieldError,
    Forbidden,
    InvalidInput,
    NotFound,
)
from docproc_common.events import CollectionDeleted, DocumentAccepted, DocumentDeleted
from docproc_common.formats import check_supported
from docproc_common.ingestion import IngestionConfig
from docproc_common.runtime import Runtime
from docproc_common.vectorstore import filter_values as vector_filter_values
from docproc_common.vectorstore import holds_unfiled_beyond
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload import repository
from docproc_upload.audit import record
from docproc_upload.schemas import CollectionDeletedOut, DocumentOut, DocumentPage, ReindexOut
from docproc_upload.sync_sources.repository import deactivate_sources_for_kb

DOCUMENT_NOT_FOUND = "Document not found"


def _files(docs: Sequence[RagDocument]) -> list[str]:
    return [p for d in docs for p in (d.storage_path, d.parsed_path) if p]


@dataclass(frozen=True, slots=True)
class Unfiled:
    """The unfiled content (rows and chunks no knowledge base owns) some bases take with them.

    An app-scoped base takes the operator's (what it adopts); any other base in an
    organization takes its organization's; a personal base outside one takes none.
    """

    operator: bool
    organization_ids: frozenset[str]

    @classmethod
    def taken_by(cls, kbs: Sequence[KnowledgeBase]) -> Unfiled:
        return cls(
            operator=repository.adopts_operator(kbs),
            organization_ids=frozenset(
                kb.organization_id for kb in kbs if kb.scope != Scope.APP and kb.organization_id
            ),
        )

    def takes(self, doc: RagDocument) -> bool:
        if doc.knowledge_base_id is not None:
            return False
        if doc.organization_id is None:
            return self.operator and repository.is_operator_row(doc)
        return doc.organization_id in self.organization_ids


def _purge(name: str, kb_id: uuid.UUID | None, docs: Sequence[RagDocument]) -> CollectionTeardown:
    """A teardown that keeps the table: these documents' chunks and files go (and ``kb_id``'s)."""
    return CollectionTeardown(
        collection_name=name,
        knowledge_base_id=kb_id,
        drop_table=False,
        storage_paths=_files(docs),
        vector_document_ids=[str(d.vector_document_id) for d in docs if d.vector_document_id],
    )


async def _tear_down(
    session: AsyncSession,
    principal: Principal,
    name: str,
    kbs: Sequence[KnowledgeBase],
    *,
    by_operator: bool = False,
) -> CollectionDeletedOut:
    """Remove ``kbs`` and reserve the name for the teardown.

    A default base is emptied instead of deleted, and so is every base the operator's
    ``rag-drop`` names. Their own rows go, and the unfiled rows they take (``Unfiled``)
    that no base left on the name takes too. The last bases on a name drop its table,
    unless it holds an unfiled chunk they do not take (an operator ingest under an
    organization's base, another tenant's): a caller has no authority over that, so only
    what the bases take is purged. ``rag-drop`` drops the last table whatever it holds.
    The rows a dropped table leaves behind are marked failed by the teardown service.
    """
    gone = {kb.id for kb in kbs}
    siblings = [kb for kb in await repository.kbs_named(session, name) if kb.id not in gone]
    taken, kept = Unfiled.taken_by(kbs), Unfiled.taken_by(siblings)
    own = await repository.documents_of(session, list(gone))
    unfiled = [
        d
        for d in await repository.unfiled_documents(session, name)
        if taken.takes(d) and not kept.takes(d)
    ]
    docs = [*own, *unfiled]
    await repository.delete_documents(session, [d.id for d in docs])
    emptied = {kb.id for kb in kbs if by_operator or kb.is_default}
    for kb in kbs:
        if kb.id not in emptied:  # its sources keep their config, unlinked and inactive
            await deactivate_sources_for_kb(session, kb.id)
    await repository.delete_kbs(session, [kb.id for kb in kbs if kb.id not in emptied])
    drops_table = not siblings and (
        by_operator
        or not await holds_unfiled_beyond(
            session,
            name,
            operator=taken.operator,
            organization_ids=sorted(taken.organization_ids),
        )
    )
    if drops_table:
        reservations = [
            CollectionTeardown(collection_name=name, drop_table=True, storage_paths=_files(docs))
        ]
    else:
        reservations = [
            _purge(name, kb.id, [d for d in own if d.knowledge_base_id == kb.id]) for kb in kbs
        ]
        if unfiled:
            reservations.append(_purge(name, None, unfiled))
    session.add_all(reservations)
    await session.flush()
    for reservation in reservations:
        await enqueue(session, CollectionDeleted(teardown_id=reservation.id, collection_name=name))
    for kb in kbs:
        await record(
            session,
            principal,
            "knowledge_base.emptied" if kb.id in emptied else "knowledge_base.deleted",
            target=str(kb.id),
            organization_id=kb.organization_id,
            details={
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


async def delete_collection(
    runtime: Runtime, principal: Principal, name: str
) -> CollectionDeletedOut:
    """``DELETE /rag/collections/{name}``: every knowledge base on the name the caller may edit."""
    validate_collection_name(name)
    async with runtime.sessionmaker() as session, session.begin():
        await repository.lock_name(session, name)
        kbs = await resolve_collection(session, principal, name, Access.EDIT)
        return await _tear_down(session, principal, name, kbs)


async def delete_kb(
    runtime: Runtime, principal: Principal, kb_id: uuid.UUID
) -> CollectionDeletedOut:
    """``DELETE /kb/{id}``: this knowledge base; a sibling on the same name keeps the table."""
    async with runtime.sessionmaker() as session, session.begin():
        kb = await resolve_kb(session, principal, kb_id, Access.EDIT)
        await repository.lock_name(session, kb.collection_name)
        kb = await resolve_kb(session, principal, kb_id, Access.EDIT)
        return await _tear_down(session, principal, kb.collection_name, [kb])


async def delete_owner(
    runtime: Runtime,
    principal: Principal,
    *,
    organization_id: str | None = None,
    user_id: str | None = None,
) -> list[CollectionDeletedOut]:
    """An organization or an account is gone: tear down the knowledge bases it owned.

    Called by the platform's identity side (app admins only). An organization takes
    its org and personal bases; an account takes its personal bases.
    """
    if not principal.app_admin:
        raise Forbidden("Only an app admin may remove an organization's or an account's data")
    async with runtime.sessionmaker() as session:
        kbs = await repository.kbs_owned(session, organization_id=organization_id, user_id=user_id)
    by_name: dict[str, list[uuid.UUID]] = {}
    for kb in kbs:
        by_name.setdefault(kb.collection_name, []).append(kb.id)
    results = []
    for name, ids in sorted(by_name.items()):
        async with runtime.sessionmaker() as session, session.begin():
            await repository.lock_name(session, name)
            rows = [kb for kb in await repository.kbs_named(session, name) if kb.id in set(ids)]
            for kb in rows:
                kb.is_default = False  # the owner is gone: nothing to keep a default for
            if rows:
                results.append(await _tear_down(session, principal, name, rows))
    return results


async def document_for(
    session: AsyncSession, principal: Principal, document_id: uuid.UUID, access: Access
) -> RagDocument:
    """The document if a base that lists it is reachable; a denial looks like absence.

    A filed document is reached through its own base. An operator's unfiled one
    (``rag-ingest``) only through an app-scoped base on its name, the one whose search
    reads its chunks; no other unfiled row is reached by id.
    """
    doc = await session.get(RagDocument, document_id, with_for_update=access is Access.EDIT)
    try:
        if doc is not None and doc.knowledge_base_id is not None:
            await resolve_kb(session, principal, doc.knowledge_base_id, access)
            return doc
        if doc is not None and repository.is_operator_row(doc):
            kbs = await resolve_collection(session, principal, doc.collection_name, access)
            if repository.adopts_operator(kbs):
                return doc
    except CollectionNotFound:
        pass
    raise NotFound(DOCUMENT_NOT_FOUND)


def document_out(doc: RagDocument) -> DocumentOut:
    return DocumentOut(
        id=doc.id,
        collection_name=doc.collection_name,
        knowledge_base_id=doc.knowledge_base_id,
        filename=doc.filename,
        filesize=doc.filesize,
        filetype=doc.filetype,
        status=doc.status,
        error_message=doc.error_message,
        chunk_count=doc.chunk_count,
        source=doc.source,
        source_path=doc.source_path,
        organizational_unit=doc.organizational_unit,
        has_file=doc.storage_path is not None,
        created_at=doc.created_at,
        completed_at=doc.completed_at,
    )


async def list_documents(
    session: AsyncSession,
    principal: Principal,
    kb_id: uuid.UUID,
    *,
    limit: int,
    before: tuple[datetime, uuid.UUID] | None,
) -> DocumentPage:
    """One page, newest first, by keyset on (created_at, id): an index range, never a full scan."""
    kb = await resolve_kb(session, principal, kb_id, Access.VIEW)
    docs = await repository.document_page(session, kb, limit=limit + 1, before=before)
    total = await repository.document_count(session, kb)
    more = len(docs) > limit
    docs = docs[:limit]
    cursor = f"{docs[-1].created_at.isoformat()}|{docs[-1].id}" if more and docs else None
    return DocumentPage(items=[document_out(d) for d in docs], total=total, next_cursor=cursor)


def parse_cursor(raw: str | None) -> tuple[datetime, uuid.UUID] | None:
    if not raw:
        return None
    try:
        stamp, _, ident = raw.partition("|")
        return datetime.fromisoformat(stamp), uuid.UUID(ident)
    except ValueError as exc:
        raise InvalidInput("Invalid cursor", fields=[FieldError("cursor", "not a cursor")]) from exc


async def delete_document(runtime: Runtime, principal: Principal, document_id: uuid.UUID) -> None:
    """The row goes now; its chunks and files durably after commit (``DocumentDeleted``).

    A document still indexing has no vector id yet: the embedder, finding its row
    gone under lock, writes nothing, so no chunk survives either way.
    """
    async with runtime.sessionmaker() as session, session.begin():
        doc = await document_for(session, principal, document_id, Access.EDIT)
        await session.delete(doc)
        await enqueue(
            session,
            DocumentDeleted(
                collection_name=doc.collection_name,
                vector_document_ids=[doc.vector_document_id] if doc.vector_document_id else [],
                storage_paths=[p for p in (doc.storage_path, doc.parsed_path) if p],
            ),
        )


async def _dispatch_attempt(session: AsyncSession, doc: RagDocument) -> None:
    """A new attempt of ``doc`` from its stored original, queued in the caller's transaction.

    An earlier attempt still in flight stops at its next stage (``lock_current_attempt``).
    The chunks ``doc`` has keep serving searches: the embedder writes the new set and
    removes them in one transaction.
    """
    assert doc.storage_path is not None
    doc.attempt_id = uuid.uuid4()
    doc.status = DocumentStatus.PROCESSING
    doc.error_message = None
    doc.completed_at = None
    await enqueue(
        session,
        DocumentAccepted(
            document_id=doc.id,
            attempt_id=doc.attempt_id,
            collection_name=doc.collection_name,
            knowledge_base_id=doc.knowledge_base_id,
            storage_path=doc.storage_path,
            filename=doc.filename,
            filetype=doc.filetype,
            ingestion_config=doc.ingestion_config,
        ),
    )


async def retry_document(
    runtime: Runtime, principal: Principal, document_id: uuid.UUID
) -> DocumentOut:
    """Re-dispatch a failed upload from its stored original, replacing what the failed attempt indexed."""
    async with runtime.sessionmaker() as session, session.begin():
        doc = await document_for(session, principal, document_id, Access.EDIT)
        if doc.status != DocumentStatus.ERROR:
            raise InvalidInput("Only a failed document can be retried")
        if not doc.storage_path:
            raise InvalidInput(
                "This document has no stored original to retry from; upload it again "
                "(a synced document is retried by running its sync again)"
            )
        if await repository.is_reserved(session, doc.collection_name):
            raise Conflict("The collection is being deleted; the retry was not queued")
        await _dispatch_attempt(session, doc)
        await session.flush()
        return document_out(doc)


async def reindex_kb(runtime: Runtime, principal: Principal, kb_id: uuid.UUID) -> ReindexOut:
    """``POST /kb/{id}/reindex``: re-parse every stored original with the base's configuration.

    Through the one pipeline (``DocumentAccepted`` -> parser -> embedder), a new attempt
    per document; each document keeps its chunks until its new set replaces them in one
    transaction, so a search never finds the base empty. Its documents are ``processing``
    meanwhile, so ``GET /kb/{id}/ingestion`` says ``indexing``. A synced document keeps no
    original and a document the configured parser does not read keeps its chunks; both
    are counted, not queued.
    """
    async with runtime.sessionmaker() as session, session.begin():
        kb = await resolve_kb(session, principal, kb_id, Access.EDIT)
        if await repository.is_reserved(session, kb.collection_name):
            raise Conflict("The collection is being deleted; nothing was queued")
        config = IngestionConfig.model_validate(kb.ingestion_config)
        stored = config.model_dump(mode="json")
        queued = no_original = unsupported = 0
        for doc in await repository.documents_of(session, [kb.id], lock=True):
            if not doc.storage_path:
                no_original += 1
                continue
            try:
                check_supported(doc.filename, config.parser)
            except InvalidInput:
                unsupported += 1
                continue
            doc.ingestion_config = stored
            await _dispatch_attempt(session, doc)
            queued += 1
        await record(
            session,
            principal,
            "kb.reindexed",
            target=str(kb.id),
            organization_id=kb.organization_id,
            details={"queued": queued, "skipped": no_original + unsupported},
        )
    return ReindexOut(
        knowledge_base_id=kb_id,
        queued=queued,
        skipped_no_original=no_original,
        skipped_unsupported=unsupported,
    )


async def filter_values(session: AsyncSession, principal: Principal, name: str) -> list[str]:
    validate_collection_name(name)
    kbs = await resolve_collection(session, principal, name, Access.VIEW)
    return await vector_filter_values(
        session, name, [kb.id for kb in kbs], include_operator=repository.adopts_operator(kbs)
    )


async def grant(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID, user_id: str, permission: str
) -> None:
    """An explicit grant widens what a user's role allows on this one collection."""
    kb = await resolve_kb(session, principal, kb_id, Access.EDIT)
    existing = (
        await session.execute(
            select(CollectionGrant).where(
                CollectionGrant.knowledge_base_id == kb.id, CollectionGrant.user_id == user_id
            )
        )
    ).scalar_one_or_none()
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
        target=str(kb.id),
        organization_id=kb.organization_id,
        details={"user_id": user_id, "permission": permission},
    )


async def revoke(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID, user_id: str
) -> None:
    kb = await resolve_kb(session, principal, kb_id, Access.EDIT)
    await repository.delete_grant(session, kb.id, user_id)
    await record(
        session,
        principal,
        "knowledge_base.revoked",
        target=str(kb.id),
        organization_id=kb.organization_id,
        details={"user_id": user_id},
    )
