"""A client's ingestion configuration: a collection's, or a per-upload override checked on
the merged pair (``docproc_common.ingestion.IngestionConfig``).

The override carries only what changes, so two individually legal numbers can
make an illegal pair (``chunk_overlap: 4096`` against a collection chunking at
2500). The merge is re-validated and refused with a 400 naming the fields,
before the file is stored and before any document row exists.

A configuration lends vault secrets (``IngestionConfig.secret_bindings``): each binding
it makes that the collection did not already make is checked against the caller, as an
embedding key is (``lendable_secret``).
"""

from __future__ import annotations

import uuid
from typing import Any

from docproc_common.auth import Principal
from docproc_common.errors import FieldError, InvalidInput
from docproc_common.ingestion import IngestionConfig, SecretBinding
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.credentials.repository import lendable_secret
from docproc_upload.vision_profiles.service import check_selection

ROOT = "ingestion_config"
#: The two forms of one choice: a vision model profile, or an inline profile.
VISION_CHOICES = ("vision_profile_id", "vision_profile")


def field_errors(exc: ValidationError, root: str = ROOT) -> list[FieldError]:
    """Pydantic errors as form fields rooted at the submitted document.

    A model-level rule (the pair) names the object itself, because Pydantic does
    not attribute an ``after`` validator to either of the fields it is about.
    """
    out: list[FieldError] = []
    for err in exc.errors():
        path = ".".join(str(p) for p in err["loc"])
        out.append(FieldError(f"{root}.{path}" if path else root, err["msg"]))
    return out


def merge_config(base: dict[str, Any], override: dict[str, Any] | None) -> IngestionConfig:
    """The collection's configuration with the upload's changes on top, validated as one.

    A ``vision_profile`` in the override replaces the collection's whole profile
    (it is one choice: endpoint, model and key belong together), and either form of the
    choice (``vision_profile_id`` or an inline ``vision_profile``) replaces the other.
    """
    merged = {**base, **(override or {})}
    for chosen, other in (VISION_CHOICES, VISION_CHOICES[::-1]):
        if override and chosen in override and other not in override:
            merged.pop(other, None)
    try:
        return IngestionConfig.model_validate(merged)
    except ValidationError as exc:
        raise InvalidInput(
            "The ingestion configuration is not valid", fields=field_errors(exc)
        ) from exc


def _bindings(stored: dict[str, Any] | None) -> frozenset[SecretBinding]:
    if stored is None:
        return frozenset()
    try:
        return IngestionConfig.model_validate(stored).secret_bindings()
    except ValidationError:
        return frozenset()


def _selected(stored: dict[str, Any] | None) -> uuid.UUID | None:
    if stored is None:
        return None
    try:
        return IngestionConfig.model_validate(stored).vision_profile_id
    except ValidationError:
        return None


async def check_secret_bindings(
    session: AsyncSession,
    principal: Principal,
    config: IngestionConfig,
    *,
    organization_id: str | None,
    kept: dict[str, Any] | None,
) -> None:
    """Refuse a secret ``config`` lends that the caller may not lend (400 naming the field).

    ``kept``: the collection's stored configuration, whose bindings were checked when they
    were made and which a member may use without seeing the key (one that no longer
    validates keeps nothing: everything is checked). Anything else it binds
    (another secret, or the same vision key sent to another ``base_url``) is lent by
    this caller now: a key they can see, of the kind the field needs, in the collection's
    organization. One "not found" answer for every failure, as for an embedding key.

    A vision model profile the configuration selects (``vision_profile_id``) and ``kept``
    did not is a binding of the profile's key to the profile's address: it is checked the
    same way (``vision_profiles.service.check_selection``).
    """
    chosen = config.vision_profile_id
    if chosen is not None and chosen != _selected(kept):
        await check_selection(
            session,
            principal,
            chosen,
            organization_id=organization_id,
            field=f"{ROOT}.vision_profile_id",
        )
    made = _bindings(kept)
    for binding in sorted(config.secret_bindings() - made, key=lambda b: b.field):
        secret = await lendable_secret(
            session,
            principal,
            binding.secret_id,
            kind=binding.kind,
            organization_id=organization_id,
        )
        if secret is None:
            raise InvalidInput(
                f"No {binding.kind} secret with this id was found in the vault",
                fields=[FieldError(f"{ROOT}.{binding.field}", "not found")],
            )
