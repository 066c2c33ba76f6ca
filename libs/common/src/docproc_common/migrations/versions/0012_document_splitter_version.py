"""rag_documents.splitter_version: the splitter version (``docproc_common.splitters``) an
operator ingest cut the document's chunks with; null for a pipeline document and for an
operator ingest from before the column, which the next ``rag-ingest`` of the file re-chunks"""

import sqlalchemy as sa
from docproc_common.migrations.shapes import added_column

revision = "0012"
down_revision = "0011"

upgrade, downgrade = added_column("rag_documents", "splitter_version", sa.Integer(), nullable=True)
