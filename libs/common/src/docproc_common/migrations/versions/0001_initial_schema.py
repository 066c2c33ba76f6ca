"""Initial schema: every model table, and the pgvector extension"""

import sqlalchemy as sa
from alembic import op
from docproc_common.migrations.shapes import (
    create_index,
    create_table,
    drop_index,
    foreign_key,
    stamp,
)
from sqlalchemy.dialects import postgresql

revision = "0001"
down_revision = None


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    create_table(
        "audit_log",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=200), nullable=True),
        sa.Column("target", sa.String(length=200), nullable=False),
        sa.Column("details", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        stamp("created_at"),
    )
    create_table(
        "chat_files",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("user_id", sa.String(length=200), nullable=False),
        sa.Column("filename", sa.String(length=1024), nullable=False),
        sa.Column("mime_type", sa.String(length=200), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("storage_path", sa.String(length=1024), nullable=False),
        sa.Column("organizational_unit", sa.String(length=200), nullable=True),
        sa.Column("file_type", sa.String(length=32), nullable=False),
        sa.Column("parsed_content", sa.Text(), nullable=True),
        sa.Column("message_id", sa.UUID(), nullable=True),
        stamp("created_at"),
    )
    create_index("chat_files", "message_id")
    create_index("chat_files", "user_id")
    create_table(
        "collection_teardowns",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("collection_name", sa.String(length=45), nullable=False),
        sa.Column("knowledge_base_id", sa.UUID(), nullable=True),
        sa.Column("drop_table", sa.Boolean(), nullable=False),
        sa.Column("storage_paths", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("vector_document_ids", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        stamp("created_at"),
    )
    create_index("collection_teardowns", "collection_name")
    create_table(
        "embedded_deliveries",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("consumer", sa.String(length=64), nullable=False),
        sa.Column("topic", sa.String(length=200), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("event_id", sa.UUID(), nullable=False),
        sa.Column("payload", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("headers", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        stamp("not_before"),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("dead", sa.Boolean(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
    )
    op.create_index(
        "ix_embedded_deliveries_pending",
        "embedded_deliveries",
        ["consumer", "id"],
        unique=False,
        postgresql_where="done_at IS NULL",
    )
    create_table(
        "knowledge_bases",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("collection_name", sa.String(length=45), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("owner_id", sa.String(length=200), nullable=False),
        sa.Column("organization_id", sa.String(length=200), nullable=True),
        sa.Column("is_default", sa.Boolean(), nullable=False),
        sa.Column("embedding_provider", sa.String(length=32), nullable=False),
        sa.Column("embedding_model", sa.String(length=200), nullable=False),
        sa.Column("embedding_dim", sa.Integer(), nullable=False),
        sa.Column("embedding_secret_id", sa.UUID(), nullable=True),
        sa.Column("embedding_base_url", sa.String(length=500), nullable=True),
        sa.Column("embedding_endpoint_id", sa.UUID(), nullable=True),
        sa.Column("ingestion_config", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        stamp("created_at"),
    )
    create_index("knowledge_bases", "collection_name")
    create_index("knowledge_bases", "organization_id")
    create_table(
        "outbox",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("event_id", sa.UUID(), nullable=False),
        sa.Column("topic", sa.String(length=200), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("payload", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("headers", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        stamp("created_at"),
        sa.Column("published_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("event_id", name=op.f("uq_outbox_event_id")),
    )
    op.create_index(
        "ix_outbox_unpublished",
        "outbox",
        ["id"],
        unique=False,
        postgresql_where="published_at IS NULL",
    )
    create_table(
        "processed_events",
        sa.Column("consumer", sa.String(length=64), nullable=False),
        sa.Column("event_id", sa.UUID(), nullable=False),
        stamp("processed_at"),
        key=("consumer", "event_id"),
    )
    create_table(
        "rag_documents",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("collection_name", sa.String(length=45), nullable=False),
        sa.Column("knowledge_base_id", sa.UUID(), nullable=True),
        sa.Column("organization_id", sa.String(length=200), nullable=True),
        sa.Column("uploaded_by", sa.String(length=200), nullable=True),
        sa.Column("filename", sa.String(length=1024), nullable=False),
        sa.Column("filesize", sa.BigInteger(), nullable=False),
        sa.Column("filetype", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("vector_document_id", sa.UUID(), nullable=True),
        sa.Column("chunk_count", sa.Integer(), nullable=False),
        sa.Column("storage_path", sa.String(length=1024), nullable=True),
        sa.Column("parsed_path", sa.String(length=1024), nullable=True),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("source_path", sa.Text(), nullable=True),
        sa.Column("content_hash", sa.String(length=64), nullable=True),
        sa.Column("organizational_unit", sa.String(length=200), nullable=True),
        sa.Column("document_date", sa.Date(), nullable=True),
        sa.Column("writer_kind", sa.String(length=16), nullable=False),
        sa.Column("ingestion_config", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("attempt_id", sa.UUID(), nullable=True),
        stamp("created_at"),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
    )
    create_index("rag_documents", "collection_name")
    op.create_index(
        "ix_rag_documents_kb_status", "rag_documents", ["knowledge_base_id", "status"], unique=False
    )
    create_index("rag_documents", "knowledge_base_id")
    create_index("rag_documents", "vector_document_id")
    create_table(
        "secrets",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("organization_id", sa.String(length=200), nullable=True),
        sa.Column("owner_id", sa.String(length=200), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("visibility", sa.String(length=16), nullable=False),
        sa.Column("wrapped_key", sa.LargeBinary(), nullable=False),
        sa.Column("ciphertext", sa.LargeBinary(), nullable=False),
        stamp("created_at"),
    )
    create_index("secrets", "organization_id")
    create_table(
        "sync_logs",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("source_id", sa.UUID(), nullable=True),
        sa.Column("collection_name", sa.String(length=45), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("total_files", sa.Integer(), nullable=False),
        sa.Column("ingested", sa.Integer(), nullable=False),
        sa.Column("updated", sa.Integer(), nullable=False),
        sa.Column("skipped", sa.Integer(), nullable=False),
        sa.Column("failed", sa.Integer(), nullable=False),
        sa.Column("error_message", sa.Text(), nullable=True),
        stamp("started_at"),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    )
    create_index("sync_logs", "source_id")
    create_table(
        "sync_sources",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("organization_id", sa.String(length=200), nullable=True),
        sa.Column("collection_name", sa.String(length=45), nullable=True),
        sa.Column("knowledge_base_id", sa.UUID(), nullable=True),
        sa.Column("connector", sa.String(length=32), nullable=False),
        sa.Column("config", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("secret_id", sa.UUID(), nullable=True),
        sa.Column("sync_mode", sa.String(length=16), nullable=False),
        sa.Column("schedule_seconds", sa.Integer(), nullable=True),
        sa.Column("organizational_unit", sa.String(length=200), nullable=True),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        stamp("created_at"),
        sa.Column("last_run_at", sa.DateTime(timezone=True), nullable=True),
    )
    create_index("sync_sources", "collection_name")
    create_table(
        "collection_grants",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("knowledge_base_id", sa.UUID(), nullable=False),
        sa.Column("user_id", sa.String(length=200), nullable=False),
        sa.Column("permission", sa.String(length=16), nullable=False),
        foreign_key(
            "collection_grants", "knowledge_base_id", "knowledge_bases", ondelete="CASCADE"
        ),
    )
    create_index("collection_grants", "knowledge_base_id")
    create_index("collection_grants", "user_id")


def downgrade() -> None:
    drop_index("collection_grants", "user_id")
    drop_index("collection_grants", "knowledge_base_id")
    op.drop_table("collection_grants")
    drop_index("sync_sources", "collection_name")
    op.drop_table("sync_sources")
    drop_index("sync_logs", "source_id")
    op.drop_table("sync_logs")
    drop_index("secrets", "organization_id")
    op.drop_table("secrets")
    drop_index("rag_documents", "vector_document_id")
    drop_index("rag_documents", "knowledge_base_id")
    op.drop_index("ix_rag_documents_kb_status", table_name="rag_documents")
    drop_index("rag_documents", "collection_name")
    op.drop_table("rag_documents")
    op.drop_table("processed_events")
    op.drop_index(
        "ix_outbox_unpublished", table_name="outbox", postgresql_where="published_at IS NULL"
    )
    op.drop_table("outbox")
    drop_index("knowledge_bases", "organization_id")
    drop_index("knowledge_bases", "collection_name")
    op.drop_table("knowledge_bases")
    op.drop_index(
        "ix_embedded_deliveries_pending",
        table_name="embedded_deliveries",
        postgresql_where="done_at IS NULL",
    )
    op.drop_table("embedded_deliveries")
    drop_index("collection_teardowns", "collection_name")
    op.drop_table("collection_teardowns")
    drop_index("chat_files", "user_id")
    drop_index("chat_files", "message_id")
    op.drop_table("chat_files")
    op.drop_table("audit_log")
