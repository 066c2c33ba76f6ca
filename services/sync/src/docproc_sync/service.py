"""A sync run, the scheduler that queues due sources, and the reconciler that retires replaced rows.

One run of one source (an advisory lock makes it the only one):

1. **List.** The connector answers with a ``RemoteListing``; ``complete`` says
   whether it names everything.
2. **Decide per file, cheapest question first.** The connector's change signal
   (ETag, blob id, mtime) against the version this source's claim recorded —
   before any byte moves. Then ``existing_document`` (address, then a name not
   addressed elsewhere) — ``update_only`` ignores a file with none, still before
   the download. Then the bytes and their ``content_hash`` against the stored
   documents — after the download, before the embedding. ``full`` replaces
   whatever matches.
3. **Dispatch.** A changed or new file gets a *new* tracking row (``processing``),
   its ``DocumentAccepted`` and this source's claim in one transaction, before it
   is indexed. The row it replaces stays live until the new one is ``done`` (the
   reconciler then retires it): insert before delete, so a search always finds one.
   A file that cannot be fetched gets its own ``error`` row with the reason.
4. **Delete what no source claims.** Only after a complete listing and an
   uncancelled run: the claims on addresses no longer listed are withdrawn, and a
   document no claim names any more is deleted (``DocumentDeleted`` for its chunks).

Re-running is the retry: a file whose claim or stored hash matches is skipped, so
an interrupted run re-sent dispatches exactly what has no document yet.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docproc_common.bus.outbox import enqueue
from docproc_common.bus.stage import Unit
from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.config import check_config
from docproc_common.connectors.errors import ConnectorError
from docproc_common.connectors.remote_names import last_component
from docproc_common.connectors.runs import queue_run
from docproc_common.db.models import DocumentStatus, RagDocument
from docproc_common.documents import accept_document
from docproc_common.errors import InvalidInput
from docproc_common.events import SyncRequested
from docproc_common.formats import Capabilities, check_supported, extension_of
from docproc_common.http import database_unreachable
from docproc_common.ingestion import IngestionConfig
from docproc_common.runtime import Runtime
from docproc_common.settings import SyncSettings
from docproc_common.storage import clean_filename, new_storage_path
from docproc_common.vault import open_secret
from sqlalchemy import func
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_sync import repository
from docproc_sync.connectors import CONNECTORS
from docproc_sync.connectors.base import BaseSyncConnector, RemoteFile, RemoteListing
from docproc_sync.failures import run_failed
from docproc_sync.metrics import BYTES, DELETED, FILES, RUN_SECONDS, RUNS
from docproc_sync.repository import ClaimState, Existing

log = logging.getLogger(__name__)

CANCEL_POLL_S = 2.0


async def claimed(unit: Unit[AsyncSession] | None, session: AsyncSession) -> bool:
    """The claim of the run's delivery, in the run's terminal transaction: False when the
    event was processed already, and the transaction then writes nothing. A run started
    by no delivery (a test bed, a benchmark) has nothing to claim."""
    return unit is None or await unit.claim(session)


@dataclass
class Counts:
    ingested: int = 0
    updated: int = 0
    skipped: int = 0
    failed: int = 0
    deleted: int = 0
    bytes_fetched: int = 0

    def as_columns(self) -> dict[str, int]:
        return {
            "ingested": self.ingested,
            "updated": self.updated,
            "skipped": self.skipped,
            "failed": self.failed,
            "deleted": self.deleted,
            "bytes_fetched": self.bytes_fetched,
        }


class RunRefusedError(Exception):
    """The run cannot start (source gone, deactivated, secret unopenable); the log says why."""


@dataclass
class RunTarget:
    """What a run needs from the rows, read once under the source's lock."""

    source_id: uuid.UUID
    log_id: uuid.UUID
    connector_name: str
    mode: str
    kb_id: uuid.UUID
    collection: str
    organization_id: str | None
    organizational_unit: str | None
    ingestion: IngestionConfig
    connector: BaseSyncConnector[Any]
    work_dir: Path
    resume_after: str | None = None
    unit: Unit[AsyncSession] | None = None  # the delivery's, claimed at the end
    counts: Counts = field(default_factory=Counts)


class SyncRun:
    def __init__(self, runtime: Runtime, settings: SyncSettings, target: RunTarget) -> None:
        self.runtime = runtime
        self.settings = settings
        self.t = target
        self.counts = target.counts
        self.max_bytes = runtime.settings.limits.max_upload_size_mb * 1024 * 1024
        #: what the parser reads, as the deployment declares it (never probed here)
        self.capabilities = Capabilities.declared(runtime.settings.formats)
        self.cancelled = False
        self.deadline = time.monotonic() + settings.run_slice_s
        self.resume_after: str | None = None  # set when the run continues in another slice
        self._taken = 0
        self._slice_over = False
        self._last: str | None = None
        self._n = 0
        self._by_path: dict[str, Existing] = {}
        self._by_name: dict[str, Existing] = {}
        self._addresses: set[str] = set()

    # -- the run --------------------------------------------------------------------------

    async def execute(self) -> str:
        """``done``, ``cancelled`` or ``error`` (a listing that failed)."""
        try:
            listing = await self.t.connector.list_files()
        except ConnectorError as exc:
            log.warning("listing source %s failed: %s", self.t.source_id, exc, exc_info=exc)
            await self._finish("error", exc.message)
            return "error"
        async with self.runtime.sessionmaker() as s, s.begin():
            await repository.record_listing(s, self.t.log_id, len(listing.files), listing.complete)
            claims = await repository.claims_of(s, self.t.source_id)
        listed = await self._process_all(listing, claims)
        if self.cancelled:
            await self._finish("cancelled", "Cancelled; nothing was deleted")
            return "cancelled"
        if self.resume_after is not None:
            await self._continue()
            return "continued"
        async with self.runtime.sessionmaker() as s:
            async with s.begin():
                if not await claimed(self.t.unit, s):
                    return "finished"
                if listing.complete:
                    _, named = await repository.drop_claims(s, self.t.source_id, listed)
                    self.counts.deleted = await repository.delete_unclaimed(s, named)
                note = (
                    None
                    if listing.complete
                    else f"Incomplete listing, nothing deleted: {listing.note}"
                )
                await repository.finish_log(
                    s, self.t.log_id, "done", counts=self.counts.as_columns(), error_message=note
                )
        DELETED.inc(self.counts.deleted)
        return "done"

    async def _continue(self) -> None:
        """This slice is over: its counts, and the event that runs the rest, in one transaction."""
        async with self.runtime.sessionmaker() as s, s.begin():
            if not await claimed(self.t.unit, s):
                return
            await repository.add_counts(s, self.t.log_id, self.counts.as_columns())
            await enqueue(
                s,
                SyncRequested(
                    sync_log_id=self.t.log_id,
                    collection_name=self.t.collection,
                    knowledge_base_id=self.t.kb_id,
                    connector=self.t.connector_name,
                    config={},
                    sync_mode=self.t.mode,
                    source_id=self.t.source_id,
                    organizational_unit=self.t.organizational_unit,
                    resume_after=self.resume_after,
                ),
            )

    async def _process_all(self, listing: RemoteListing, claims: dict[str, ClaimState]) -> set[str]:
        listed: set[str] = set()
        unique: list[RemoteFile] = []
        for remote in sorted(listing.files, key=lambda f: f.address):
            key = repository.address_hash(remote.address)
            if key not in listed:
                listed.add(key)
                unique.append(remote)
        self._addresses = {r.address for r in unique}
        if self.t.resume_after is not None:  # an earlier slice of this run did these
            unique = [r for r in unique if r.address > self.t.resume_after]
        current = [
            self._current_by_signal(r, claims.get(repository.address_hash(r.address)))
            for r in unique
        ]
        await self._prefetch([r for r, c in zip(unique, current, strict=True) if not c])
        work: Iterator[tuple[RemoteFile, bool]] = iter(zip(unique, current, strict=True))
        watcher = asyncio.create_task(self._watch_cancel())

        async def worker() -> None:
            while not self.cancelled:
                if self._taken and time.monotonic() > self.deadline:
                    self._slice_over = True
                    return
                taken = next(work, None)
                if taken is None:
                    return
                remote, unchanged = taken
                self._taken += 1
                self._last = remote.address
                if unchanged:
                    self._skip("unchanged_signal")
                    continue
                await self._one(remote, claims.get(repository.address_hash(remote.address)))

        self.deadline = time.monotonic() + self.settings.run_slice_s
        workers = [asyncio.create_task(worker()) for _ in range(self.settings.concurrency)]
        try:
            await asyncio.gather(*workers)
        finally:
            # one worker failed: the others stop too, before the run is recorded or retried
            for task in (*workers, watcher):
                task.cancel()
            await asyncio.gather(*workers, watcher, return_exceptions=True)
        if self._slice_over and next(work, None) is not None:
            self.resume_after = self._last
        return listed

    async def _prefetch(self, files: list[RemoteFile]) -> None:
        """``existing_document`` by address and by name for every file the signal did not settle,
        a statement per thousand files instead of two per file."""
        names: list[str] = []
        for remote in files:
            with contextlib.suppress(ConnectorError):
                names.append(last_component(remote.name))
        async with self.runtime.sessionmaker() as s:
            self._by_path, self._by_name = await repository.existing_documents(
                s, self.t.kb_id, [r.address for r in files], names
            )

    async def _watch_cancel(self) -> None:
        while not self.cancelled:
            await asyncio.sleep(CANCEL_POLL_S)
            async with self.runtime.sessionmaker() as s:
                self.cancelled = await repository.log_status(s, self.t.log_id) == "cancelling"

    async def _finish(self, status: str, message: str | None) -> None:
        async with self.runtime.sessionmaker() as s, s.begin():
            if not await claimed(self.t.unit, s):
                return
            await repository.finish_log(
                s,
                self.t.log_id,
                status,
                counts=self.counts.as_columns(),
                error_message=message,
            )

    # -- one file ---------------------------------------------------------------------------

    def _skip(self, why: str) -> None:
        self.counts.skipped += 1
        FILES.labels(why).inc()

    def _current_by_signal(self, remote: RemoteFile, claim: ClaimState | None) -> bool:
        """The connector's change signal says this source already has this very version."""
        if self.t.mode == "full" or remote.version is None or claim is None:
            return False
        pending, live = claim.pending(), claim.live()
        if pending is not None:
            return claim.pending_version == remote.version and pending.status in (
                DocumentStatus.PROCESSING,
                DocumentStatus.DONE,
            )
        return (
            live is not None
            and claim.remote_version == remote.version
            and live.status == DocumentStatus.DONE
            and live.content_hash is not None
        )

    async def _one(self, remote: RemoteFile, claim: ClaimState | None) -> None:
        try:
            await self._decide(remote, claim)
        except IntegrityError:
            # a document this file matched was deleted between the read and the claim
            log.warning("claim on %s raced a deletion; the next run retries it", remote.address)
            self.counts.failed += 1
            FILES.labels("failed").inc()

    async def _decide(self, remote: RemoteFile, claim: ClaimState | None) -> None:
        try:
            label = last_component(remote.name)
        except ConnectorError as exc:
            await self._fail(remote, clean_filename(remote.name), "", exc.message)
            return
        existing = self._by_path.get(remote.address) or self._by_name.get(label)
        known = existing is not None or (
            claim is not None and (claim.live() or claim.pending()) is not None
        )
        if self.t.mode == "update_only" and not known:
            self._skip("new_ignored")
            return
        try:
            ext = check_supported(label, self.t.ingestion.parser, self.capabilities)
        except InvalidInput:
            self._skip("unsupported")
            return
        if remote.size is not None and remote.size > self.max_bytes:
            await self._fail(remote, label, ext, self._too_large())
            return
        try:
            data = await self._download(remote)
        except ConnectorError as exc:
            log.warning(
                "fetching %s of source %s failed: %s",
                remote.address,
                self.t.source_id,
                exc,
                exc_info=exc,
            )
            await self._fail(remote, label, ext, exc.message)
            return
        if len(data) > self.max_bytes:
            await self._fail(remote, label, ext, self._too_large())
            return
        digest = hashlib.sha256(data).hexdigest()
        if existing is None:
            async with self.runtime.sessionmaker() as s:
                same = await repository.existing_document(s, self.t.kb_id, content_hash=digest)
            # the same bytes under an address this listing still names are that address's
            # document, not this one's: two files, two documents (a move is the match)
            if same is None or same.source_path not in self._addresses:
                existing = same
        if self.t.mode != "full":
            for candidate in self._candidates(existing, claim):
                if candidate.content_hash == digest:
                    if not self._claims_already(claim, candidate, remote.version):
                        await self._claim_match(remote, candidate)
                    self._skip("unchanged_hash")
                    return
        replaced = await self._dispatch(remote, label, ext, data, digest, existing)
        if replaced:
            self.counts.updated += 1
            FILES.labels("updated").inc()
        else:
            self.counts.ingested += 1
            FILES.labels("ingested").inc()

    def _too_large(self) -> str:
        limit = self.runtime.settings.limits.max_upload_size_mb
        return f"The file is larger than the {limit} MB limit"

    @staticmethod
    def _claims_already(claim: ClaimState | None, doc: Existing, version: str | None) -> bool:
        """This source's claim already names ``doc`` at this version: nothing to write."""
        if claim is None:
            return False
        if doc.status == DocumentStatus.DONE:
            return (
                claim.document_id == doc.id
                and claim.pending_document_id is None
                and claim.remote_version == version
            )
        return claim.pending_document_id == doc.id and claim.pending_version == version

    @staticmethod
    def _candidates(existing: Existing | None, claim: ClaimState | None) -> list[Existing]:
        """Stored documents the downloaded bytes may already be: never a failed attempt."""
        found = [existing]
        if claim is not None:
            found += [claim.pending(), claim.live()]
        usable = (DocumentStatus.DONE, DocumentStatus.PROCESSING)
        return [c for c in found if c is not None and c.status in usable and c.content_hash]

    async def _download(self, remote: RemoteFile) -> bytes:
        self._n += 1
        file_dir = self.t.work_dir / f"f{self._n}"
        file_dir.mkdir(mode=0o700)
        try:
            path = await self.t.connector.fetch(remote, file_dir)
            data = await self.runtime.pool.run(path.read_bytes)
        finally:
            await self.runtime.pool.run(shutil.rmtree, file_dir, True)
        self.counts.bytes_fetched += len(data)
        BYTES.labels(self.t.connector_name).inc(len(data))
        return data

    def _row(self, remote: RemoteFile, label: str, ext: str, **values: Any) -> RagDocument:
        return RagDocument(
            collection_name=self.t.collection,
            knowledge_base_id=self.t.kb_id,
            organization_id=self.t.organization_id,
            filename=label[:1024],
            filetype=ext[:32],
            storage_path=None,
            source=self.t.connector_name,
            source_path=remote.address,
            organizational_unit=self.t.organizational_unit,
            ingestion_config=self.t.ingestion.model_dump(mode="json"),
            **values,
        )

    async def _dispatch(
        self,
        remote: RemoteFile,
        label: str,
        ext: str,
        data: bytes,
        digest: str,
        existing: Existing | None,
    ) -> bool:
        """New tracking row + ``DocumentAccepted`` + claim, one transaction. True: it replaces one."""
        staged = new_storage_path(f"rag/{self.t.collection}/_staged", label)
        await self.runtime.storage.put(staged, data)
        try:
            async with self.runtime.sessionmaker() as s, s.begin():
                claim = await repository.lock_claim(s, self.t.source_id, remote.address)
                settled = await self._settle(s, claim)
                live = claim.document_id
                if live is None and existing is not None and existing.status == DocumentStatus.DONE:
                    live = existing.id  # adopted: retired once the replacement is done
                doc = self._row(remote, label, ext, filesize=len(data), content_hash=digest)
                await accept_document(s, doc, staged_path=staged)
                retire = await self._repoint(
                    s, claim, remote, doc.id, live, look_back=existing is not None
                )
                await repository.delete_unclaimed(s, retire + settled)
        except BaseException:
            await self.runtime.storage.delete(staged)
            raise
        return live is not None

    @staticmethod
    async def _settle(s: AsyncSession, claim: Any) -> list[uuid.UUID]:
        """A pending attempt already ``done`` is the live one (the reconciler may not have come
        by yet): promote it before a newer attempt supersedes it; the replaced one to retire."""
        pending = claim.pending_document_id
        if pending is None or await repository.status_of(s, pending) != DocumentStatus.DONE:
            return []
        replaced = claim.document_id
        claim.document_id = pending
        claim.remote_version = claim.pending_version
        claim.pending_document_id = None
        claim.pending_version = None
        await s.flush()
        return [replaced] if replaced is not None and replaced != pending else []

    async def _repoint(
        self,
        s: AsyncSession,
        claim: Any,
        remote: RemoteFile,
        pending: uuid.UUID,
        live: uuid.UUID | None,
        *,
        look_back: bool = True,
    ) -> list[uuid.UUID]:
        """Make ``pending`` the claim's newest attempt; the attempts it supersedes to retire.

        ``look_back``: earlier failed rows may exist at this address (an address where
        nothing was stored has none, so a brand-new file skips the question).
        """
        old = claim.pending_document_id
        claim.document_id = live
        claim.pending_document_id = pending
        claim.pending_version = remote.version
        await s.flush()
        keep = [pending] + ([live] if live else [])
        retire: list[uuid.UUID] = []
        if look_back or old is not None or live is not None:
            retire = await repository.stale_failures(s, self.t.kb_id, remote.address, keep)
        if old is not None and old != pending:
            retire.append(old)
        return retire

    async def _claim_match(self, remote: RemoteFile, doc: Existing) -> None:
        """The file is a stored document already: this source claims it (and nothing is fetched again)."""
        async with self.runtime.sessionmaker() as s, s.begin():
            claim = await repository.lock_claim(s, self.t.source_id, remote.address)
            retire: list[uuid.UUID] = []
            if doc.status == DocumentStatus.DONE:
                for previous in (claim.document_id, claim.pending_document_id):
                    if previous is not None and previous != doc.id:
                        retire.append(previous)
                claim.document_id = doc.id
                claim.remote_version = remote.version
                claim.pending_document_id = None
                claim.pending_version = None
            else:
                if claim.pending_document_id not in (None, doc.id):
                    retire.append(claim.pending_document_id)
                claim.pending_document_id = doc.id
                claim.pending_version = remote.version
            await s.flush()
            await repository.delete_unclaimed(s, retire)

    async def _fail(self, remote: RemoteFile, label: str, ext: str, reason: str) -> None:
        """A file that could not be fetched gets its own ``error`` row naming why (a sentence
        written here: a client's failure is ``ClientFailedError``'s stage, kind and advice)."""
        self.counts.failed += 1
        FILES.labels("failed").inc()
        async with self.runtime.sessionmaker() as s, s.begin():
            claim = await repository.lock_claim(s, self.t.source_id, remote.address)
            settled = await self._settle(s, claim)
            doc = self._row(
                remote,
                label or "file",
                ext or extension_of(label),
                filesize=remote.size or 0,
                status=DocumentStatus.ERROR,
                error_message=reason[:4000],
                completed_at=func.now(),
            )
            s.add(doc)
            await s.flush()
            retire = await self._repoint(s, claim, remote, doc.id, claim.document_id)
            await repository.delete_unclaimed(s, retire + settled)


# -- entry points ----------------------------------------------------------------------------


async def run_source(
    runtime: Runtime,
    settings: SyncSettings,
    source_id: uuid.UUID,
    log_id: uuid.UUID,
    *,
    resume_after: str | None = None,
    unit: Unit[AsyncSession] | None = None,
) -> str:
    """Run one slice of one run of one source; returns its status (``continued``: another
    slice was queued in the same transaction as this one's counts)."""
    started = time.perf_counter()
    async with runtime.engine.connect() as lock_conn:
        locked = await repository.try_lock_source(lock_conn, source_id)
        await lock_conn.commit()
        if not locked:
            async with runtime.sessionmaker() as s, s.begin():
                if await claimed(unit, s) and await repository.log_status(s, log_id) == "queued":
                    await repository.finish_log(
                        s,
                        log_id,
                        "skipped",
                        error_message="Another run of this source is in progress",
                    )
            RUNS.labels("skipped").inc()
            return "skipped"
        try:
            status = await _run_locked(runtime, settings, source_id, log_id, resume_after, unit)
        finally:
            try:
                await repository.unlock_source(lock_conn, source_id)
                await lock_conn.commit()
            except Exception:  # noqa: BLE001 - a dead connection releases the lock itself
                await lock_conn.invalidate()
    RUNS.labels(status).inc()
    RUN_SECONDS.observe(time.perf_counter() - started)
    return status


@dataclass(frozen=True, slots=True)
class SqlRuns:
    """``handler.Runs`` on the database: ``run_source`` and the run's log."""

    runtime: Runtime
    settings: SyncSettings

    async def run(
        self,
        unit: Unit[AsyncSession],
        source_id: uuid.UUID,
        log_id: uuid.UUID,
        resume_after: str | None,
    ) -> str:
        return await run_source(
            self.runtime, self.settings, source_id, log_id, resume_after=resume_after, unit=unit
        )

    async def fail(self, session: AsyncSession, log_id: uuid.UUID, error_message: str) -> None:
        await repository.finish_log(session, log_id, "error", error_message=error_message)


async def _run_locked(
    runtime: Runtime,
    settings: SyncSettings,
    source_id: uuid.UUID,
    log_id: uuid.UUID,
    resume_after: str | None,
    unit: Unit[AsyncSession] | None,
) -> str:
    try:
        target = await _prepare(runtime, settings, source_id, log_id)
    except RunRefusedError as exc:
        async with runtime.sessionmaker() as s, s.begin():
            if await claimed(unit, s):
                await repository.finish_log(s, log_id, "error", error_message=str(exc))
        return "error"
    if target is None:
        async with runtime.sessionmaker() as s, s.begin():
            await claimed(unit, s)
        return "finished"
    target.resume_after = resume_after
    target.unit = unit
    try:
        return await SyncRun(runtime, settings, target).execute()
    except Exception as exc:
        if database_unreachable(exc):
            raise  # the event is retried: the run again, skipping what this one did
        log.exception("sync run %s of source %s failed", log_id, source_id)
        async with runtime.sessionmaker() as s, s.begin():
            if not await claimed(unit, s):
                return "finished"
            await repository.finish_log(
                s, log_id, "error", counts=target.counts.as_columns(), error_message=run_failed(exc)
            )
        return "error"
    finally:
        await target.connector.aclose()
        shutil.rmtree(target.work_dir, ignore_errors=True)


async def _prepare(
    runtime: Runtime, settings: SyncSettings, source_id: uuid.UUID, log_id: uuid.UUID
) -> RunTarget | None:
    """Read the source under its lock, open its secret for its own organization, build the connector."""
    async with runtime.sessionmaker() as s, s.begin():
        await repository.interrupt_stale_runs(s, source_id, keep=log_id)
        status = await repository.log_status(s, log_id)
        if status == "cancelling":
            await repository.finish_log(s, log_id, "cancelled", error_message="Cancelled")
            return None
        if not await repository.start_log(s, log_id):
            return None  # finished already (a redelivery), or cancelled while queued
        src = await repository.source(s, source_id)
        if src is None:
            raise RunRefusedError("The source was deleted")
        if not src.active or src.knowledge_base_id is None:
            raise RunRefusedError(
                "The source is deactivated (its knowledge base was deleted); "
                "assign it to a knowledge base to run it again"
            )
        kb = await repository.kb(s, src.knowledge_base_id)
        if kb is None:
            raise RunRefusedError("The source's knowledge base no longer exists")
        cls = CONNECTORS.get(src.connector)
        if cls is None:
            raise RunRefusedError(f"The connector '{src.connector}' is not available")
        try:  # asked again: a row written before a check (a token in a URL) must not run
            config = check_config(src.connector, src.config, ConnectorOptions.of(settings))
        except InvalidInput as exc:
            raise RunRefusedError(
                f"The source's configuration is no longer accepted: {exc.message}"
            ) from exc
        secret: dict[str, Any] | None = None
        if src.secret_id is not None:
            opened = await open_secret(
                s,
                secret_id=src.secret_id,
                organization_id=src.organization_id,
                master_key=runtime.settings.vault.key(),
            )
            if opened is None:
                raise RunRefusedError(
                    f"The source's credential (secret {src.secret_id}) cannot be opened for its "
                    "organization; the source does not sync until it names one that can"
                )
            if cls.SECRET_KIND and opened.kind != cls.SECRET_KIND:
                raise RunRefusedError(
                    f"The source's secret is a {opened.kind}, not a {cls.SECRET_KIND}"
                )
            secret = dict(opened.value)
        ingestion = IngestionConfig.model_validate(kb.ingestion_config)
        values = (src.connector, src.sync_mode, kb.id, kb.collection_name, kb.organization_id)
        unit = src.organizational_unit
    runs_dir = settings.state_dir / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    work_dir = Path(tempfile.mkdtemp(prefix=f"{source_id.hex[:8]}-", dir=runs_dir))
    cache_dir = settings.state_dir / "sources" / source_id.hex
    options = ConnectorOptions.of(
        settings,
        work_dir=work_dir,
        cache_dir=cache_dir,
        pool=runtime.pool,
        full_listing=values[1] == "full",
    )
    try:
        connector = cls(config, secret, options)
    except ConnectorError as exc:
        shutil.rmtree(work_dir, ignore_errors=True)
        raise RunRefusedError(exc.message) from exc
    return RunTarget(
        source_id=source_id,
        log_id=log_id,
        connector_name=values[0],
        mode=values[1],
        kb_id=values[2],
        collection=values[3],
        organization_id=values[4],
        organizational_unit=unit,
        ingestion=ingestion,
        connector=connector,
        work_dir=work_dir,
    )


async def schedule_once(runtime: Runtime) -> int:
    """Queue a run for every due source that has none open; returns how many were queued."""
    queued = 0
    async with runtime.sessionmaker() as s, s.begin():
        for src in await repository.due_sources(s):
            if not await repository.source_idle(s, src.id):
                continue  # a run holds the lock: it is not stale, wait for it
            await repository.interrupt_stale_runs(s, src.id, keep=None)
            if await repository.open_run(s, src.id) is not None:
                continue  # queued, not yet picked up
            await queue_run(s, src)
            queued += 1
    return queued


async def reconcile_once(runtime: Runtime) -> int:
    """Promote finished replacements and retire the documents they replaced; returns how many."""
    retired = 0
    while True:
        async with runtime.sessionmaker() as s, s.begin():
            promoted, replaced = await repository.promote_finished(s, limit=500)
            retired += await repository.delete_unclaimed(s, replaced)
        if promoted < 500:
            DELETED.inc(retired)
            return retired
