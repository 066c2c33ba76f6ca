"""Which ``rag_`` tables are runtime vector tables, and what a collection may be called.

One predicate serves Alembic (``include_name``), ``list_runtime_tables`` (what ``docproc rag-collections`` prints)
and the name validation: a ``rag_`` table is a collection only when no model
declares it. The refusal of model-owned names is *derived* from the models, so a
model table added later with a ``rag_`` prefix is covered and a collection named
``documents_archive`` is not caught by a literal exclusion.
"""

from __future__ import annotations

import re

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_common.db.models import Base
from docproc_common.errors import FieldError, InvalidInput

VECTOR_TABLE_PREFIX = "rag_"
MAX_COLLECTION_NAME_BYTES = 45
RESERVED_NAMES = frozenset({"all"})
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def model_table_names() -> frozenset[str]:
    return frozenset(Base.metadata.tables)


def is_vector_table(table_name: str) -> bool:
    """True for a runtime ``rag_<collection>`` table, false for every model table."""
    return table_name.startswith(VECTOR_TABLE_PREFIX) and table_name not in model_table_names()


def validate_collection_name(name: str, *, field: str = "collection_name") -> str:
    """Return ``name`` unchanged if it is usable, else raise a 400 naming the rule.

    Never lower-cases or otherwise rewrites: storing a name the caller did not
    write is the reinterpretation this rule exists to prevent.
    """

    def refuse(message: str) -> InvalidInput:
        return InvalidInput(message, fields=[FieldError(field, message)])

    if not _IDENTIFIER.fullmatch(name) or not name.isascii():
        raise refuse(
            "A collection name must be a bare identifier: ASCII letters, digits and "
            "underscores, not starting with a digit"
        )
    if name != name.lower():
        raise refuse(
            "A collection name may not contain uppercase letters: Postgres folds them, "
            "so 'Handbook' and 'handbook' would be one table"
        )
    if len(name.encode()) > MAX_COLLECTION_NAME_BYTES:
        raise refuse(
            f"A collection name may be at most {MAX_COLLECTION_NAME_BYTES} characters, so "
            "its longest derived identifier is not truncated by Postgres"
        )
    if name.startswith("_"):
        raise refuse("A collection name may not start with an underscore: those are reserved")
    if name in RESERVED_NAMES:
        raise refuse(f"'{name}' is a reserved name")
    if VECTOR_TABLE_PREFIX + name in model_table_names():
        raise refuse(f"'{name}' would name the table rag_{name}, which docproc itself owns")
    return name


def vector_table_name(collection_name: str) -> str:
    """The physical table of a collection; refuses an unusable name before any SQL is built."""
    return VECTOR_TABLE_PREFIX + validate_collection_name(collection_name)


async def list_runtime_tables(session: AsyncSession) -> list[str]:
    """The collection names that have a runtime table (never ``rag_documents``)."""
    rows = await session.execute(
        text(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'rag\\_%'"
        )
    )
    return sorted(t[len(VECTOR_TABLE_PREFIX) :] for (t,) in rows if is_vector_table(t))
