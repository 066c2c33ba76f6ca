"""rag_documents.status holds only processing, done or error"""

from alembic import op

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    op.create_check_constraint(
        "ck_rag_documents_status", "rag_documents", "status IN ('processing', 'done', 'error')"
    )


def downgrade() -> None:
    op.drop_constraint("ck_rag_documents_status", "rag_documents", type_="check")
