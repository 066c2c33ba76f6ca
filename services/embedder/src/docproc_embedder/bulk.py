"""When a collection enters and leaves bulk mode (``docproc_common.bulkload``;
docs/decisions/0005-bulk-load.md).

The index stage's write asks ``maybe_enter`` in the document's transaction, at most once per
``bulk_check_interval_s`` and collection; ``sweep`` folds each collection in bulk mode whose
backlog has drained. It runs on the same period, and also as soon as the writes have
settled (no document written for ``SETTLE_S``): the end of a load is usually that moment,
and its fold then starts a second after the last document instead of up to a whole period
later (``sweeper``). Entry and fold are safe to race across replicas: entry re-checks under
the collection's lock, a fold runs under a session lock (another replica's answers ``busy``).
"""

from __future__ import annotations

import logging
import time

from docproc_common import bulkload
from docproc_common.db.models import KnowledgeBase
from docproc_common.periodic import Task, periodic
from docproc_common.runtime import Runtime
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_embedder.metrics import BULK_ROWS_PENDING, FOLDS, STAGE_SECONDS

log = logging.getLogger(__name__)

SETTLE_S = 1.0
"""Writes have settled (a load has likely ended) when no document was written for this long."""


class BulkMode:
    def __init__(self, runtime: Runtime, settle_s: float = SETTLE_S) -> None:
        self._runtime = runtime
        self._settings = runtime.settings.embedder
        self._settle_s = settle_s
        self._checked: dict[str, float] = {}
        self._last_write: float | None = None
        self._last_sweep: float | None = None

    def wrote(self) -> None:
        """A document's chunk set was committed (``sweeper`` sweeps once the writes settle)."""
        self._last_write = time.monotonic()

    def sweeper(self) -> Task:
        """The embedder's sweep task: ``sweep`` every ``bulk_check_interval_s``, and once
        after each burst of writes, when it has settled."""
        return periodic("bulk-mode sweep", self._tick, self._settle_s, log)

    def _due(self, now: float) -> bool:
        last, written = self._last_sweep, self._last_write
        if last is None or now - last >= self._settings.bulk_check_interval_s:
            return True
        # a burst of writes since the last sweep began, settled now
        return written is not None and written > last and now - written >= self._settle_s

    async def _tick(self) -> None:
        now = time.monotonic()
        if self._due(now):
            self._last_sweep = now
            await self.sweep()

    async def maybe_enter(self, session: AsyncSession, collection: str, kb: KnowledgeBase) -> None:
        """Enter bulk mode, in the document's transaction (its write checked the name is not
        reserved by a teardown), when the collection's backlog says so
        (``bulkload.should_enter``)."""
        s = self._settings
        now = time.monotonic()
        last = self._checked.get(collection)
        if not s.bulk_enter_backlog or (last is not None and now - last < s.bulk_check_interval_s):
            return
        self._checked[collection] = now
        if await bulkload.in_bulk(session, collection):
            return
        backlog = await bulkload.backlog(session, collection)
        if not bulkload.should_enter(
            backlog, min_pending=s.bulk_enter_backlog, ratio=s.bulk_enter_ratio
        ):
            return
        await bulkload.enter(
            session, collection, kb.embedding_dim, kb.text_search_config, kb.vector_type
        )
        log.info("%s: %d documents pending, %d indexed", collection, *backlog.counts())

    async def sweep(self) -> None:
        """Fold every collection in bulk mode whose load has come and whose backlog is down to
        ``bulk_leave_backlog``; export the rows they all still have outside their HNSW
        indexes."""
        pending_rows: dict[str, int] = {}
        async with self._runtime.sessionmaker() as session:
            drained = []
            for name in await bulkload.side_tables(session):
                rows = pending_rows[name] = await bulkload.side_rows(session, name)
                pending = (await bulkload.backlog(session, name)).pending
                # an empty side table waits for its load (``docproc rag-bulk`` before it)
                if rows and pending <= self._settings.bulk_leave_backlog:
                    drained.append(name)
        BULK_ROWS_PENDING.set(sum(pending_rows.values()))
        for name in drained:
            started = time.perf_counter()
            outcome = await bulkload.fold(
                self._runtime.engine, name, bulkload.IndexBuild.of(self._settings)
            )
            FOLDS.labels(outcome).inc()
            if outcome in ("folded", "merged", "gone", "not_bulk"):
                STAGE_SECONDS.labels("fold").observe(time.perf_counter() - started)
                del pending_rows[name]  # in its index now, or gone
                BULK_ROWS_PENDING.set(sum(pending_rows.values()))
