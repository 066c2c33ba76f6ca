"""What the migration scripts repeat: a table under its conventional key name, the timestamp the
database stamps, a foreign key to another table's ``id``, a one-column index, and the migration
that adds one column.

Names follow the models' naming convention and go through ``op.f`` (final), as autogenerate
writes them; the SQL is what the scripts spelled out by hand before (``alembic upgrade head
--sql`` is byte-identical). A script still lists its own tables, columns and indexes: a
migration is frozen history, never read from the models.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import op


def create_table(
    name: str, *items: sa.Column[Any] | sa.Constraint, key: tuple[str, ...] = ("id",)
) -> None:
    """``op.create_table`` with the primary key ``pk_<name>`` on ``key``."""
    op.create_table(name, *items, sa.PrimaryKeyConstraint(*key, name=op.f(f"pk_{name}")))


def stamp(name: str) -> sa.Column[Any]:
    """A timestamp the database writes on insert (``created_at``, ``updated_at``, ...)."""
    return sa.Column(
        name, sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
    )


def foreign_key(table: str, column: str, target: str, *, ondelete: str) -> sa.ForeignKeyConstraint:
    """``table.column`` referencing ``target.id``, named ``fk_<table>_<column>_<target>``."""
    return sa.ForeignKeyConstraint(
        [column], [f"{target}.id"], name=op.f(f"fk_{table}_{column}_{target}"), ondelete=ondelete
    )


def create_index(table: str, column: str) -> None:
    """The plain index on one column, named ``ix_<table>_<column>``."""
    op.create_index(op.f(f"ix_{table}_{column}"), table, [column], unique=False)


def drop_index(table: str, column: str) -> None:
    op.drop_index(op.f(f"ix_{table}_{column}"), table_name=table)


def added_column(
    table: str, name: str, type_: sa.types.TypeEngine[Any], **options: Any
) -> tuple[Callable[[], None], Callable[[], None]]:
    """The ``upgrade`` and ``downgrade`` of a migration that adds one column to ``table``.

    The column is built on each upgrade: a ``Column`` belongs to one table, and one process may
    migrate several databases."""

    def upgrade() -> None:
        op.add_column(table, sa.Column(name, type_, **options))

    def downgrade() -> None:
        op.drop_column(table, name)

    return upgrade, downgrade
