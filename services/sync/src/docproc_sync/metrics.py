"""Every series the sync service exports (``docproc_sync_*``)."""

from __future__ import annotations

from docproc_common.observability import counter, histogram

RUNS = counter("docproc_sync_runs_total", "Sync runs by final status", ("outcome",))
FILES = counter(
    "docproc_sync_files_total",
    "Files seen by sync runs, by decision (unchanged_signal|unchanged_hash|new_ignored|"
    "unsupported|ingested|updated|failed)",
    ("result",),
)
BYTES = counter(
    "docproc_sync_fetched_bytes_total", "Bytes fetched from sources, by connector", ("connector",)
)
DELETED = counter(
    "docproc_sync_deleted_documents_total",
    "Documents deleted because no source claims them any more (or a replacement finished)",
)
RUN_SECONDS = histogram(
    "docproc_sync_run_seconds",
    "Wall time of one sync run",
    buckets=(1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200),
)
