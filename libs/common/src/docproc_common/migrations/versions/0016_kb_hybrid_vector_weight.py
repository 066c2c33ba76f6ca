"""knowledge_bases.hybrid_vector_weight: a base's hybrid blend (null, as every base before
it: the product's)"""

from docproc_common.migrations.shapes import added_column
from sqlalchemy import Double

revision = "0016"
down_revision = "0015"

upgrade, downgrade = added_column(
    "knowledge_bases", "hybrid_vector_weight", Double(), nullable=True
)
