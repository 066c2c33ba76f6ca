"""sync_sources.destination_changed_by / _at: who last re-pointed a source's credential (changed
an address field of its configuration), and when; null until someone does"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"


def upgrade() -> None:
    op.add_column(
        "sync_sources", sa.Column("destination_changed_by", sa.String(length=200), nullable=True)
    )
    op.add_column(
        "sync_sources",
        sa.Column("destination_changed_at", sa.DateTime(timezone=True), nullable=True),
    )


def downgrade() -> None:
    op.drop_column("sync_sources", "destination_changed_at")
    op.drop_column("sync_sources", "destination_changed_by")
