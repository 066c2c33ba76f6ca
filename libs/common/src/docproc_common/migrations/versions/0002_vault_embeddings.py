"""Vault and embeddings: what an api_key is for, and the registered keyless endpoints

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("secrets", sa.Column("provider", sa.String(length=32), nullable=True))
    op.create_table(
        "embedding_endpoints",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("organization_id", sa.String(length=200), nullable=True),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("base_url", sa.String(length=500), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_embedding_endpoints")),
    )
    op.create_index(
        op.f("ix_embedding_endpoints_organization_id"),
        "embedding_endpoints",
        ["organization_id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_embedding_endpoints_organization_id"), table_name="embedding_endpoints")
    op.drop_table("embedding_endpoints")
    op.drop_column("secrets", "provider")
