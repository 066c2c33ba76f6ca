"""knowledge_bases.vector_type: how a collection's table stores its embeddings

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01

Every existing base is ``vector``, as every table created before it is.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "knowledge_bases",
        sa.Column("vector_type", sa.String(16), nullable=False, server_default="vector"),
    )


def downgrade() -> None:
    op.drop_column("knowledge_bases", "vector_type")
