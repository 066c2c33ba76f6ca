"""rag_documents.replace_by_name: an upload that replaces the earlier documents of its name"""

import sqlalchemy as sa
from docproc_common.migrations.shapes import added_column

revision = "0008"
down_revision = "0007"

upgrade, downgrade = added_column(
    "rag_documents", "replace_by_name", sa.Boolean(), nullable=False, server_default="false"
)
