"""knowledge_bases.text_search_config: the configuration a collection's keyword index reads with"""

import sqlalchemy as sa
from docproc_common.migrations.shapes import added_column

revision = "0009"
down_revision = "0008"

upgrade, downgrade = added_column(
    "knowledge_bases", "text_search_config", sa.String(63), nullable=False, server_default="simple"
)
