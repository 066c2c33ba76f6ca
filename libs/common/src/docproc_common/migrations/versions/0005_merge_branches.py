"""Merge the vault/embeddings, sync and chat branches into one line

Revision ID: 0005
Revises: 0002, 0003, 0004
Create Date: 2026-11-30
"""

from collections.abc import Sequence

revision: str = "0005"
down_revision: str | Sequence[str] | None = ("0002", "0003", "0004")
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
