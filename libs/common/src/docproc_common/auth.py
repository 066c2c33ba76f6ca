"""Identity: the gateway authenticates people; docproc verifies the signed bearer token
(``docproc_upload.bearer``, the API being the one door callers come in by).

The token carries ``sub`` (user id), ``org`` (organization id or none),
``permissions`` and ``app_admin``; ``mint_token`` signs one (the CLI, the dev console,
tests), ``Principal`` is who it names. Nothing else identifies a caller: no route
trusts a raw header.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import jwt

from docproc_common.settings import AuthSettings

VIEW = "collections:view"
EDIT = "collections:edit"
SECRETS_VIEW = "secrets:view"
#: the width of every column a caller's id lands in (owner_id, user_id, organization_id, ...)
MAX_ID_LENGTH = 200


@dataclass(frozen=True, slots=True)
class Principal:
    user_id: str
    organization_id: str | None = None
    permissions: frozenset[str] = field(default_factory=frozenset)
    app_admin: bool = False

    def has(self, permission: str) -> bool:
        """What the token grants. ``app_admin`` implies no permission: its few extra powers
        are checked by name where the specification gives them."""
        return permission in self.permissions


def mint_token(
    settings: AuthSettings,
    *,
    user_id: str,
    organization_id: str | None = None,
    permissions: list[str] | None = None,
    app_admin: bool = False,
    ttl_s: int = 3600,
) -> str:
    now = int(time.time())
    claims: dict[str, object] = {
        "sub": user_id,
        "org": organization_id,
        "permissions": permissions or [],
        "app_admin": app_admin,
        "iat": now,
        "exp": now + ttl_s,
    }
    if settings.jwt_audience:
        claims["aud"] = settings.jwt_audience
    if settings.jwt_issuer:
        claims["iss"] = settings.jwt_issuer
    return jwt.encode(claims, settings.secret(), algorithm=settings.jwt_algorithm)
