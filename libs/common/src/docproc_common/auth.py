"""Identity: the gateway authenticates people; docproc verifies the signed bearer token.

The token carries ``sub`` (user id), ``org`` (organization id or none),
``permissions`` and ``app_admin``. Nothing else identifies a caller: no route
trusts a raw header.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import jwt

from docproc_common.errors import Unauthorized
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
    return jwt.encode(
        claims, settings.jwt_secret.get_secret_value(), algorithm=settings.jwt_algorithm
    )


class _Verified:
    """Tokens this process verified, each kept with its principal until the token expires
    (bounded, least recently used out first): a caller's next request with the same token
    costs a dictionary lookup instead of a signature check. Keyed by everything the check
    read (the token, the key, the algorithm, the audience, the issuer), so a changed
    setting verifies again."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[str | None, ...], tuple[Principal, float]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str | None, ...]) -> Principal | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if time.time() >= entry[1]:  # expired since: verified (and refused) again
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return entry[0]

    def put(self, key: tuple[str | None, ...], principal: Principal, expires: float) -> None:
        with self._lock:
            self._entries[key] = (principal, expires)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)


_VERIFIED = _Verified()


def verify_token(settings: AuthSettings, token: str) -> Principal:
    key = (
        token,
        settings.jwt_secret.get_secret_value(),
        settings.jwt_algorithm,
        settings.jwt_audience,
        settings.jwt_issuer,
    )
    known = _VERIFIED.get(key)
    if known is not None:
        return known
    principal, expires = _verify(settings, token)
    _VERIFIED.put(key, principal, expires)
    return principal


def _verify(settings: AuthSettings, token: str) -> tuple[Principal, float]:
    try:
        claims = jwt.decode(
            token,
            settings.jwt_secret.get_secret_value(),
            algorithms=[settings.jwt_algorithm],
            audience=settings.jwt_audience,
            issuer=settings.jwt_issuer,
            options={"require": ["sub", "exp"]},
        )
    except jwt.PyJWTError as exc:
        raise Unauthorized("Invalid or expired token") from exc
    sub = claims.get("sub")
    permissions = claims.get("permissions") or []
    if not isinstance(sub, str) or not _usable_id(sub) or not isinstance(permissions, list):
        raise Unauthorized("Invalid or expired token")
    org = claims.get("org")
    if org not in (None, "") and not _usable_id(org):
        raise Unauthorized("Invalid or expired token")
    principal = Principal(
        user_id=sub,
        organization_id=org if isinstance(org, str) and org else None,
        permissions=frozenset(str(p) for p in permissions),
        app_admin=claims.get("app_admin") is True,
    )
    return principal, float(claims["exp"])


def _usable_id(value: object) -> bool:
    """An id docproc can store: a non-empty string that fits its columns, with no NUL
    (PostgreSQL refuses one), so a signed but odd token is a 401, never a 500."""
    return isinstance(value, str) and 0 < len(value) <= MAX_ID_LENGTH and "\x00" not in value


def principal_from_header(settings: AuthSettings, authorization: str | None) -> Principal:
    if not authorization or not authorization.lower().startswith("bearer "):
        raise Unauthorized("A bearer token is required")
    return verify_token(settings, authorization[7:].strip())
