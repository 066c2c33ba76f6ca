"""knowledge_bases.rerank: a base's reranker (null, as every base before it: none)"""

from docproc_common.migrations.shapes import added_column
from sqlalchemy.dialects.postgresql import JSONB

revision = "0015"
down_revision = "0014"

upgrade, downgrade = added_column("knowledge_bases", "rerank", JSONB(), nullable=True)
