"""Every series the embedder exports (``docproc_embedder_*``)."""

from __future__ import annotations

from docproc_common.observability import counter, gauge, histogram

DOCUMENTS = counter(
    "docproc_embedder_documents_total", "Documents by stage and outcome", ("stage", "outcome")
)
STAGE_SECONDS = histogram("docproc_embedder_stage_seconds", "Time spent per stage", ("stage",))
CHUNKS = counter("docproc_embedder_chunks_total", "Chunks embedded and written")
TOKENS = counter(
    "docproc_embedder_embedding_tokens_total", "Tokens sent to the embedding model", ("provider",)
)
PROVIDER_ERRORS = counter(
    "docproc_embedder_provider_errors_total",
    "Embedding provider failures by class",
    ("error_class",),
)
#: Over every collection in bulk mode: a collection's name is a tenant's, never a label
#: (``observability.LABELS``); each base's own count is its ``vector_rows_pending``.
BULK_ROWS_PENDING = gauge(
    "docproc_embedder_bulk_rows_pending",
    "Rows of the collections in bulk mode not yet in their HNSW index (their side tables)",
)
FOLDS = counter(
    "docproc_embedder_bulk_folds_total",
    "Folds out of bulk mode by outcome (folded, merged, busy, not_bulk, gone)",
    ("outcome",),
)
