"""Chat attachments: what each rendering added to a prompt, replayed with the history

Revision ID: 0004
Revises: 0001
Create Date: 2026-12-01 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "chat_attachment_renders",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("file_id", sa.UUID(), nullable=False),
        sa.Column("message_id", sa.UUID(), nullable=True),
        sa.Column("user_id", sa.String(length=200), nullable=False),
        sa.Column("agent_id", sa.String(length=128), nullable=False),
        sa.Column("conversation_id", sa.String(length=128), nullable=False),
        sa.Column("mode", sa.String(length=32), nullable=False),
        sa.Column("workspace_path", sa.String(length=1024), nullable=True),
        sa.Column("workspace_bytes", sa.BigInteger(), nullable=False),
        sa.Column("history_text", sa.Text(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["file_id"],
            ["chat_files.id"],
            name=op.f("fk_chat_attachment_renders_file_id_chat_files"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chat_attachment_renders")),
    )
    op.create_index(
        op.f("ix_chat_attachment_renders_file_id"),
        "chat_attachment_renders",
        ["file_id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_chat_attachment_renders_message_id"),
        "chat_attachment_renders",
        ["message_id"],
        unique=False,
    )
    op.create_index(
        "ix_chat_attachment_renders_target",
        "chat_attachment_renders",
        ["file_id", "agent_id", "conversation_id"],
        unique=True,
    )
    op.create_index(
        "ix_chat_attachment_renders_workspace",
        "chat_attachment_renders",
        ["user_id", "agent_id", "conversation_id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_chat_attachment_renders_workspace", table_name="chat_attachment_renders")
    op.drop_index("ix_chat_attachment_renders_target", table_name="chat_attachment_renders")
    op.drop_index(
        op.f("ix_chat_attachment_renders_message_id"), table_name="chat_attachment_renders"
    )
    op.drop_index(op.f("ix_chat_attachment_renders_file_id"), table_name="chat_attachment_renders")
    op.drop_table("chat_attachment_renders")
