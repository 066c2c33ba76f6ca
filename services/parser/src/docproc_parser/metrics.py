"""Every series the parser exports (``docproc_parser_*``)."""

from __future__ import annotations

from docproc_common.observability import counter, histogram

DOCUMENTS = counter(
    "docproc_parser_documents_total", "Documents by stage and outcome", ("stage", "outcome")
)
STAGE_SECONDS = histogram("docproc_parser_stage_seconds", "Time spent per stage", ("stage",))
PAGES = counter("docproc_parser_pages_total", "Pages parsed (PDF pages, slides)")
ROUTES = counter(
    "docproc_parser_routes_total",
    "Documents parsed, by route (builtin, pymupdf, liteparse, llamaparse)",
    ("route",),
)
LLAMAPARSE_PAGES = counter(
    "docproc_parser_llamaparse_pages_total", "Pages LlamaParse returned (and billed)"
)
IMAGES_DESCRIBED = counter(
    "docproc_parser_images_described_total", "Distinct embedded images described by a vision model"
)
