"""knowledge_bases.vector_type: how a collection's table stores its embeddings (every base
before it is vector, as every table created before it is)"""

import sqlalchemy as sa
from docproc_common.migrations.shapes import added_column

revision = "0010"
down_revision = "0009"

upgrade, downgrade = added_column(
    "knowledge_bases", "vector_type", sa.String(16), nullable=False, server_default="vector"
)
