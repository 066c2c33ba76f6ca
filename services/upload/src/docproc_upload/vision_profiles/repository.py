"""The SQL of the vision profile routes: an organization's profiles, and which collections
select one."""

from __future__ import annotations

import uuid
from typing import Any, Literal

from docproc_common.auth import Principal
from docproc_common.db.models import KnowledgeBase, VisionModelProfile
from sqlalchemy import and_, select
from sqlalchemy.ext.asyncio import AsyncSession


def _of(organization_id: str | None, user_id: str) -> Any:
    """An organization's profiles; without one, the caller's own (a personal profile is
    nobody else's)."""
    if organization_id is None:
        return and_(
            VisionModelProfile.organization_id.is_(None),
            VisionModelProfile.created_by == user_id,
        )
    return VisionModelProfile.organization_id == organization_id


async def visible_profiles(session: AsyncSession, principal: Principal) -> list[VisionModelProfile]:
    rows = await session.execute(
        select(VisionModelProfile)
        .where(_of(principal.organization_id, principal.user_id))
        .order_by(VisionModelProfile.name, VisionModelProfile.id)
    )
    return list(rows.scalars())


async def profile_of(
    session: AsyncSession,
    profile_id: uuid.UUID,
    *,
    organization_id: str | None,
    user_id: str,
    lock: Literal["share", "update"] | None = None,
) -> VisionModelProfile | None:
    """The profile if it belongs to ``organization_id`` (without one: made by ``user_id``).

    ``lock``: a selection holds it shared and a deletion exclusively, so a base cannot
    select a profile between a deletion's check of its users and the delete."""
    query = select(VisionModelProfile).where(
        VisionModelProfile.id == profile_id, _of(organization_id, user_id)
    )
    if lock is not None:
        query = query.with_for_update(read=lock == "share")
    return (await session.execute(query)).scalar_one_or_none()


async def named(
    session: AsyncSession, organization_id: str | None, user_id: str, name: str
) -> VisionModelProfile | None:
    rows = await session.execute(
        select(VisionModelProfile).where(
            _of(organization_id, user_id), VisionModelProfile.name == name
        )
    )
    return rows.scalars().first()


async def selecting(session: AsyncSession, profile_id: uuid.UUID) -> list[KnowledgeBase]:
    """The knowledge bases whose ingestion configuration selects the profile."""
    rows = await session.execute(
        select(KnowledgeBase)
        .where(KnowledgeBase.ingestion_config["vision_profile_id"].astext == str(profile_id))
        .order_by(KnowledgeBase.name, KnowledgeBase.id)
    )
    return list(rows.scalars())
