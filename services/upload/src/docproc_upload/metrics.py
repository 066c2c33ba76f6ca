"""Every series the upload service exports (``docproc_upload_*``)."""

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
