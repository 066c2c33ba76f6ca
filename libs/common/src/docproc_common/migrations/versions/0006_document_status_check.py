"""rag_documents.status holds only processing, done or error

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_check_constraint(
        "ck_rag_documents_status", "rag_documents", "status IN ('processing', 'done', 'error')"
    )


def downgrade() -> None:
    op.drop_constraint("ck_rag_documents_status", "rag_documents", type_="check")
