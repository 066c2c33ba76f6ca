"""Every series the embedder exports (``docproc_embedder_*``)."""

from __future__ import annotations

from docproc_common.observability import counter, histogram

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
