"""Sync: claims of sources on documents, run totals, lookup indexes for existing_document

Revision ID: 0003
Revises: 0001
Create Date: 2026-12-01 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("sync_sources", sa.Column("name", sa.String(length=200), nullable=True))
    op.create_index(
        "ix_sync_sources_knowledge_base_id", "sync_sources", ["knowledge_base_id"], unique=False
    )
    op.add_column(
        "sync_logs", sa.Column("deleted", sa.Integer(), server_default="0", nullable=False)
    )
    op.add_column("sync_logs", sa.Column("listing_complete", sa.Boolean(), nullable=True))
    op.add_column(
        "sync_logs",
        sa.Column("bytes_fetched", sa.BigInteger(), server_default="0", nullable=False),
    )
    op.create_table(
        "rag_document_claims",
        sa.Column("source_id", sa.UUID(), nullable=False),
        sa.Column("address_hash", sa.String(length=64), nullable=False),
        sa.Column("source_path", sa.Text(), nullable=False),
        sa.Column("document_id", sa.UUID(), nullable=True),
        sa.Column("remote_version", sa.Text(), nullable=True),
        sa.Column("pending_document_id", sa.UUID(), nullable=True),
        sa.Column("pending_version", sa.Text(), nullable=True),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["sync_sources.id"],
            name=op.f("fk_rag_document_claims_source_id_sync_sources"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["document_id"],
            ["rag_documents.id"],
            name=op.f("fk_rag_document_claims_document_id_rag_documents"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["pending_document_id"],
            ["rag_documents.id"],
            name=op.f("fk_rag_document_claims_pending_document_id_rag_documents"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("source_id", "address_hash", name=op.f("pk_rag_document_claims")),
    )
    op.create_index(
        op.f("ix_rag_document_claims_document_id"),
        "rag_document_claims",
        ["document_id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_rag_document_claims_pending_document_id"),
        "rag_document_claims",
        ["pending_document_id"],
        unique=False,
    )
    for name, column in (
        ("ix_rag_documents_source_path_hash", "source_path"),
        ("ix_rag_documents_filename_hash", "filename"),
        ("ix_rag_documents_content_hash_hash", "content_hash"),
    ):
        op.create_index(name, "rag_documents", [column], unique=False, postgresql_using="hash")


def downgrade() -> None:
    for name in (
        "ix_rag_documents_content_hash_hash",
        "ix_rag_documents_filename_hash",
        "ix_rag_documents_source_path_hash",
    ):
        op.drop_index(name, table_name="rag_documents")
    op.drop_index(
        op.f("ix_rag_document_claims_pending_document_id"), table_name="rag_document_claims"
    )
    op.drop_index(op.f("ix_rag_document_claims_document_id"), table_name="rag_document_claims")
    op.drop_table("rag_document_claims")
    op.drop_column("sync_logs", "bytes_fetched")
    op.drop_column("sync_logs", "listing_complete")
    op.drop_column("sync_logs", "deleted")
    op.drop_index("ix_sync_sources_knowledge_base_id", table_name="sync_sources")
    op.drop_column("sync_sources", "name")
