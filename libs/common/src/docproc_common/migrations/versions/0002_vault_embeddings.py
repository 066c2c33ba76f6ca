"""Vault and embeddings: what an api_key is for, and the registered keyless endpoints"""

import sqlalchemy as sa
from alembic import op
from docproc_common.migrations.shapes import create_index, create_table, drop_index, stamp

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    op.add_column("secrets", sa.Column("provider", sa.String(length=32), nullable=True))
    create_table(
        "embedding_endpoints",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("organization_id", sa.String(length=200), nullable=True),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("base_url", sa.String(length=500), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        stamp("created_at"),
    )
    create_index("embedding_endpoints", "organization_id")


def downgrade() -> None:
    drop_index("embedding_endpoints", "organization_id")
    op.drop_table("embedding_endpoints")
    op.drop_column("secrets", "provider")
