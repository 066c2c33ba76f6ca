"""Operator content: files an operator ingests from a server shell (``docproc rag-ingest``, and
the sync service's ``rag-sync-gdrive``) as rows and chunks no knowledge base owns (no
organization, ``writer_kind operator``), through the one pipeline.

``OperatorIngest`` stores each file's original as an upload's is and accepts its row
(``documents.accept_document``); the parser parses it in its isolated child, and the
embedder embeds it as ``operator_target`` resolves the name, writes its chunks under the
name's lock and retires the file's earlier ingests (matched by its address) in the same
transaction. The ingest then waits for its rows to settle and counts them (``Totals``).

A file is skipped when an earlier ingest of its address holds chunks cut from the same
bytes with the same ingestion settings and splitter version (``SPLITTER_VERSION``); one
whose bytes are the same but not its settings is counted as re-chunked; one already
queued the same way is waited for, not queued again. A name reserved by a pending
deletion is refused before any file is read, and again under the name's lock with each row.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_common.db.models import (
    DocumentStatus,
    KnowledgeBase,
    OutboxEvent,
    RagDocument,
    Scope,
    WriterKind,
)
from docproc_common.db.vector_tables import validate_collection_name
from docproc_common.documents import CLI_SOURCE, accept_document
from docproc_common.embedding.catalog import catalog
from docproc_common.embedding.client import EmbeddingTarget
from docproc_common.errors import Conflict, FieldError, InvalidInput, Unavailable
from docproc_common.events import DocumentAccepted
from docproc_common.formats import Capabilities, check_supported
from docproc_common.ingestion import IngestionConfig
from docproc_common.names import is_reserved, kbs_named, lock_name
from docproc_common.runtime import Runtime
from docproc_common.splitters import SPLITTER_VERSION
from docproc_common.storage import new_storage_path

LOCAL_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
#: How long queued files may wait with none of their events relayed before the ingest
#: says that no deployment is running to take them.
STALL_S = 60.0


def operator_target(collection: str, kbs: Sequence[KnowledgeBase]) -> EmbeddingTarget:
    """What operator content on ``collection`` embeds with, as the seed resolves a name for a
    writer of no organization: the name's app-scoped base (keyless, on the built-in model or
    a deployment-wide service), else the deployment's keyless built-in model.

    Without an app-scoped base, the bases on the name must embed with that built-in model,
    so the table stays one space; a base on any other provider is refused, since embedding
    with it would spend its organization's key."""
    app = next((kb for kb in kbs if kb.scope == Scope.APP), None)
    if app is not None:
        return EmbeddingTarget.of(app)
    others = [
        kb for kb in kbs if (kb.embedding_provider, kb.embedding_model) != ("local", LOCAL_MODEL)
    ]
    if others:
        named = ", ".join(
            f"{kb.id} ({kb.embedding_provider}/{kb.embedding_model})" for kb in others
        )
        raise InvalidInput(
            f"Operator ingestion embeds as an app-scoped base on the name does, else with "
            f"the deployment's built-in model ({LOCAL_MODEL}); '{collection}' has no "
            f"app-scoped base and is held by knowledge bases that embed otherwise: {named}. "
            "Upload through those knowledge bases instead",
            fields=[FieldError("collection", "held by knowledge bases on another provider")],
        )
    return EmbeddingTarget(
        collection_name=collection,
        organization_id=None,
        provider="local",
        model=LOCAL_MODEL,
        dimensions=catalog()["local"].models[LOCAL_MODEL].dimensions,
    )


@dataclass(frozen=True, slots=True)
class OperatorFile:
    """A file to ingest as operator content: where its bytes are, its name and its address."""

    path: Path
    name: str
    source_path: str  # an absolute path, gdrive://<id>: what a later ingest replaces by
    source: str = CLI_SOURCE

    @classmethod
    def local(cls, path: Path) -> OperatorFile:
        return cls(path, path.name, str(path.resolve()))


@dataclass(frozen=True, slots=True)
class Totals:
    """What an operator ingest did: files indexed (those only re-chunked among them), and
    files that failed."""

    ingested: int = 0
    rechunked: int = 0
    failed: int = 0

    def __add__(self, other: Totals) -> Totals:
        return Totals(
            self.ingested + other.ingested,
            self.rechunked + other.rechunked,
            self.failed + other.failed,
        )


@dataclass(frozen=True, slots=True)
class _Queued:
    file: OperatorFile
    row_id: uuid.UUID
    earlier: list[uuid.UUID]  # the address's earlier ingests, which the new one retires
    rechunk: bool


class OperatorIngest:
    """Files queued as operator content on one name, then waited for (module docstring)."""

    def __init__(
        self, runtime: Runtime, collection: str, progress: Callable[[OperatorFile, str], None]
    ) -> None:
        self._runtime = runtime
        self._collection = collection
        self._progress = progress
        self._config = IngestionConfig()
        self._settings = self._config.model_dump(mode="json")
        self._capabilities = Capabilities.declared(runtime.settings.formats)
        self._queued: list[_Queued] = []

    async def check(self) -> None:
        """Refuse the name before anything is read: an invalid one, one whose bases embed so
        that the operator would spend an organization's key, one reserved by a deletion."""
        validate_collection_name(self._collection, field="collection")
        async with self._runtime.sessionmaker() as session:
            operator_target(self._collection, await kbs_named(session, self._collection))
            await self._refuse_reserved(session)

    def supports(self, name: str) -> bool:
        """Whether the deployment's parser reads a file of this name (``Capabilities.declared``)."""
        try:
            check_supported(name, self._config.parser, self._capabilities)
        except InvalidInput:
            return False
        return True

    async def queue(self, file: OperatorFile) -> None:
        """Store ``file`` and accept its row, unless it is unsupported or unchanged."""
        try:
            filetype = check_supported(file.name, self._config.parser, self._capabilities)
        except InvalidInput:
            self._progress(file, "skipped: unsupported type")
            return
        data = await self._runtime.pool.run(file.path.read_bytes)
        digest = await self._runtime.pool.run(lambda: hashlib.sha256(data).hexdigest())
        async with self._runtime.sessionmaker() as session:
            await self._refuse_reserved(session)
            earlier = await _operator_rows(session, self._collection, file.source_path)
        same = [
            r
            for r in earlier
            if r.content_hash == digest
            and r.ingestion_config == self._settings
            and r.splitter_version == SPLITTER_VERSION
        ]
        if any(r.status == DocumentStatus.DONE and r.chunk_count for r in same):
            self._progress(file, "skipped: unchanged since it was ingested")
            return
        rechunk = any(r.content_hash == digest and r.chunk_count for r in earlier)
        pending = next((r for r in same if r.status == DocumentStatus.PROCESSING), None)
        if pending is not None:
            self._progress(file, "already queued: waiting for it")
            others = [r.id for r in earlier if r.id != pending.id]
            self._queued.append(_Queued(file, pending.id, others, rechunk))
            return
        storage_path = new_storage_path(f"rag/{self._collection}", file.name)
        await self._runtime.storage.put(storage_path, data)
        row = RagDocument(
            collection_name=self._collection,
            filename=file.name[:1024],
            filesize=len(data),
            filetype=filetype,
            storage_path=storage_path,
            source=file.source,
            source_path=file.source_path,
            content_hash=digest,
            writer_kind=WriterKind.OPERATOR,
            ingestion_config=self._settings,
            splitter_version=SPLITTER_VERSION,
        )
        try:
            async with self._runtime.sessionmaker() as session, session.begin():
                await lock_name(session, self._collection)
                await self._refuse_reserved(session)
                await accept_document(session, row)
        except BaseException:
            await self._runtime.storage.delete(storage_path)
            raise
        self._queued.append(_Queued(file, row.id, [r.id for r in earlier], rechunk))
        self._progress(file, "queued")

    async def settle(self, poll_s: float = 0.5, stall_s: float = STALL_S) -> Totals:
        """Wait until every queued row is ``done`` or ``error`` (or gone), saying each outcome;
        ``Unavailable`` when, for ``stall_s``, none of their events was even relayed."""
        waiting = {q.row_id: q for q in self._queued}
        totals = Totals()
        since = time.monotonic()
        while waiting:
            async with self._runtime.sessionmaker() as session:
                rows = await _rows(session, list(waiting))
                for row_id, q in list(waiting.items()):
                    row = rows.get(row_id)
                    if row is not None and row.status == DocumentStatus.PROCESSING:
                        continue
                    del waiting[row_id]
                    since = time.monotonic()
                    totals += await self._settled(session, q, row)
                stalled = (
                    waiting
                    and time.monotonic() - since > stall_s
                    and await _unrelayed(session, list(waiting)) == len(waiting)
                )
            if stalled:
                raise Unavailable(
                    f"{len(waiting)} file(s) are queued in '{self._collection}' but no running "
                    "deployment has taken them (their events wait in the outbox): start "
                    "`docproc dev`, or run this where the deployment runs. They are indexed "
                    "once it does; running the command again waits for them."
                )
            if waiting:
                await asyncio.sleep(poll_s)
        self._queued.clear()
        return totals

    async def _settled(self, session: AsyncSession, q: _Queued, row: RagDocument | None) -> Totals:
        if row is None:
            self._progress(q.file, "failed: its row was removed before it was indexed")
            return Totals(failed=1)
        if row.status == DocumentStatus.ERROR:
            self._progress(q.file, f"failed: {row.error_message}")
            return Totals(failed=1)
        if q.rechunk:
            self._progress(
                q.file, f"re-chunked (new settings or splitter): {row.chunk_count} chunks"
            )
            return Totals(ingested=1, rechunked=1)
        replaced = len(q.earlier) - len(await _rows(session, q.earlier))
        self._progress(
            q.file, f"{row.chunk_count} chunks" + (f", replacing {replaced}" if replaced else "")
        )
        return Totals(ingested=1)

    async def _refuse_reserved(self, session: AsyncSession) -> None:
        if await is_reserved(session, self._collection):
            raise Conflict(
                f"The collection name '{self._collection}' is reserved by a pending deletion"
            )


async def _operator_rows(
    session: AsyncSession, collection: str, source_path: str
) -> list[RagDocument]:
    """The operator's earlier ingests of an address into a name."""
    rows = await session.execute(
        select(RagDocument).where(
            RagDocument.collection_name == collection,
            RagDocument.source_path == source_path,
            RagDocument.knowledge_base_id.is_(None),
            RagDocument.organization_id.is_(None),
            RagDocument.writer_kind == WriterKind.OPERATOR,
        )
    )
    return list(rows.scalars())


async def _rows(session: AsyncSession, ids: list[uuid.UUID]) -> dict[uuid.UUID, RagDocument]:
    rows = await session.execute(select(RagDocument).where(RagDocument.id.in_(ids)))
    return {r.id: r for r in rows.scalars()}


async def _unrelayed(session: AsyncSession, ids: list[uuid.UUID]) -> int:
    """How many of these rows' ``DocumentAccepted`` events no relay has published yet."""
    row = await session.execute(
        select(func.count())
        .select_from(OutboxEvent)
        .where(
            OutboxEvent.topic == DocumentAccepted.TOPIC,
            OutboxEvent.published_at.is_(None),
            OutboxEvent.payload["document_id"].astext.in_([str(i) for i in ids]),
        )
    )
    return int(row.scalar() or 0)
