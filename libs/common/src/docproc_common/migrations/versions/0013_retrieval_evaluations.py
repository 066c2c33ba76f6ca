"""retrieval_evaluations and retrieval_evaluation_runs: a knowledge base's evaluation sets
and every scoring of them (``POST /kb/{id}/evaluations``)"""

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

revision = "0013"
down_revision = "0012"


def upgrade() -> None:
    create_table(
        "retrieval_evaluations",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("knowledge_base_id", sa.UUID(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("queries", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        stamp("created_at"),
        foreign_key(
            "retrieval_evaluations", "knowledge_base_id", "knowledge_bases", ondelete="CASCADE"
        ),
    )
    create_index("retrieval_evaluations", "knowledge_base_id")
    create_table(
        "retrieval_evaluation_runs",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("evaluation_id", sa.UUID(), nullable=False),
        sa.Column("trigger", sa.String(length=16), nullable=False),
        sa.Column("started_by", sa.String(length=200), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("scores", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("skipped", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("settings", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("query_count", sa.Integer(), nullable=False),
        sa.Column("missing_documents", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "trigger IN ('manual', 'scheduled')",
            name=op.f("ck_retrieval_evaluation_runs_trigger"),
        ),
        foreign_key(
            "retrieval_evaluation_runs",
            "evaluation_id",
            "retrieval_evaluations",
            ondelete="CASCADE",
        ),
    )
    create_index("retrieval_evaluation_runs", "evaluation_id")


def downgrade() -> None:
    drop_index("retrieval_evaluation_runs", "evaluation_id")
    op.drop_table("retrieval_evaluation_runs")
    drop_index("retrieval_evaluations", "knowledge_base_id")
    op.drop_table("retrieval_evaluations")
