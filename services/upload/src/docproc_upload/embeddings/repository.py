"""The SQL of the embedding routes: registered endpoints and who names them."""

from __future__ import annotations

import uuid
from typing import Any

from docproc_common.auth import Principal
from docproc_common.db.models import EmbeddingEndpoint, KnowledgeBase
from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession


def visible(principal: Principal) -> Any:
    """The endpoints the caller sees: deployment-wide ones and their organization's."""
    if principal.organization_id is None:
        return EmbeddingEndpoint.organization_id.is_(None)
    return or_(
        EmbeddingEndpoint.organization_id.is_(None),
        EmbeddingEndpoint.organization_id == principal.organization_id,
    )


async def endpoint(session: AsyncSession, endpoint_id: uuid.UUID) -> EmbeddingEndpoint | None:
    return await session.get(EmbeddingEndpoint, endpoint_id)


async def visible_endpoints(session: AsyncSession, principal: Principal) -> list[EmbeddingEndpoint]:
    rows = await session.execute(
        select(EmbeddingEndpoint)
        .where(visible(principal))
        .order_by(EmbeddingEndpoint.created_at, EmbeddingEndpoint.id)
    )
    return list(rows.scalars())


async def lock_visible_endpoint(
    session: AsyncSession, principal: Principal, endpoint_id: uuid.UUID
) -> EmbeddingEndpoint | None:
    rows = await session.execute(
        select(EmbeddingEndpoint)
        .where(EmbeddingEndpoint.id == endpoint_id, visible(principal))
        .with_for_update()
    )
    return rows.scalar_one_or_none()


async def collections_through(session: AsyncSession, endpoint_id: uuid.UUID) -> int:
    """How many knowledge bases embed through the endpoint."""
    rows = await session.execute(
        select(func.count())
        .select_from(KnowledgeBase)
        .where(KnowledgeBase.embedding_endpoint_id == endpoint_id)
    )
    return int(rows.scalar_one())
