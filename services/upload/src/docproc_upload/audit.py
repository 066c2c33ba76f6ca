"""Audit entries: who decided what. Never a configuration document or a secret value."""

from __future__ import annotations

from typing import Any

from docproc_common.auth import Principal
from docproc_common.db.models import AuditLog
from sqlalchemy.ext.asyncio import AsyncSession


async def record(
    session: AsyncSession,
    principal: Principal,
    action: str,
    *,
    target: str,
    organization_id: str | None,
    details: dict[str, Any] | None = None,
) -> None:
    session.add(
        AuditLog(
            actor=principal.user_id,
            action=action,
            organization_id=organization_id,
            target=target,
            details=details or {},
        )
    )
