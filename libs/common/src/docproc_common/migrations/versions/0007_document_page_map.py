"""rag_documents.page_map: how many chunks each parsed page holds, for the parsed view"""

from docproc_common.migrations.shapes import added_column
from sqlalchemy.dialects import postgresql

revision = "0007"
down_revision = "0006"

upgrade, downgrade = added_column("rag_documents", "page_map", postgresql.JSONB(), nullable=True)
