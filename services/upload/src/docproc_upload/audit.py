"""Audit entries: who decided what. Never a configuration document or a secret value."""

from __future__ import annotations

import uuid
from typing import Any, Protocol

from docproc_common.auth import Principal
from docproc_common.db.models import AuditLog
from sqlalchemy.ext.asyncio import AsyncSession


class Audited(Protocol):
    """A row an entry is about: the entry's target is its id, its organization the entry's."""

    @property
    def id(self) -> uuid.UUID: ...

    @property
    def organization_id(self) -> str | None: ...


async def record(
    session: AsyncSession,
    principal: Principal,
    action: str,
    row: Audited,
    details: dict[str, Any] | None = None,
) -> None:
    session.add(
        AuditLog(
            actor=principal.user_id,
            action=action,
            organization_id=row.organization_id,
            target=str(row.id),
            details=details or {},
        )
    )
