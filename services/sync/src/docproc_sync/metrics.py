"""Every series the sync service exports (``docproc_sync_*``)."""

from __future__ import annotations

from docproc_common.observability import counter

RUNS = counter("docproc_sync_runs_total", "Sync runs by outcome", ("outcome",))
FILES = counter("docproc_sync_files_total", "Files seen by sync runs, by result", ("result",))
