"""Tracking-row transitions shared by the pipeline stages (``rag_documents``), and what
leaves a name with the bases removed from it (``Release``)."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, delete, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_common.bus.outbox import enqueue
from docproc_common.db.models import (
    CollectionTeardown,
    DocumentStatus,
    KnowledgeBase,
    RagDocument,
    RagDocumentClaim,
)
from docproc_common.events import (
    CollectionDeleted,
    DocumentAccepted,
    DocumentDeleted,
    DocumentFailed,
)
from docproc_common.failures import Stage, failure_message
from docproc_common.names import kbs_named
from docproc_common.unfiled import Unfiled

#: A document's ``source`` (stamped on its row and chunks, and what ``filters.source``
#: takes) is an API upload's, the operator CLI's (``rag-ingest``), or the name of the sync
#: connector that fetched it.
UPLOAD_SOURCE = "upload"
CLI_SOURCE = "cli"


async def accept_document(
    session: AsyncSession, doc: RagDocument, *, staged_path: str | None = None
) -> None:
    """Queue a new attempt of ``doc`` (a new row, or a stored one retried or reindexed):
    ``processing`` under a fresh attempt id, and its ``DocumentAccepted``, in the caller's
    transaction. An earlier attempt still in flight stops at its next stage
    (``lock_current_attempt``); the chunks ``doc`` has keep serving searches until the
    embedder replaces them in one transaction.

    The parser reads the stored original (``doc.storage_path``), or ``staged_path``: a
    synced file's temporary copy, which the parser deletes once the attempt is settled.
    """
    storage_path = staged_path or doc.storage_path
    assert storage_path is not None, "an attempt reads a stored original or a staged copy"
    doc.attempt_id = uuid.uuid4()
    doc.status = DocumentStatus.PROCESSING
    doc.error_message = None
    doc.completed_at = None
    session.add(doc)
    await session.flush()
    await enqueue(
        session,
        DocumentAccepted(
            document_id=doc.id,
            attempt_id=doc.attempt_id,
            collection_name=doc.collection_name,
            knowledge_base_id=doc.knowledge_base_id,
            storage_path=storage_path,
            filename=doc.filename,
            filetype=doc.filetype,
            ingestion_config=doc.ingestion_config,
            staged=staged_path is not None,
        ),
    )


async def lock_current_attempt(
    session: AsyncSession, document_id: uuid.UUID, attempt_id: uuid.UUID
) -> RagDocument | None:
    """The tracking row, locked, if it still waits for exactly this attempt.

    None when it was deleted, superseded by a retry, or already finished: a stage
    that gets None writes nothing.
    """
    doc = (
        await session.execute(
            select(RagDocument).where(RagDocument.id == document_id).with_for_update()
        )
    ).scalar_one_or_none()
    if doc is None or doc.status != DocumentStatus.PROCESSING or doc.attempt_id != attempt_id:
        return None
    return doc


async def fail_document(
    session: AsyncSession,
    document_id: uuid.UUID,
    attempt_id: uuid.UUID,
    stage: Stage,
    exc: BaseException,
    collection_name: str,
) -> bool:
    """Mark this attempt ``error`` with the three-part message; the first handler to record keeps it.

    Only a row still ``processing`` for this very attempt changes, so a stale
    attempt never overwrites a newer one and a recorded failure is never replaced.
    """
    message = failure_message(stage, exc)
    result = await session.execute(
        update(RagDocument)
        .where(
            RagDocument.id == document_id,
            RagDocument.attempt_id == attempt_id,
            RagDocument.status == DocumentStatus.PROCESSING,
        )
        .values(status=DocumentStatus.ERROR, error_message=message, completed_at=func.now())
    )
    changed = bool(getattr(result, "rowcount", 0))
    if changed:
        await retire_failed_attempts(session, document_id)
        await enqueue(
            session,
            DocumentFailed(
                document_id=document_id,
                collection_name=collection_name,
                stage=stage.value,
                error_message=message,
            ),
        )
    return changed


async def retire_failed_attempts(session: AsyncSession, document_id: uuid.UUID) -> int:
    """Remove earlier *failed* rows for the same address in the same scope as ``document_id``.

    By address (``source_path``), never by filename: ``a/readme.md`` and
    ``b/readme.md`` share a name. ``error`` rows only: a ``processing`` row is a
    live attempt of an overlapping ingest. In the row's own knowledge base (or,
    for a row filed under none, among the unfiled rows of its organization).
    An upload has no address and retires nothing. Failed rows wrote no vectors,
    so removing the row is all there is to do.
    """
    doc = await session.get(RagDocument, document_id)
    if doc is None or doc.source_path is None:
        return 0
    scope = (
        RagDocument.knowledge_base_id == doc.knowledge_base_id
        if doc.knowledge_base_id is not None
        else (RagDocument.knowledge_base_id.is_(None))
        & (RagDocument.organization_id.is_not_distinct_from(doc.organization_id))
    )
    result = await session.execute(
        delete(RagDocument).where(
            RagDocument.collection_name == doc.collection_name,
            RagDocument.source_path == doc.source_path,
            RagDocument.status == DocumentStatus.ERROR,
            RagDocument.id != doc.id,
            scope,
        )
    )
    return int(getattr(result, "rowcount", 0) or 0)


def not_addressed_elsewhere() -> ColumnElement[bool]:
    """A row a file name may stand for: one with no address (an upload records none) or
    addressed by that very name, never one a sync filed under another path
    (``a/readme.md`` and ``b/readme.md`` share a name)."""
    return or_(RagDocument.source_path.is_(None), RagDocument.source_path == RagDocument.filename)


async def delete_unclaimed(session: AsyncSession, ids: Iterable[uuid.UUID]) -> int:
    """Delete those of ``ids`` no claim names any more; their chunks and files go after commit.

    The rows are locked first, so a concurrent claim on one of them (whose foreign
    key takes a share lock on the row) either committed before and is seen, or waits.
    """
    wanted = sorted(set(ids))
    if not wanted:
        return 0
    docs = list(
        (
            await session.execute(
                select(RagDocument)
                .where(RagDocument.id.in_(wanted))
                .order_by(RagDocument.id)
                .with_for_update()
            )
        ).scalars()
    )
    claimed = set(
        (
            await session.execute(
                select(RagDocumentClaim.document_id).where(RagDocumentClaim.document_id.in_(wanted))
            )
        ).scalars()
    ) | set(
        (
            await session.execute(
                select(RagDocumentClaim.pending_document_id).where(
                    RagDocumentClaim.pending_document_id.in_(wanted)
                )
            )
        ).scalars()
    )
    gone = [d for d in docs if d.id not in claimed]
    if not gone:
        return 0
    await session.execute(delete(RagDocument).where(RagDocument.id.in_([d.id for d in gone])))
    by_collection: dict[str, list[RagDocument]] = {}
    for d in gone:
        by_collection.setdefault(d.collection_name, []).append(d)
    for collection, docs_of in by_collection.items():
        await enqueue(
            session,
            DocumentDeleted(
                collection_name=collection,
                vector_document_ids=[d.vector_document_id for d in docs_of if d.vector_document_id],
                storage_paths=document_files(docs_of),
            ),
        )
    return len(gone)


def document_files(docs: Sequence[RagDocument]) -> list[str]:
    """The stored files of ``docs``: each one's original (if kept) and its parsed text."""
    return [p for d in docs for p in (d.storage_path, d.parsed_path) if p]


async def reserve_teardown(
    session: AsyncSession,
    name: str,
    docs: Sequence[RagDocument],
    *,
    drop_table: bool,
    knowledge_base_id: uuid.UUID | None = None,
) -> None:
    """Reserve ``name`` for a teardown of ``docs`` (their rows already deleted), in the caller's
    transaction, with its ``CollectionDeleted``: the teardown service removes their files, then
    the name's table (``drop_table``) or, when it stays, their chunks and ``knowledge_base_id``'s,
    and releases the name. A new upload or a write to the name is refused until then."""
    reservation = CollectionTeardown(
        collection_name=name,
        knowledge_base_id=knowledge_base_id,
        drop_table=drop_table,
        storage_paths=document_files(docs),
        vector_document_ids=[]
        if drop_table
        else [str(d.vector_document_id) for d in docs if d.vector_document_id],
    )
    session.add(reservation)
    await session.flush()
    await enqueue(session, CollectionDeleted(teardown_id=reservation.id, collection_name=name))


@dataclass(frozen=True, slots=True)
class Release:
    """What removing or emptying ``kbs`` takes off their name: their own rows, and the unfiled
    rows they take (``unfiled.Unfiled``) that no base left on the name (``siblings``) takes.
    Every path that removes bases (upload's deletes, ``rag-drop``) plans with it, under the
    name's lock, and ``reserve`` hands the rest to the teardown service."""

    name: str
    kbs: Sequence[KnowledgeBase]
    siblings: list[KnowledgeBase]
    taken: Unfiled
    own: list[RagDocument]
    unfiled: list[RagDocument]

    @property
    def docs(self) -> list[RagDocument]:
        return [*self.own, *self.unfiled]

    @classmethod
    async def plan(cls, session: AsyncSession, name: str, kbs: Sequence[KnowledgeBase]) -> Release:
        gone = [kb.id for kb in kbs]
        siblings = [kb for kb in await kbs_named(session, name) if kb.id not in gone]
        taken, kept = Unfiled.taken_by(kbs), Unfiled.taken_by(siblings)
        own = await session.execute(
            select(RagDocument).where(RagDocument.knowledge_base_id.in_(gone))
        )
        unfiled = await session.execute(
            select(RagDocument).where(
                RagDocument.collection_name == name, RagDocument.knowledge_base_id.is_(None)
            )
        )
        return cls(
            name,
            kbs,
            siblings,
            taken,
            list(own.scalars()),
            [d for d in unfiled.scalars() if taken.takes(d) and not kept.takes(d)],
        )

    async def reserve(
        self, session: AsyncSession, *, drop_table: bool, emptied: Collection[uuid.UUID]
    ) -> None:
        """Delete the rows and reserve the name for their teardown: the table dropped with
        every file, or, where it stays, each base's documents' chunks (a deleted base's
        every chunk; an ``emptied`` one, which stays on the name, only its deleted
        documents', keeping a chunk no row describes) and the unfiled rows' chunks."""
        docs = self.docs
        if docs:
            await session.execute(
                delete(RagDocument).where(RagDocument.id.in_([d.id for d in docs]))
            )
        if drop_table:
            await reserve_teardown(session, self.name, docs, drop_table=True)
            return
        for kb in self.kbs:
            await reserve_teardown(
                session,
                self.name,
                [d for d in self.own if d.knowledge_base_id == kb.id],
                drop_table=False,
                knowledge_base_id=None if kb.id in emptied else kb.id,
            )
        if self.unfiled:
            await reserve_teardown(session, self.name, self.unfiled, drop_table=False)
