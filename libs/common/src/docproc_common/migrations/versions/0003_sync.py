"""Sync: claims of sources on documents, run totals, lookup indexes for existing_document"""

import sqlalchemy as sa
from alembic import op
from docproc_common.migrations.shapes import (
    create_index,
    create_table,
    drop_index,
    foreign_key,
    stamp,
)

revision = "0003"
down_revision = "0001"


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
    create_table(
        "rag_document_claims",
        sa.Column("source_id", sa.UUID(), nullable=False),
        sa.Column("address_hash", sa.String(length=64), nullable=False),
        sa.Column("source_path", sa.Text(), nullable=False),
        sa.Column("document_id", sa.UUID(), nullable=True),
        sa.Column("remote_version", sa.Text(), nullable=True),
        sa.Column("pending_document_id", sa.UUID(), nullable=True),
        sa.Column("pending_version", sa.Text(), nullable=True),
        stamp("updated_at"),
        foreign_key("rag_document_claims", "source_id", "sync_sources", ondelete="CASCADE"),
        foreign_key("rag_document_claims", "document_id", "rag_documents", ondelete="SET NULL"),
        foreign_key(
            "rag_document_claims", "pending_document_id", "rag_documents", ondelete="SET NULL"
        ),
        key=("source_id", "address_hash"),
    )
    create_index("rag_document_claims", "document_id")
    create_index("rag_document_claims", "pending_document_id")
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
    drop_index("rag_document_claims", "pending_document_id")
    drop_index("rag_document_claims", "document_id")
    op.drop_table("rag_document_claims")
    op.drop_column("sync_logs", "bytes_fetched")
    op.drop_column("sync_logs", "listing_complete")
    op.drop_column("sync_logs", "deleted")
    op.drop_index("ix_sync_sources_knowledge_base_id", table_name="sync_sources")
    op.drop_column("sync_sources", "name")
