"""The SQL of knowledge bases and their collection names: lookups, who reaches which base
(``reachable``, the rows ``access.reach`` decides), the name lock, reservations, grants, and
what keeps the last bases' vector table."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from docproc_common.db.models import (
    CollectionGrant,
    DocumentStatus,
    KnowledgeBase,
    RagDocument,
    Scope,
)
from docproc_common.db.vector_tables import vector_table_name
from docproc_common.vectorstore import OPERATOR_CHUNKS, table_exists
from sqlalchemy import ColumnElement, and_, delete, false, func, or_, select, text, true
from sqlalchemy.ext.asyncio import AsyncSession

if TYPE_CHECKING:
    from docproc_upload.access import Reach


async def kb(session: AsyncSession, kb_id: uuid.UUID) -> KnowledgeBase | None:
    return await session.get(KnowledgeBase, kb_id)


def reachable(reach: Reach) -> ColumnElement[bool]:
    """A SQL predicate on ``KnowledgeBase`` selecting exactly the rows ``reach`` reaches
    (``access.reach``)."""
    own = and_(KnowledgeBase.scope == Scope.PERSONAL, KnowledgeBase.owner_id == reach.user_id)
    org = (
        and_(
            KnowledgeBase.scope == Scope.ORG, KnowledgeBase.organization_id == reach.organization_id
        )
        if reach.organization_id
        else false()
    )
    app = KnowledgeBase.scope == Scope.APP if reach.app else false()
    granted = KnowledgeBase.id.in_(
        select(CollectionGrant.knowledge_base_id).where(
            CollectionGrant.user_id == reach.user_id,
            CollectionGrant.permission.in_(list(reach.grants)),
        )
    )
    return or_(own, org, app, granted)


async def reachable_kb(
    session: AsyncSession, reach: Reach, kb_id: uuid.UUID
) -> KnowledgeBase | None:
    rows = await session.execute(
        select(KnowledgeBase).where(KnowledgeBase.id == kb_id, reachable(reach))
    )
    return rows.scalar_one_or_none()


async def reachable_kbs(
    session: AsyncSession, reach: Reach, kb_ids: Sequence[uuid.UUID]
) -> list[KnowledgeBase]:
    """Those of ``kb_ids`` that ``reach`` reaches, in one statement, in no given order."""
    rows = await session.execute(
        select(KnowledgeBase).where(KnowledgeBase.id.in_(list(kb_ids)), reachable(reach))
    )
    return list(rows.scalars())


async def reachable_named(
    session: AsyncSession, reach: Reach, collection_name: str
) -> list[KnowledgeBase]:
    rows = await session.execute(
        select(KnowledgeBase)
        .where(KnowledgeBase.collection_name == collection_name, reachable(reach))
        .order_by(KnowledgeBase.created_at, KnowledgeBase.id)
    )
    return list(rows.scalars())


async def all_reachable(session: AsyncSession, reach: Reach) -> list[KnowledgeBase]:
    rows = await session.execute(
        select(KnowledgeBase)
        .where(reachable(reach))
        .order_by(KnowledgeBase.created_at, KnowledgeBase.id)
    )
    return list(rows.scalars())


async def unowned_content(
    session: AsyncSession, collection_name: str, organization_id: str | None
) -> bool:
    """Does the name, which no knowledge base holds, hold content of anyone but
    ``organization_id`` (the claimer's organization, whose own unfiled content its new base
    takes)? A row that describes chunks (a vector id) or is still being written (an
    interrupted ``rag-ingest`` leaves one ``processing``), or a chunk of the table; a failed
    row without a vector id describes nothing and holds nothing."""
    others = (
        or_(RagDocument.organization_id.is_(None), RagDocument.organization_id != organization_id)
        if organization_id is not None
        else true()
    )
    rows = await session.execute(
        select(func.count())
        .select_from(RagDocument)
        .where(
            RagDocument.collection_name == collection_name,
            or_(
                RagDocument.vector_document_id.is_not(None),
                RagDocument.status == DocumentStatus.PROCESSING,
            ),
            others,
        )
    )
    if rows.scalar():
        return True
    exists = await session.execute(
        text("SELECT to_regclass(:t) IS NOT NULL"), {"t": f"public.rag_{collection_name}"}
    )
    if not exists.scalar():
        return False
    if organization_id is None:
        chunks = await session.execute(text(f"SELECT EXISTS (SELECT 1 FROM rag_{collection_name})"))
    else:
        chunks = await session.execute(
            text(
                f"SELECT EXISTS (SELECT 1 FROM rag_{collection_name} "
                "WHERE organization_id IS DISTINCT FROM :org)"
            ),
            {"org": organization_id},
        )
    return bool(chunks.scalar())


async def delete_kbs(session: AsyncSession, ids: Sequence[uuid.UUID]) -> None:
    if ids:
        await session.execute(delete(KnowledgeBase).where(KnowledgeBase.id.in_(list(ids))))


async def delete_grant(session: AsyncSession, kb_id: uuid.UUID, user_id: str) -> None:
    await session.execute(
        delete(CollectionGrant).where(
            CollectionGrant.knowledge_base_id == kb_id, CollectionGrant.user_id == user_id
        )
    )


async def kbs_owned(
    session: AsyncSession, *, organization_id: str | None, user_id: str | None
) -> list[KnowledgeBase]:
    if organization_id is not None:
        clause = KnowledgeBase.organization_id == organization_id
    elif user_id is not None:
        clause = and_(KnowledgeBase.owner_id == user_id, KnowledgeBase.scope == "personal")
    else:
        return []
    return list((await session.execute(select(KnowledgeBase).where(clause))).scalars())


async def grant_of(session: AsyncSession, kb_id: uuid.UUID, user_id: str) -> CollectionGrant | None:
    rows = await session.execute(
        select(CollectionGrant).where(
            CollectionGrant.knowledge_base_id == kb_id, CollectionGrant.user_id == user_id
        )
    )
    return rows.scalar_one_or_none()


async def holds_unfiled_beyond(
    session: AsyncSession,
    collection: str,
    *,
    operator: bool,
    organization_ids: Sequence[str],
) -> bool:
    """Does the table hold a chunk no knowledge base owns other than the operator's
    (``OPERATOR_CHUNKS``, when ``operator``) and the unfiled chunks of ``organization_ids``?

    What keeps the last bases' table when they are deleted: content they do not take
    (an operator ingest under an organization's base, another tenant's unfiled chunks,
    a legacy chunk of unknown origin).
    """
    if not await table_exists(session, collection):
        return False
    table = vector_table_name(collection)
    taken = " OR ".join(["organization_id = ANY(:orgs)", *([OPERATOR_CHUNKS] if operator else [])])
    row = await session.execute(
        text(
            f"SELECT EXISTS (SELECT 1 FROM {table} "
            f"WHERE knowledge_base_id IS NULL AND NOT COALESCE({taken}, false))"
        ),
        {"orgs": list(organization_ids)},
    )
    return bool(row.scalar())
