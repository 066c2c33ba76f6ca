"""Every series the parser exports (``docproc_parser_*``)."""

from __future__ import annotations

from docproc_common.observability import counter, histogram

DOCUMENTS = counter(
    "docproc_parser_documents_total", "Documents by stage and outcome", ("stage", "outcome")
)
STAGE_SECONDS = histogram("docproc_parser_stage_seconds", "Time spent per stage", ("stage",))
PAGES = counter("docproc_parser_pages_total", "PDF pages parsed")
