"""Knowledge-base intake says "busy" instead of queuing without bound.

Before an upload's body is read, ``IntakeGuard.admit`` compares what already waits
with ``LIMITS__INTAKE_MAX_*``: documents accepted but not yet parsed, documents parsed
but not yet embedded, outbox events not yet published. Past a bound the upload is
refused with 503 and ``Retry-After`` (``Busy``, the shape of the chat parse queue's
answer), before anything is stored. The counts are sampled at most every
``LIMITS__INTAKE_SAMPLE_S`` per process (one query at a time, each counting no
further than its bound), so a flood of uploads costs the database one bounded count
per interval, not one per request.
"""

from __future__ import annotations

import asyncio
import time

from docproc_common.errors import Busy
from docproc_common.runtime import Runtime

from docproc_upload.metrics import REJECTIONS
from docproc_upload.rag_documents import repository

#: (queue, the sentence a refused uploader reads)
QUEUES = (
    ("parse", "Too many documents are waiting to be parsed; try again later"),
    ("embed", "Too many documents are waiting to be embedded; try again later"),
    ("outbox", "Too many events are waiting to be published; try again later"),
)


class IntakeGuard:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        limits = runtime.settings.limits
        self.bounds = {
            "parse": limits.intake_max_parse_queue,
            "embed": limits.intake_max_embed_queue,
            "outbox": limits.intake_max_outbox_backlog,
        }
        self.retry_after_s = limits.intake_retry_after_s
        self.sample_s = limits.intake_sample_s
        self._full: set[str] = set()
        self._sampled_at: float | None = None
        self._lock = asyncio.Lock()

    async def admit(self) -> None:
        """Raise ``Busy`` when a queue is at its bound; otherwise return at once."""
        full = await self._full_queues()
        for queue, message in QUEUES:
            if queue in full:
                REJECTIONS.labels(f"busy_{queue}").inc()
                raise Busy(message, retry_after_s=self.retry_after_s, details={"queue": queue})

    def _fresh(self) -> bool:
        return self._sampled_at is not None and time.monotonic() - self._sampled_at < self.sample_s

    async def _full_queues(self) -> set[str]:
        if self._fresh():
            return self._full
        async with self._lock:
            if not self._fresh():
                full: set[str] = set()
                async with self.runtime.sessionmaker() as session:
                    for queue, bound in self.bounds.items():
                        if bound and await repository.count_waiting(session, queue, bound) >= bound:
                            full.add(queue)
                self._full, self._sampled_at = full, time.monotonic()
        return self._full
