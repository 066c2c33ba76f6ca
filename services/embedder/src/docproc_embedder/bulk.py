"""When a collection enters and leaves bulk mode (``docproc_common.bulkload``;
docs/decisions/0005-bulk-load.md).

The handler asks ``maybe_enter`` before each write, at most once per
``bulk_check_interval_s`` and collection; ``sweep`` runs on the same period and folds each
collection in bulk mode whose backlog has drained. Entry and fold are safe to race across
replicas: entry re-checks under the collection's lock, a fold runs under a session lock
(another replica's answers ``busy``).
"""

from __future__ import annotations

import logging
import time

from docproc_common import bulkload
from docproc_common.db.models import KnowledgeBase
from docproc_common.runtime import Runtime

from docproc_embedder import repository
from docproc_embedder.metrics import BULK_ROWS_PENDING, FOLDS, STAGE_SECONDS

log = logging.getLogger(__name__)


class BulkMode:
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._settings = runtime.settings.embedder
        self._checked: dict[str, float] = {}

    async def maybe_enter(self, collection: str, kb: KnowledgeBase) -> None:
        """Enter bulk mode when the collection's backlog says so (``bulkload.should_enter``)."""
        s = self._settings
        now = time.monotonic()
        last = self._checked.get(collection)
        if not s.bulk_enter_backlog or (last is not None and now - last < s.bulk_check_interval_s):
            return
        self._checked[collection] = now
        async with self._runtime.sessionmaker() as session, session.begin():
            if await bulkload.in_bulk(session, collection):
                return
            backlog = await bulkload.backlog(session, collection)
            if not bulkload.should_enter(
                backlog, min_pending=s.bulk_enter_backlog, ratio=s.bulk_enter_ratio
            ) or await repository.reserved(session, collection):
                return
            await bulkload.enter(
                session, collection, kb.embedding_dim, kb.text_search_config, kb.vector_type
            )
            log.info("%s: %d documents pending, %d indexed", collection, *backlog.counts())

    async def sweep(self) -> None:
        """Fold every collection in bulk mode whose load has come and whose backlog is down to
        ``bulk_leave_backlog``; export the rows each still has outside its HNSW index."""
        async with self._runtime.sessionmaker() as session:
            drained = []
            for name in await bulkload.side_tables(session):
                rows = await bulkload.side_rows(session, name)
                BULK_ROWS_PENDING.labels(name).set(rows)
                pending = (await bulkload.backlog(session, name)).pending
                # an empty side table waits for its load (``docproc rag-bulk`` before it)
                if rows and pending <= self._settings.bulk_leave_backlog:
                    drained.append(name)
        for name in drained:
            started = time.perf_counter()
            outcome = await bulkload.fold(
                self._runtime.engine, name, bulkload.IndexBuild.of(self._settings)
            )
            FOLDS.labels(outcome).inc()
            if outcome in ("folded", "merged", "gone", "not_bulk"):
                STAGE_SECONDS.labels("fold").observe(time.perf_counter() - started)
                BULK_ROWS_PENDING.remove(name)  # set above, in this sweep
