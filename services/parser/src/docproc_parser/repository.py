"""The parser's SQL: the vision model profile a document's configuration selects."""

from __future__ import annotations

import uuid

from docproc_common.db.models import VisionModelProfile
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession


async def vision_profile(
    session: AsyncSession, profile_id: uuid.UUID, organization_id: str | None
) -> VisionModelProfile | None:
    """The profile, if it is (still) one of the document's organization."""
    org = (
        VisionModelProfile.organization_id.is_(None)
        if organization_id is None
        else VisionModelProfile.organization_id == organization_id
    )
    rows = await session.execute(
        select(VisionModelProfile).where(VisionModelProfile.id == profile_id, org)
    )
    return rows.scalar_one_or_none()
