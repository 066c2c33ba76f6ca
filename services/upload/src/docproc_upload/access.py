"""Who may reach a collection: the one resolver every ``/rag`` and ``/kb`` route asks.

The ``knowledge_bases`` row is the authority. Three scopes and no fourth:

============  =========================================  ==========================================
scope         may read                                   may write
============  =========================================  ==========================================
personal      its owner                                  its owner
org           ``collections:view`` reaching the row      ``collections:edit`` reaching the row
app           anyone in the deployment                   the deployment's app admin
============  =========================================  ==========================================

An explicit grant on one collection widens what the role allows and never
narrows it. The app admin is no one's superuser here: it reads and writes what its own
permissions reach, plus the app-scoped bases it alone may write. Its other powers
(adopting a name held by unfiled content, ``POST /rag/sync/local``, deployment-wide
endpoints) are checked where they are used, never by widening this predicate. A denial is raised as ``CollectionNotFound``, indistinguishable from
absence, so the API is not an oracle for names.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from enum import StrEnum

from docproc_common.auth import EDIT, VIEW, Principal
from docproc_common.db.models import CollectionGrant, KnowledgeBase, Scope
from docproc_common.errors import CollectionNotFound
from sqlalchemy import ColumnElement, and_, false, or_, select
from sqlalchemy.ext.asyncio import AsyncSession


class Access(StrEnum):
    VIEW = "view"
    EDIT = "edit"


def _grant_clause(principal: Principal, access: Access) -> ColumnElement[bool]:
    wanted = (
        [Access.EDIT.value] if access is Access.EDIT else [Access.VIEW.value, Access.EDIT.value]
    )
    return KnowledgeBase.id.in_(
        select(CollectionGrant.knowledge_base_id).where(
            CollectionGrant.user_id == principal.user_id, CollectionGrant.permission.in_(wanted)
        )
    )


def reachable(principal: Principal, access: Access) -> ColumnElement[bool]:
    """A SQL predicate on ``KnowledgeBase`` selecting exactly the rows ``principal`` reaches."""
    permission = EDIT if access is Access.EDIT else VIEW
    own = and_(KnowledgeBase.scope == Scope.PERSONAL, KnowledgeBase.owner_id == principal.user_id)
    org = (
        and_(
            KnowledgeBase.scope == Scope.ORG,
            KnowledgeBase.organization_id == principal.organization_id,
        )
        if principal.organization_id and principal.has(permission)
        else false()
    )
    app = (
        KnowledgeBase.scope == Scope.APP
        if access is Access.VIEW or principal.app_admin
        else false()
    )
    return or_(own, org, app, _grant_clause(principal, access))


async def resolve_kb(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID, access: Access
) -> KnowledgeBase:
    kb = (
        await session.execute(
            select(KnowledgeBase).where(KnowledgeBase.id == kb_id, reachable(principal, access))
        )
    ).scalar_one_or_none()
    if kb is None:
        raise CollectionNotFound()
    return kb


async def resolve_kbs(
    session: AsyncSession, principal: Principal, kb_ids: Sequence[uuid.UUID], access: Access
) -> list[KnowledgeBase]:
    """The knowledge bases ``kb_ids`` (each once, in their order), in one statement; one the
    caller does not reach -> 404 for all of them, as ``resolve_kb``."""
    wanted = list(dict.fromkeys(kb_ids))
    found = {
        kb.id: kb
        for kb in (
            await session.execute(
                select(KnowledgeBase).where(
                    KnowledgeBase.id.in_(wanted), reachable(principal, access)
                )
            )
        ).scalars()
    }
    if len(found) != len(wanted):
        raise CollectionNotFound()
    return [found[kb_id] for kb_id in wanted]


async def resolve_collection(
    session: AsyncSession, principal: Principal, collection_name: str, access: Access
) -> list[KnowledgeBase]:
    """The knowledge bases named ``collection_name`` that the caller reaches; none -> 404."""
    kbs = list(
        (
            await session.execute(
                select(KnowledgeBase)
                .where(
                    KnowledgeBase.collection_name == collection_name, reachable(principal, access)
                )
                .order_by(KnowledgeBase.created_at, KnowledgeBase.id)
            )
        ).scalars()
    )
    if not kbs:
        raise CollectionNotFound()
    return kbs


async def list_reachable(session: AsyncSession, principal: Principal) -> list[KnowledgeBase]:
    rows = await session.execute(
        select(KnowledgeBase)
        .where(reachable(principal, Access.VIEW))
        .order_by(KnowledgeBase.created_at, KnowledgeBase.id)
    )
    return list(rows.scalars())
