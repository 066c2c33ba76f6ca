"""rag_documents.page_map: how many chunks each parsed page holds, for the parsed view

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("rag_documents", sa.Column("page_map", postgresql.JSONB(), nullable=True))


def downgrade() -> None:
    op.drop_column("rag_documents", "page_map")
