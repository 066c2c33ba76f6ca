"""Every series the upload service exports: ``docproc_upload_*``, and the retrieval quality of
the knowledge bases' evaluation sets (``docproc_retrieval_ndcg_at_10``, named for what it
measures rather than for the service that measures it)."""

from __future__ import annotations

from docproc_common.observability import counter, gauge, histogram

UPLOAD_BYTES = histogram(
    "docproc_upload_upload_size_bytes",
    "Size of accepted uploads",
    ("kind",),
    buckets=tuple(float(4**i * 1024) for i in range(1, 10)),
)
REJECTIONS = counter("docproc_upload_rejections_total", "Uploads refused, by rule", ("rule",))
DOCUMENTS = counter(
    "docproc_upload_documents_total", "Documents by stage and outcome", ("stage", "outcome")
)
STUCK = gauge(
    "docproc_upload_documents_stuck",
    "Documents in processing for longer than STUCK_AFTER_MINUTES",
)
CHAT_UPLOADS = counter(
    "docproc_upload_chat_files_total", "Chat attachments accepted, by file type", ("file_type",)
)
CHAT_RENDERS = counter(
    "docproc_upload_chat_renders_total",
    "Chat attachments rendered for an agent, by route (inline|workspace|inline_fallback|...)",
    ("mode",),
)
EVALUATION_RUNS = counter(
    "docproc_upload_evaluation_runs_total",
    "Runs of evaluation sets kept, by kind (manual|scheduled) and outcome (ok|failed)",
    ("kind", "outcome"),
)
RETRIEVAL_NDCG = gauge(
    "docproc_retrieval_ndcg_at_10",
    "nDCG@10 of a knowledge base's evaluation sets in one search mode, from their newest "
    "scheduled runs (EVALUATIONS__SCHEDULE_INTERVAL_S)",
    ("collection_id", "mode"),
)
