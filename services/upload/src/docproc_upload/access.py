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
endpoints) are checked where they are used, never by widening this table. A denial is
raised as ``CollectionNotFound``, indistinguishable from absence, so the API is not an
oracle for names.

Which rows of the table apply to a caller is decided here (``reach``); the statements that
select the bases they reach are ``knowledge_bases.repository``'s (``reachable``).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from docproc_common.auth import EDIT, VIEW, Principal
from docproc_common.db.models import KnowledgeBase
from docproc_common.errors import CollectionNotFound
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.knowledge_bases import repository


class Access(StrEnum):
    VIEW = "view"
    EDIT = "edit"


@dataclass(frozen=True, slots=True)
class Reach:
    """The rows of the table above that let ``user_id`` reach a base with one access: its
    own personal bases always, and a base any other field names."""

    user_id: str
    #: The org-scoped bases of this organization; None when the caller has no organization
    #: or its role lacks the access's permission.
    organization_id: str | None
    #: Every app-scoped base.
    app: bool
    #: The permissions a grant on one base must hold to count.
    grants: tuple[str, ...]


def reach(principal: Principal, access: Access) -> Reach:
    permission = EDIT if access is Access.EDIT else VIEW
    return Reach(
        user_id=principal.user_id,
        organization_id=(
            principal.organization_id
            if principal.organization_id and principal.has(permission)
            else None
        ),
        app=access is Access.VIEW or principal.app_admin,
        grants=(
            (Access.EDIT.value,)
            if access is Access.EDIT
            else (Access.VIEW.value, Access.EDIT.value)
        ),
    )


async def resolve_kb(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID, access: Access
) -> KnowledgeBase:
    kb = await repository.reachable_kb(session, reach(principal, access), kb_id)
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
        for kb in await repository.reachable_kbs(session, reach(principal, access), wanted)
    }
    if len(found) != len(wanted):
        raise CollectionNotFound()
    return [found[kb_id] for kb_id in wanted]


async def resolve_collection(
    session: AsyncSession, principal: Principal, collection_name: str, access: Access
) -> list[KnowledgeBase]:
    """The knowledge bases named ``collection_name`` that the caller reaches; none -> 404."""
    kbs = await repository.reachable_named(session, reach(principal, access), collection_name)
    if not kbs:
        raise CollectionNotFound()
    return kbs


async def list_reachable(session: AsyncSession, principal: Principal) -> list[KnowledgeBase]:
    return await repository.all_reachable(session, reach(principal, Access.VIEW))
