"""Chat attachments: what each rendering added to a prompt, replayed with the history"""

import sqlalchemy as sa
from alembic import op
from docproc_common.migrations.shapes import (
    create_index,
    create_table,
    drop_index,
    foreign_key,
    stamp,
)

revision = "0004"
down_revision = "0001"


def upgrade() -> None:
    create_table(
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
        stamp("created_at"),
        stamp("updated_at"),
        foreign_key("chat_attachment_renders", "file_id", "chat_files", ondelete="CASCADE"),
    )
    create_index("chat_attachment_renders", "file_id")
    create_index("chat_attachment_renders", "message_id")
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
    drop_index("chat_attachment_renders", "message_id")
    drop_index("chat_attachment_renders", "file_id")
    op.drop_table("chat_attachment_renders")
