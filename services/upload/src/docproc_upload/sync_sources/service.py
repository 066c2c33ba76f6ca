"""The sync routes' logic: sources per knowledge base, moves, clones, runs, logs, the audience sentence.

A source ingests into exactly one collection, and access is decided on the
collection: everything the source's credential can read becomes readable by
everyone who can read that collection. So the routes that decide a source's
collection (create, clone, move) answer with the sentence that pairs the
credential with that audience, and every such decision is audited (actor,
connector, collection, secret *id*; never the configuration document).
"""

from __future__ import annotations

import uuid
from typing import Any

from docproc_common.auth import SECRETS_VIEW, Principal
from docproc_common.connectors import CONNECTORS
from docproc_common.connectors.base import ConnectorOptions, ConnectorSpec
from docproc_common.connectors.config import check_config, connector_class, describe
from docproc_common.connectors.runs import queue_run
from docproc_common.db.models import KnowledgeBase, Scope, Secret, SyncLog, SyncSource
from docproc_common.db.vector_tables import validate_collection_name
from docproc_common.errors import Conflict, FieldError, Forbidden, InvalidInput, NotFound
from docproc_common.names import is_reserved
from docproc_common.settings import SyncSettings
from sqlalchemy import func
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.access import Access, resolve_collection, resolve_kb
from docproc_upload.audit import record
from docproc_upload.credentials.repository import visible_secret
from docproc_upload.credentials.service import may_repoint
from docproc_upload.sync_sources import repository
from docproc_upload.sync_sources.schemas import (
    CloneRequest,
    ConnectorOut,
    LocalSyncRequest,
    RunOut,
    SourceCreate,
    SourceOut,
    SourcePatch,
    SyncLogOut,
    SyncLogPage,
)

SOURCE_NOT_FOUND = "Sync source not found"


def connectors(principal: Principal) -> list[ConnectorOut]:
    return [
        ConnectorOut(**describe(name))
        for name, cls in CONNECTORS.items()
        if principal.app_admin or not cls.ADMIN_ONLY
    ]


# -- the audience sentence ---------------------------------------------------------------------


def audience_sentence(
    secret_kind: str,
    secret_name: str,
    kb: KnowledgeBase | None,
    grants: int = 0,
    reach: str | None = None,
) -> str:
    """ "<credential> can read whatever it has been granted, and everything it ingests becomes
    searchable in <collection> by …", finished by the collection's scope. ``reach``: what that
    grant reaches for the source's connector (``REACH``), said after "granted"."""
    credential = f'The {secret_kind} secret "{secret_name}"'
    granted = f"whatever it has been granted ({reach})" if reach else "whatever it has been granted"
    if kb is None:
        return (
            f"{credential} can read {granted}; the source is filed under "
            "no knowledge base, so nothing can search what it ingests yet."
        )
    shared = (
        f", and the {grants} {'person' if grants == 1 else 'people'} given an explicit grant on it"
        if grants
        else ""
    )
    if kb.scope == Scope.PERSONAL:
        who = f"its owner, {kb.owner_id}{shared or ', only'}"
    elif kb.scope == Scope.ORG:
        who = (
            f"everyone in the organization {kb.organization_id} who can view the collection{shared}"
        )
    else:
        who = "anyone in this deployment"
    return (
        f"{credential} can read {granted}, and everything it ingests "
        f"becomes searchable in {kb.collection_name} ({kb.name}) by {who}."
    )


async def audience(
    session: AsyncSession, principal: Principal, src: SyncSource, kb: KnowledgeBase | None
) -> str | None:
    """Omitted for a source without a credential and for a caller without ``secrets:view``."""
    if src.secret_id is None or not principal.has(SECRETS_VIEW):
        return None
    secret = await session.get(Secret, src.secret_id)
    if secret is None:
        return None
    grants = await repository.grant_count(session, kb.id) if kb is not None else 0
    cls = CONNECTORS.get(src.connector)
    return audience_sentence(
        secret.kind, secret.name, kb, grants, reach=cls.REACH if cls is not None else None
    )


async def source_out(
    session: AsyncSession,
    principal: Principal,
    src: SyncSource,
    *,
    with_audience: bool = False,
) -> SourceOut:
    out = SourceOut.model_validate(src, from_attributes=True)
    if with_audience:
        kb = (
            await session.get(KnowledgeBase, src.knowledge_base_id)
            if src.knowledge_base_id
            else None
        )
        out.audience = await audience(session, principal, src, kb)
    return out


# -- checks --------------------------------------------------------------------------------------


def _connector(principal: Principal, name: str) -> type[ConnectorSpec]:
    cls = connector_class(name)
    if cls.ADMIN_ONLY and not principal.app_admin:
        raise Forbidden(
            f"Only an app admin may use the {name} connector: it reads the server, "
            "which no tenant owns"
        )
    return cls


def _config(name: str, raw: dict[str, Any], sync: SyncSettings) -> dict[str, Any]:
    config = check_config(name, raw, ConnectorOptions.of(sync))
    return config.model_dump(mode="json", exclude_unset=True)


async def _secret(
    session: AsyncSession,
    principal: Principal,
    cls: type[ConnectorSpec],
    secret_id: uuid.UUID | None,
    organization_id: str | None,
) -> uuid.UUID | None:
    """The credential is a vault secret the caller can see, of the connector's kind, in the
    knowledge base's organization (the worker opens it for that organization only)."""
    if secret_id is None:
        if cls.SECRET_KIND and cls.SECRET_REQUIRED:
            raise InvalidInput(
                f"The {cls.NAME} connector authenticates with a {cls.SECRET_KIND} secret from "
                "the vault",
                fields=[FieldError("secret_id", f"name a {cls.SECRET_KIND} secret")],
            )
        return None
    if cls.SECRET_KIND is None:
        raise InvalidInput(
            f"The {cls.NAME} connector authenticates with nothing",
            fields=[FieldError("secret_id", "this connector takes no secret")],
        )
    secret = await visible_secret(session, principal, secret_id)
    if secret is None:
        raise InvalidInput("Secret not found", fields=[FieldError("secret_id", "no such secret")])
    if secret.kind != cls.SECRET_KIND:
        raise InvalidInput(
            f"The {cls.NAME} connector needs a {cls.SECRET_KIND} secret, not a {secret.kind}",
            fields=[FieldError("secret_id", f"must be a {cls.SECRET_KIND}")],
        )
    if secret.organization_id != organization_id:
        raise InvalidInput(
            "The secret belongs to another organization than the knowledge base",
            fields=[FieldError("secret_id", "not of the knowledge base's organization")],
        )
    return secret.id


def destination_changes(
    cls: type[ConnectorSpec], before: dict[str, Any], after: dict[str, Any]
) -> list[str]:
    """The connector's ``DESTINATION_FIELDS`` whose value differs between two stored
    configurations (an unset field counts as its default), sorted."""
    fields = cls.CONFIG_MODEL.model_fields

    def value(config: dict[str, Any], name: str) -> Any:
        if name in config:
            return config[name]
        return fields[name].get_default(call_default_factory=True)

    return sorted(f for f in cls.DESTINATION_FIELDS if value(before, f) != value(after, f))


async def _may_repoint(
    session: AsyncSession,
    principal: Principal,
    cls: type[ConnectorSpec],
    secret_id: uuid.UUID,
    organization_id: str | None,
    fields: list[str],
) -> None:
    """Changing where a bound secret is sent lends it again (``credentials.may_repoint``)."""
    assert cls.SECRET_KIND is not None  # ``_secret`` binds none to a connector without one
    await may_repoint(
        session,
        principal,
        secret_id,
        kind=cls.SECRET_KIND,
        organization_id=organization_id,
        holder="this source",
        fields=[f"config.{f}" for f in fields],
    )


def _schedule(value: int | None, sync: SyncSettings) -> int | None:
    minimum = sync.min_schedule_seconds
    if value is not None and value < minimum:
        raise InvalidInput(
            f"A source runs at most every {minimum} seconds",
            fields=[FieldError("schedule_seconds", f"at least {minimum}")],
        )
    return value


def _unit(value: str | None) -> str | None:
    return (value or "").strip() or None


async def _takes_sources(session: AsyncSession, kb: KnowledgeBase, field: str) -> None:
    """A name's sources go to one base of each organization: its oldest on that name.

    The seed's sync resolution ("the oldest base of the organization with that name"):
    adding a source to another base on the name is a 400, so two bases sharing a name
    never both pull from sources. The refusal names no base: the older one may be a
    member's personal base the caller cannot see.
    """
    first = await repository.first_kb_on_name(session, kb.collection_name, kb.organization_id)
    if first is not None and first.id != kb.id:
        raise InvalidInput(
            f"An older knowledge base of this organization on the name '{kb.collection_name}' "
            "takes its sync sources; create this knowledge base with a name of its own to "
            "sync into it",
            fields=[FieldError(field, "another knowledge base on this name takes its sources")],
        )


async def _not_reserved(session: AsyncSession, kb: KnowledgeBase) -> None:
    if await is_reserved(session, kb.collection_name):
        raise Conflict("The collection is being deleted")


async def _target_kb(
    session: AsyncSession,
    principal: Principal,
    kb_id: uuid.UUID | None,
    collection_name: str | None,
) -> KnowledgeBase | None:
    """The knowledge base a move or a clone names (``collections:edit`` on it), or None."""
    if kb_id is not None:
        return await resolve_kb(session, principal, kb_id, Access.EDIT)
    if collection_name is None:
        return None
    name = validate_collection_name(collection_name)
    kbs = await resolve_collection(session, principal, name, Access.EDIT)
    if len(kbs) > 1:
        raise InvalidInput(
            f"Several knowledge bases you edit are named {name}; give knowledge_base_id",
            fields=[FieldError("collection_name", "ambiguous; give knowledge_base_id")],
        )
    return kbs[0]


def _target_field(kb_id: uuid.UUID | None, collection_name: str | None) -> str:
    """The input that named a move's, a clone's or a local sync's base."""
    return (
        "collection_name" if kb_id is None and collection_name is not None else "knowledge_base_id"
    )


def _audit_details(src: SyncSource, **extra: Any) -> dict[str, Any]:
    return {
        "connector": src.connector,
        "collection_name": src.collection_name,
        "knowledge_base_id": str(src.knowledge_base_id) if src.knowledge_base_id else None,
        "secret_id": str(src.secret_id) if src.secret_id else None,
        **extra,
    }


# -- sources ---------------------------------------------------------------------------------------


async def _add_source(
    session: AsyncSession, principal: Principal, src: SyncSource, **extra: Any
) -> None:
    """Insert ``src`` and its ``sync_source.created`` audit entry (``extra`` in its details)."""
    session.add(src)
    await session.flush()
    await record(session, principal, "sync_source.created", src, _audit_details(src, **extra))


async def create_source(
    session: AsyncSession,
    principal: Principal,
    kb_id: uuid.UUID,
    body: SourceCreate,
    *,
    sync: SyncSettings,
) -> SourceOut:
    kb = await resolve_kb(session, principal, kb_id, Access.EDIT)
    cls = _connector(principal, body.connector)
    config = _config(cls.NAME, body.config, sync)
    secret_id = await _secret(session, principal, cls, body.secret_id, kb.organization_id)
    await _takes_sources(session, kb, "knowledge_base_id")
    await _not_reserved(session, kb)
    src = SyncSource(
        name=body.name,
        organization_id=kb.organization_id,
        collection_name=kb.collection_name,
        knowledge_base_id=kb.id,
        connector=cls.NAME,
        config=config,
        secret_id=secret_id,
        sync_mode=body.sync_mode,
        schedule_seconds=_schedule(body.schedule_seconds, sync),
        organizational_unit=_unit(body.organizational_unit),
        active=True,
        created_by=principal.user_id,
    )
    await _add_source(session, principal, src)
    await session.refresh(src)
    return await source_out(session, principal, src, with_audience=True)


async def source_in_kb(
    session: AsyncSession,
    principal: Principal,
    kb_id: uuid.UUID,
    source_id: uuid.UUID,
    access: Access,
) -> SyncSource:
    """The source resolved against this knowledge base: one of another base is 404."""
    await resolve_kb(session, principal, kb_id, access)
    src = await repository.source_in_kb(session, kb_id, source_id, lock=access is Access.EDIT)
    if src is None:
        raise NotFound(SOURCE_NOT_FOUND)
    return src


async def reachable_source(
    session: AsyncSession, principal: Principal, source_id: uuid.UUID, access: Access
) -> SyncSource:
    src = await repository.reachable_source(
        session, principal, source_id, access, lock=access is Access.EDIT
    )
    if src is None:
        raise NotFound(SOURCE_NOT_FOUND)
    return src


async def list_kb_sources(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID
) -> list[SourceOut]:
    await resolve_kb(session, principal, kb_id, Access.VIEW)
    return [
        await source_out(session, principal, s)
        for s in await repository.sources_of_kb(session, kb_id)
    ]


async def list_sources(
    session: AsyncSession, principal: Principal, *, limit: int, offset: int
) -> list[SourceOut]:
    """``GET /rag/sync/sources``: every source the caller reaches, unassigned ones included."""
    _, sources = await repository.list_sources(session, principal, limit=limit, offset=offset)
    return [await source_out(session, principal, s) for s in sources]


async def update_source(
    session: AsyncSession,
    principal: Principal,
    src: SyncSource,
    body: SourcePatch,
    *,
    route_kb: uuid.UUID | None,
    sync: SyncSettings,
) -> SourceOut:
    """Apply what was sent. ``route_kb`` set: a knowledge base's own route, which never moves."""
    sent = body.model_fields_set
    cls = _connector(principal, src.connector)
    target: KnowledgeBase | None = None
    if route_kb is not None:
        current = await session.get(KnowledgeBase, route_kb)
        assert current is not None
        if "knowledge_base_id" in sent and body.knowledge_base_id != route_kb:
            raise InvalidInput(
                "A knowledge base's own route does not move a source to another one; "
                "use PATCH /api/v1/rag/sync/sources/{id}",
                fields=[FieldError("knowledge_base_id", "names another knowledge base")],
            )
        if "collection_name" in sent and body.collection_name != current.collection_name:
            raise InvalidInput(
                "A knowledge base's own route does not move a source to another one; "
                "use PATCH /api/v1/rag/sync/sources/{id}",
                fields=[FieldError("collection_name", "names another knowledge base")],
            )
    elif {"knowledge_base_id", "collection_name"} & sent:
        target = await _target_kb(session, principal, body.knowledge_base_id, body.collection_name)
        if target is not None and target.id == src.knowledge_base_id:
            target = None
        if target is not None:
            await _takes_sources(
                session, target, _target_field(body.knowledge_base_id, body.collection_name)
            )
    kb_org = target.organization_id if target is not None else src.organization_id
    config = src.config
    if "config" in sent:
        if body.config is None:
            raise InvalidInput(
                "The configuration cannot be removed", fields=[FieldError("config", "required")]
            )
        config = _config(cls.NAME, body.config, sync)
    repointed = destination_changes(cls, src.config, config)
    if "secret_id" in sent:
        secret_id = await _secret(session, principal, cls, body.secret_id, kb_org)
    else:
        secret_id = src.secret_id
        if secret_id is not None and repointed:
            await _may_repoint(session, principal, cls, secret_id, kb_org, repointed)
        elif secret_id is not None and target is not None:
            # a move points the credential at a new audience: the mover must be able to use it
            await _secret(session, principal, cls, secret_id, kb_org)
    src.config = config
    src.secret_id = secret_id
    if repointed:
        src.destination_changed_by = principal.user_id
        src.destination_changed_at = func.now()
    if "name" in sent:
        src.name = body.name
    if "sync_mode" in sent and body.sync_mode is not None:
        src.sync_mode = body.sync_mode
    if "schedule_seconds" in sent:
        src.schedule_seconds = _schedule(body.schedule_seconds, sync)
    if "organizational_unit" in sent:
        src.organizational_unit = _unit(body.organizational_unit)
    extra: dict[str, Any] = (
        {"destination_changed": [f"config.{f}" for f in repointed]} if repointed else {}
    )
    if target is not None:
        await _not_reserved(session, target)
        extra |= {
            "previous_collection_name": src.collection_name,
            "previous_knowledge_base_id": (
                str(src.knowledge_base_id) if src.knowledge_base_id else None
            ),
        }
        src.knowledge_base_id = target.id
        src.collection_name = target.collection_name
        src.organization_id = target.organization_id
        src.active = True
    if "active" in sent and body.active is not None:
        if body.active and src.knowledge_base_id is None:
            raise InvalidInput(
                "A source filed under no knowledge base cannot be activated; move it first",
                fields=[FieldError("active", "assign a knowledge base first")],
            )
        src.active = body.active
    await session.flush()
    await record(
        session,
        principal,
        "sync_source.updated",
        src,
        _audit_details(src, changed=sorted(sent), **extra),
    )
    await session.refresh(src)
    return await source_out(session, principal, src, with_audience=True)


async def delete_source(session: AsyncSession, principal: Principal, src: SyncSource) -> None:
    """The source and its claims go; the documents it ingested stay in the collection."""
    if src.connector == "local":
        _connector(principal, src.connector)
    for log in await repository.open_logs(session, src.id):
        log.status = "cancelling" if log.status == "running" else "cancelled"
    await record(session, principal, "sync_source.deleted", src, _audit_details(src))
    await session.delete(src)


async def clone_source(
    session: AsyncSession, principal: Principal, src: SyncSource, body: CloneRequest
) -> SourceOut:
    """A copy pointed at a collection (the same by default): copies the secret *reference*.

    Recorded as a creation naming the row it came from: it points an already scoped
    credential at another audience, so the caller must be able to use that credential.
    """
    cls = _connector(principal, src.connector)
    target = await _target_kb(session, principal, body.knowledge_base_id, body.collection_name)
    if target is None:
        if src.knowledge_base_id is None:
            raise InvalidInput(
                "The source is filed under no knowledge base; name one for the clone",
                fields=[FieldError("knowledge_base_id", "required")],
            )
        target = await resolve_kb(session, principal, src.knowledge_base_id, Access.EDIT)
    await _takes_sources(
        session, target, _target_field(body.knowledge_base_id, body.collection_name)
    )
    await _not_reserved(session, target)
    secret_id = (
        await _secret(session, principal, cls, src.secret_id, target.organization_id)
        if src.secret_id is not None
        else await _secret(session, principal, cls, None, target.organization_id)
    )
    clone = SyncSource(
        name=body.name if body.name is not None else src.name,
        organization_id=target.organization_id,
        collection_name=target.collection_name,
        knowledge_base_id=target.id,
        connector=src.connector,
        config=dict(src.config),
        secret_id=secret_id,
        sync_mode=src.sync_mode,
        schedule_seconds=src.schedule_seconds,
        organizational_unit=src.organizational_unit,
        active=True,
        created_by=principal.user_id,
    )
    await _add_source(session, principal, clone, cloned_from=str(src.id))
    await session.refresh(clone)
    return await source_out(session, principal, clone, with_audience=True)


# -- runs ------------------------------------------------------------------------------------------


async def run(session: AsyncSession, principal: Principal, src: SyncSource) -> RunOut:
    """Queue a run. One already queued is answered again; one running is a 409."""
    if src.connector == "local":
        _connector(principal, src.connector)
    if not src.active or src.knowledge_base_id is None:
        raise Conflict(
            "The source is not active under a knowledge base; assign or activate it first"
        )
    kb = await session.get(KnowledgeBase, src.knowledge_base_id)
    if kb is None:
        raise Conflict("The source's knowledge base no longer exists")
    await _not_reserved(session, kb)
    for log in await repository.open_logs(session, src.id):
        if log.status == "queued":
            return RunOut(sync_log_id=log.id, source_id=src.id, status="queued")
        if not await repository.source_idle(session, src.id):
            raise Conflict(
                "A run of this source is in progress", details={"sync_log_id": str(log.id)}
            )
        log.status = "error"
        log.finished_at = func.now()
        log.error_message = "The run was interrupted; the next run picks up where it stopped"
    log = await queue_run(session, src)
    return RunOut(sync_log_id=log.id, source_id=src.id, status="queued")


async def cancel(session: AsyncSession, src: SyncSource) -> RunOut:
    """A queued run is cancelled; a running one stops after the files in flight, deleting nothing."""
    logs = await repository.open_logs(session, src.id)
    if not logs:
        raise Conflict("No run of this source is queued or running")
    for log in logs:
        if log.status == "queued":
            log.status = "cancelled"
            log.finished_at = func.now()
            log.error_message = "Cancelled before it started"
        else:
            log.status = "cancelling"
    await session.flush()
    return RunOut(sync_log_id=logs[0].id, source_id=src.id, status=logs[0].status)


def _page(total: int, limit: int, offset: int, logs: Any) -> SyncLogPage:
    return SyncLogPage(
        total=total,
        limit=limit,
        offset=offset,
        items=[SyncLogOut.model_validate(log, from_attributes=True) for log in logs],
    )


async def source_logs(
    session: AsyncSession,
    principal: Principal,
    kb_id: uuid.UUID,
    source_id: uuid.UUID,
    limit: int,
    offset: int,
) -> SyncLogPage:
    """``GET /kb/{kb_id}/sync-sources/{id}/logs``: the source is resolved against this base
    first (another base's source is 404), then its runs are read by source id."""
    src = await source_in_kb(session, principal, kb_id, source_id, Access.VIEW)
    total, logs = await repository.logs_page(
        session, source_ids=SyncLog.source_id == src.id, limit=limit, offset=offset
    )
    return _page(total, limit, offset, logs)


async def all_logs(
    session: AsyncSession,
    principal: Principal,
    *,
    source_id: uuid.UUID | None,
    collection_name: str | None,
    limit: int,
    offset: int,
) -> SyncLogPage:
    """``GET /rag/sync/logs``: runs of the sources the caller reaches (optionally one, or one
    collection's)."""
    where = repository.logs_of_reachable_sources(
        principal, Access.VIEW, source_id=source_id, collection_name=collection_name
    )
    total, logs = await repository.logs_page(session, source_ids=where, limit=limit, offset=offset)
    return _page(total, limit, offset, logs)


async def local_sync(
    session: AsyncSession, principal: Principal, body: LocalSyncRequest, *, sync: SyncSettings
) -> RunOut:
    """``POST /rag/sync/local``: app admins only, since the path names a directory of the
    *server*. The directory becomes (or reuses) a ``local`` source of the knowledge base, so a
    local run decides, claims and deletes exactly like every connector's."""
    if not principal.app_admin:
        raise Forbidden("Only an app admin may sync a server directory")
    config = check_config("local", {"path": body.path}, ConnectorOptions.of(sync), root="")
    if body.knowledge_base_id is not None:
        kb = await resolve_kb(session, principal, body.knowledge_base_id, Access.EDIT)
    elif body.collection_name is not None:
        name = validate_collection_name(body.collection_name)
        kb = (await resolve_collection(session, principal, name, Access.EDIT))[0]
    else:
        raise InvalidInput(
            "Name the knowledge base (knowledge_base_id) or its collection_name",
            fields=[FieldError("knowledge_base_id", "required")],
        )
    await _takes_sources(session, kb, _target_field(body.knowledge_base_id, body.collection_name))
    await _not_reserved(session, kb)
    path = str(config.model_dump()["path"])
    src = await repository.local_source(session, kb.id, path)
    if src is None:
        src = SyncSource(
            name=f"local: {path}"[:200],
            organization_id=kb.organization_id,
            collection_name=kb.collection_name,
            knowledge_base_id=kb.id,
            connector="local",
            config={"path": path},
            sync_mode=body.sync_mode,
            active=True,
            created_by=principal.user_id,
        )
        await _add_source(session, principal, src)
    src.sync_mode = body.sync_mode
    src.active = True
    return await run(session, principal, src)
