"""All SQL of the sync service."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from docproc_common.connectors.runs import lock_key
from docproc_common.db.models import (
    DocumentStatus,
    KnowledgeBase,
    RagDocument,
    RagDocumentClaim,
    SyncLog,
    SyncSource,
)
from docproc_common.documents import delete_unclaimed as delete_unclaimed
from docproc_common.documents import not_addressed_elsewhere
from sqlalchemy import and_, delete, func, or_, select, text, tuple_, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.orm import aliased

#: The statuses of a run that is not over (``open_run``).
OPEN_RUN = ("queued", "running", "cancelling")


def address_hash(address: str) -> str:
    return hashlib.sha256(address.encode("utf-8", errors="surrogatepass")).hexdigest()


# -- sources, knowledge bases, logs ---------------------------------------------------------


async def source(session: AsyncSession, source_id: uuid.UUID) -> SyncSource | None:
    return await session.get(SyncSource, source_id)


async def kb(session: AsyncSession, kb_id: uuid.UUID) -> KnowledgeBase | None:
    return await session.get(KnowledgeBase, kb_id)


async def log_status(session: AsyncSession, log_id: uuid.UUID) -> str | None:
    row = await session.execute(select(SyncLog.status).where(SyncLog.id == log_id))
    return row.scalar_one_or_none()


async def start_log(session: AsyncSession, log_id: uuid.UUID) -> bool:
    """``queued`` (or ``running``: an interrupted attempt re-delivered) -> ``running``.

    False when the run finished already or was cancelled.
    """
    row = await session.execute(
        update(SyncLog)
        .where(SyncLog.id == log_id, SyncLog.status.in_(("queued", "running")))
        .values(status="running", started_at=func.now())
        .returning(SyncLog.id)
    )
    return row.first() is not None


async def interrupt_stale_runs(
    session: AsyncSession, source_id: uuid.UUID, keep: uuid.UUID | None
) -> None:
    """Runs still ``running`` while their source's lock is free were interrupted: say so."""
    query = update(SyncLog).where(
        SyncLog.source_id == source_id, SyncLog.status.in_(("running", "cancelling"))
    )
    if keep is not None:
        query = query.where(SyncLog.id != keep)
    await session.execute(
        query.values(
            status="error",
            finished_at=func.now(),
            error_message="The run was interrupted; the next run picks up where it stopped",
        )
    )


async def record_listing(
    session: AsyncSession, log_id: uuid.UUID, total: int, complete: bool
) -> None:
    await session.execute(
        update(SyncLog)
        .where(SyncLog.id == log_id)
        .values(total_files=total, listing_complete=complete)
    )


def _added(counts: dict[str, int] | None) -> dict[str, Any]:
    """A slice's counts added to what earlier slices of the run recorded."""
    return {name: getattr(SyncLog, name) + n for name, n in (counts or {}).items()}


async def add_counts(session: AsyncSession, log_id: uuid.UUID, counts: dict[str, int]) -> None:
    await session.execute(update(SyncLog).where(SyncLog.id == log_id).values(**_added(counts)))


async def finish_log(
    session: AsyncSession,
    log_id: uuid.UUID,
    status: str,
    *,
    counts: dict[str, int] | None = None,
    error_message: str | None = None,
) -> None:
    await session.execute(
        update(SyncLog)
        .where(SyncLog.id == log_id)
        .values(
            status=status,
            finished_at=func.now(),
            error_message=error_message[:2000] if error_message else None,
            **_added(counts),
        )
    )


# -- documents --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Existing:
    """One stored document, its id and its content_hash answered together (never mixed)."""

    id: uuid.UUID
    content_hash: str | None
    status: str
    source_path: str | None = None


_EXISTING = (RagDocument.id, RagDocument.content_hash, RagDocument.status, RagDocument.source_path)


async def existing_document(
    session: AsyncSession,
    kb_id: uuid.UUID,
    *,
    source_path: str | None = None,
    filename: str | None = None,
    content_hash: str | None = None,
) -> Existing | None:
    """The stored document a file corresponds to, by precedence, stopping at the first hit.

    ``source_path``, then a ``filename`` the document has not addressed under another
    path (an upload records none, or its own name), then ``content_hash``; each is
    one statement on a hash index, scoped to the knowledge base. A ``done`` row is
    preferred to a failed or unfinished attempt, then the newest.
    """
    conditions = []
    if source_path is not None:
        conditions.append(RagDocument.source_path == source_path)
    if filename is not None:
        conditions.append(and_(RagDocument.filename == filename, not_addressed_elsewhere()))
    if content_hash is not None:
        conditions.append(RagDocument.content_hash == content_hash)
    for condition in conditions:
        row = (
            await session.execute(
                select(*_EXISTING)
                .where(RagDocument.knowledge_base_id == kb_id, condition)
                .order_by(
                    (RagDocument.status == DocumentStatus.DONE).desc(),
                    RagDocument.created_at.desc(),
                    RagDocument.id.desc(),
                )
                .limit(1)
            )
        ).first()
        if row is not None:
            return Existing(row[0], row[1], row[2], row[3])
    return None


async def existing_documents(
    session: AsyncSession, kb_id: uuid.UUID, addresses: Sequence[str], names: Sequence[str]
) -> tuple[dict[str, Existing], dict[str, Existing]]:
    """``existing_document``'s first two questions for many files at once (one statement each
    per thousand), with the same precedence and the same preference for ``done`` rows."""
    order = (
        (RagDocument.status == DocumentStatus.DONE).desc(),
        RagDocument.created_at.desc(),
        RagDocument.id.desc(),
    )
    by_path: dict[str, Existing] = {}
    by_name: dict[str, Existing] = {}
    for n in range(0, len(addresses), 1000):
        rows = await session.execute(
            select(*_EXISTING)
            .where(
                RagDocument.knowledge_base_id == kb_id,
                RagDocument.source_path.in_(list(addresses[n : n + 1000])),
            )
            .order_by(*order)
        )
        for r in rows.all():
            by_path.setdefault(str(r[3]), Existing(r[0], r[1], r[2], r[3]))
    wanted = sorted(set(names))
    for n in range(0, len(wanted), 1000):
        rows = await session.execute(
            select(*_EXISTING, RagDocument.filename)
            .where(
                RagDocument.knowledge_base_id == kb_id,
                RagDocument.filename.in_(wanted[n : n + 1000]),
                not_addressed_elsewhere(),
            )
            .order_by(*order)
        )
        for r in rows.all():
            by_name.setdefault(str(r[-1]), Existing(r[0], r[1], r[2], r[3]))
    return by_path, by_name


async def status_of(session: AsyncSession, document_id: uuid.UUID) -> str | None:
    row = await session.execute(select(RagDocument.status).where(RagDocument.id == document_id))
    return row.scalar_one_or_none()


async def stale_failures(
    session: AsyncSession, kb_id: uuid.UUID, source_path: str, keep: Iterable[uuid.UUID]
) -> list[uuid.UUID]:
    """Earlier failed attempts at this address in this knowledge base (never a live one)."""
    rows = await session.execute(
        select(RagDocument.id).where(
            RagDocument.knowledge_base_id == kb_id,
            RagDocument.source_path == source_path,
            RagDocument.status == DocumentStatus.ERROR,
            RagDocument.id.not_in(list(keep) or [uuid.uuid4()]),
        )
    )
    return list(rows.scalars())


# -- claims -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClaimState:
    address_hash: str
    document_id: uuid.UUID | None
    document_status: str | None
    document_hash: str | None
    remote_version: str | None
    pending_document_id: uuid.UUID | None
    pending_status: str | None
    pending_hash: str | None
    pending_version: str | None

    def live(self) -> Existing | None:
        if self.document_id is None or self.document_status is None:
            return None
        return Existing(self.document_id, self.document_hash, self.document_status)

    def pending(self) -> Existing | None:
        if self.pending_document_id is None or self.pending_status is None:
            return None
        return Existing(self.pending_document_id, self.pending_hash, self.pending_status)


async def claims_of(session: AsyncSession, source_id: uuid.UUID) -> dict[str, ClaimState]:
    live = aliased(RagDocument)
    pending = aliased(RagDocument)
    rows = await session.execute(
        select(
            RagDocumentClaim.address_hash,
            RagDocumentClaim.document_id,
            live.status,
            live.content_hash,
            RagDocumentClaim.remote_version,
            RagDocumentClaim.pending_document_id,
            pending.status,
            pending.content_hash,
            RagDocumentClaim.pending_version,
        )
        .outerjoin(live, live.id == RagDocumentClaim.document_id)
        .outerjoin(pending, pending.id == RagDocumentClaim.pending_document_id)
        .where(RagDocumentClaim.source_id == source_id)
    )
    return {r[0]: ClaimState(*r) for r in rows.all()}


async def lock_claim(
    session: AsyncSession, source_id: uuid.UUID, source_path: str
) -> RagDocumentClaim:
    """The claim row of this address, created if missing, locked for this transaction (one upsert)."""
    stmt = (
        insert(RagDocumentClaim)
        .values(
            source_id=source_id, address_hash=address_hash(source_path), source_path=source_path
        )
        .on_conflict_do_update(
            index_elements=[RagDocumentClaim.source_id, RagDocumentClaim.address_hash],
            set_={"updated_at": func.now()},
        )
        .returning(RagDocumentClaim)
    )
    result = await session.execute(stmt, execution_options={"populate_existing": True})
    return result.scalar_one()


async def drop_claims(
    session: AsyncSession, source_id: uuid.UUID, keep: set[str]
) -> tuple[int, list[uuid.UUID]]:
    """Withdraw this source's claims on every address it no longer lists.

    Returns how many were withdrawn and the documents they named.
    """
    rows = await session.execute(
        select(
            RagDocumentClaim.address_hash,
            RagDocumentClaim.document_id,
            RagDocumentClaim.pending_document_id,
        ).where(RagDocumentClaim.source_id == source_id)
    )
    gone = [r for r in rows.all() if r[0] not in keep]
    if not gone:
        return 0, []
    hashes = [r[0] for r in gone]
    for n in range(0, len(hashes), 5000):
        await session.execute(
            delete(RagDocumentClaim).where(
                RagDocumentClaim.source_id == source_id,
                RagDocumentClaim.address_hash.in_(hashes[n : n + 5000]),
            )
        )
    docs = [d for r in gone for d in (r[1], r[2]) if d is not None]
    return len(gone), docs


async def promote_finished(session: AsyncSession, limit: int = 500) -> tuple[int, list[uuid.UUID]]:
    """Claims whose pending document is ``done`` now name it as live.

    Returns how many claims moved and the documents they named before (to retire).
    """
    pending = aliased(RagDocument)
    rows = (
        await session.execute(
            select(
                RagDocumentClaim.source_id,
                RagDocumentClaim.address_hash,
                RagDocumentClaim.document_id,
                RagDocumentClaim.pending_document_id,
            )
            .join(pending, pending.id == RagDocumentClaim.pending_document_id)
            .where(pending.status == DocumentStatus.DONE)
            .limit(limit)
            .with_for_update(of=RagDocumentClaim, skip_locked=True)
        )
    ).all()
    if not rows:
        return 0, []
    await session.execute(
        update(RagDocumentClaim)
        .where(
            tuple_(RagDocumentClaim.source_id, RagDocumentClaim.address_hash).in_(
                [(r[0], r[1]) for r in rows]
            )
        )
        .values(
            document_id=RagDocumentClaim.pending_document_id,
            remote_version=RagDocumentClaim.pending_version,
            pending_document_id=None,
            pending_version=None,
        )
        .execution_options(synchronize_session=False)
    )
    return len(rows), [r[2] for r in rows if r[2] is not None and r[2] != r[3]]


# -- scheduling -------------------------------------------------------------------------------


async def try_lock_source(conn: AsyncConnection, source_id: uuid.UUID) -> bool:
    row = await conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": lock_key(source_id)})
    return bool(row.scalar())


async def unlock_source(conn: AsyncConnection, source_id: uuid.UUID) -> None:
    await conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": lock_key(source_id)})


async def source_idle(session: AsyncSession, source_id: uuid.UUID) -> bool:
    """True when no run holds the source's lock (a transaction-level probe, released at commit)."""
    row = await session.execute(
        text("SELECT pg_try_advisory_xact_lock(:k)"), {"k": lock_key(source_id)}
    )
    return bool(row.scalar())


async def due_sources(session: AsyncSession, limit: int = 50) -> Sequence[SyncSource]:
    """Active, assigned sources whose schedule has come round, locked against other schedulers."""
    rows = await session.execute(
        select(SyncSource)
        .where(
            SyncSource.active.is_(True),
            SyncSource.knowledge_base_id.is_not(None),
            SyncSource.schedule_seconds.is_not(None),
            or_(
                SyncSource.last_run_at.is_(None),
                SyncSource.last_run_at
                + func.make_interval(0, 0, 0, 0, 0, 0, SyncSource.schedule_seconds)
                <= func.now(),
            ),
        )
        .order_by(SyncSource.last_run_at.asc().nulls_first())
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return rows.scalars().all()


async def open_run(session: AsyncSession, source_id: uuid.UUID) -> SyncLog | None:
    row = await session.execute(
        select(SyncLog)
        .where(SyncLog.source_id == source_id, SyncLog.status.in_(OPEN_RUN))
        .order_by(SyncLog.started_at.desc())
        .limit(1)
    )
    return row.scalar_one_or_none()
