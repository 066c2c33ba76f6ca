"""An organization's vision model profiles: a provider, a model and the vault key that pays
for it (the specification's #image-description). A collection selects one in its ingestion
configuration (``vision_profile_id``); the parser resolves it when it parses.

Who may do what:

* **list** - a member of the organization (without one: the caller's own profiles).
* **create** - ``collections:edit`` in the organization (without one: anyone, for
  themselves). The key is lent to the profile's address, so it must be one the caller may
  bind (``lendable_secret``: sight of the secret, kind ``api_key``, the organization's),
  and the address one the deployment lets a vision key reach (``vision_address_allowed``).
* **delete** - whoever may create; refused (409, naming the collections) while a
  collection selects it.
* **select** (``ingestion_config.vision_profile_id``, checked in ``ingestion_config``) - a
  profile of the collection's organization whose key the caller may bind: selecting a
  profile binds its key, so it needs what binding the key needs.

A profile is never changed: a collection that selected it lent its key as it was, so
another key or address is another profile, selected (and checked) again.
"""

from __future__ import annotations

import uuid

from docproc_common.auth import EDIT, Principal
from docproc_common.db.models import VisionModelProfile
from docproc_common.errors import Conflict, FieldError, Forbidden, InvalidInput, NotFound
from docproc_common.ingestion import VISION_PROVIDERS, VisionProfile, vision_address_allowed
from docproc_common.settings import Settings
from docproc_common.vault import SecretKind
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.audit import record
from docproc_upload.credentials.repository import lendable_secret
from docproc_upload.vision_profiles import repository
from docproc_upload.vision_profiles.schemas import VisionProfileCreate


def may_manage(principal: Principal) -> bool:
    return principal.organization_id is None or principal.has(EDIT)


def address(body: VisionProfileCreate, allowed: list[str]) -> str:
    """The profile's normalized address: the provider's own unless it names one; a 400
    naming ``base_url`` for one that is not a plain http(s) URL or that a vision key may not
    reach here."""
    default = VISION_PROVIDERS[body.provider]
    base_url = body.base_url or default
    if base_url is None:
        raise InvalidInput(
            "An openai-compatible profile names its server's address",
            fields=[FieldError("base_url", "required for the openai-compatible provider")],
        )
    try:
        normalized = VisionProfile(base_url=base_url, model=body.model).base_url
    except ValidationError as exc:
        problems = [e["msg"] for e in exc.errors() if e["loc"] == ("base_url",)]
        raise InvalidInput(
            "The address must be an http(s) URL without user info, query or fragment",
            fields=[FieldError("base_url", problems[0] if problems else "not a plain URL")],
        ) from exc
    if not vision_address_allowed(normalized, allowed):
        raise InvalidInput(
            "A vision key may not be sent to this address: it is neither the provider's own "
            "host (https) nor one this deployment allows (the chart's vision.allowedBaseUrls, "
            "PARSER__VISION_ALLOWED_BASE_URLS)",
            fields=[FieldError("base_url", "not an allowed vision endpoint")],
        )
    return normalized


async def create(
    session: AsyncSession, principal: Principal, settings: Settings, body: VisionProfileCreate
) -> VisionModelProfile:
    if not may_manage(principal):
        raise Forbidden("Making a vision model profile needs collections:edit in the organization")
    org = principal.organization_id
    base_url = address(body, settings.parser.vision_allowed_base_urls)
    if body.secret_id is None and body.provider != "openai-compatible":
        raise InvalidInput(
            f"A {body.provider} profile needs its key: an api_key secret in the vault",
            fields=[FieldError("secret_id", "required for this provider")],
        )
    if body.secret_id is not None:
        secret = await lendable_secret(
            session, principal, body.secret_id, kind=SecretKind.API_KEY, organization_id=org
        )
        if secret is None:
            raise InvalidInput(
                "No api_key secret with this id was found in the vault",
                fields=[FieldError("secret_id", "not found")],
            )
    if await repository.named(session, org, principal.user_id, body.name) is not None:
        raise Conflict(
            "A vision model profile with this name already exists",
            fields=[FieldError("name", "already used by another profile")],
        )
    profile = VisionModelProfile(
        organization_id=org,
        name=body.name,
        provider=body.provider,
        model=body.model,
        base_url=base_url,
        secret_id=body.secret_id,
        created_by=principal.user_id,
    )
    session.add(profile)
    await session.flush()
    await record(
        session,
        principal,
        "vision_profile.created",
        profile,
        {"name": profile.name, "provider": profile.provider, "model": profile.model},
    )
    return profile


async def visible(session: AsyncSession, principal: Principal) -> list[VisionModelProfile]:
    return await repository.visible_profiles(session, principal)


async def delete(session: AsyncSession, principal: Principal, profile_id: uuid.UUID) -> None:
    profile = await repository.profile_of(
        session,
        profile_id,
        organization_id=principal.organization_id,
        user_id=principal.user_id,
        lock="update",
    )
    if profile is None:
        raise NotFound("Vision model profile not found")
    if not may_manage(principal):
        raise Forbidden(
            "Deleting a vision model profile needs collections:edit in the organization"
        )
    users = await repository.selecting(session, profile_id)
    if users:
        names = ", ".join(sorted({kb.name for kb in users}))
        raise Conflict(
            f"This vision model profile is in use by {len(users)} knowledge base(s) ({names}); "
            "select another profile in their settings first",
            fields=[FieldError("vision_profile_id", f"in use by {names}")],
        )
    await session.delete(profile)
    await record(session, principal, "vision_profile.deleted", profile, {"name": profile.name})


async def check_selection(
    session: AsyncSession,
    principal: Principal,
    profile_id: uuid.UUID,
    *,
    organization_id: str | None,
    field: str,
) -> VisionModelProfile:
    """The profile a collection of ``organization_id`` selects, when the caller may bind its
    key; a 400 naming ``field`` for a profile it cannot select (another organization's, or
    gone), a 403 naming it for a key the caller may not lend."""
    profile = await repository.profile_of(
        session,
        profile_id,
        organization_id=organization_id,
        user_id=principal.user_id,
        lock="share",
    )
    if profile is None:
        raise InvalidInput(
            "No vision model profile with this id was found in the organization",
            fields=[FieldError(field, "not found")],
        )
    if profile.secret_id is not None:
        secret = await lendable_secret(
            session,
            principal,
            profile.secret_id,
            kind=SecretKind.API_KEY,
            organization_id=organization_id,
        )
        if secret is None:
            raise Forbidden(
                "Selecting this vision model profile lends its key, which needs what binding "
                "that key needs: sight of the secret (secrets:view for one shared with the "
                "organization)",
                fields=[FieldError(field, "its key is not one you may bind")],
            )
    return profile
