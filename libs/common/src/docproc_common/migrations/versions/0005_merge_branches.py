"""Merge the vault/embeddings, sync and chat branches into one line"""

revision = "0005"
down_revision = ("0002", "0003", "0004")


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
