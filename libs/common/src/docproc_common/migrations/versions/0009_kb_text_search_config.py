"""knowledge_bases.text_search_config: the configuration a collection's keyword index reads with

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "knowledge_bases",
        sa.Column("text_search_config", sa.String(63), nullable=False, server_default="simple"),
    )


def downgrade() -> None:
    op.drop_column("knowledge_bases", "text_search_config")
