"""vision_model_profiles: an organization's vision model profiles (a provider, a model and a
vault key), selected per collection by ``ingestion_config.vision_profile_id``"""

import sqlalchemy as sa
from alembic import op
from docproc_common.migrations.shapes import create_table, stamp

revision = "0014"
down_revision = "0013"


def upgrade() -> None:
    create_table(
        "vision_model_profiles",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("organization_id", sa.String(length=200), nullable=True),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("base_url", sa.String(length=500), nullable=False),
        sa.Column("secret_id", sa.UUID(), nullable=True),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        stamp("created_at"),
    )
    op.create_index(
        "uq_vision_model_profiles_organization_id_name",
        "vision_model_profiles",
        ["organization_id", "name"],
        unique=True,
    )


def downgrade() -> None:
    op.drop_index(
        "uq_vision_model_profiles_organization_id_name", table_name="vision_model_profiles"
    )
    op.drop_table("vision_model_profiles")
