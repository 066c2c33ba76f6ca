"""The caller of an API request: the signed bearer token verified into a ``Principal``
(``docproc_common.auth``), or a 401.

A token is checked against the deployment's key, algorithm, audience and issuer, with
``AUTH__LEEWAY_S`` of clock skew on its times, which must be numbers; its ids must fit the
columns they land in (``MAX_ID_LENGTH``). A verified token is kept
with its principal until it expires, so a caller's next request costs a lookup.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

import jwt
from docproc_common.auth import MAX_ID_LENGTH, Principal
from docproc_common.errors import Unauthorized
from docproc_common.settings import AuthSettings


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
#: The claims that are times: each, when present, must be a number.
TIME_CLAIMS = ("exp", "nbf", "iat")


def verify_token(settings: AuthSettings, token: str) -> Principal:
    key = (
        token,
        settings.secret(),
        settings.jwt_algorithm,
        settings.jwt_audience,
        settings.jwt_issuer,
        str(settings.leeway_s),
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
            settings.secret(),
            algorithms=[settings.jwt_algorithm],
            audience=settings.jwt_audience,
            issuer=settings.jwt_issuer,
            options={"require": ["sub", "exp"]},
            leeway=settings.leeway_s,
        )
    except jwt.PyJWTError as exc:
        raise Unauthorized("Invalid or expired token") from exc
    if not all(_numeric(claims[name]) for name in TIME_CLAIMS if name in claims):
        raise Unauthorized("Invalid or expired token")
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
    return principal, float(claims["exp"]) + settings.leeway_s


def _numeric(value: object) -> bool:
    """A NumericDate (RFC 7519 2): PyJWT would take ``"9999999999"`` or ``true`` through
    ``int()``, which a signer's bug or another library may have put there."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _usable_id(value: object) -> bool:
    """An id docproc can store: a non-empty string that fits its columns, with no NUL
    (PostgreSQL refuses one), so a signed but odd token is a 401, never a 500."""
    return isinstance(value, str) and 0 < len(value) <= MAX_ID_LENGTH and "\x00" not in value


def principal_from_header(settings: AuthSettings, authorization: str | None) -> Principal:
    if not authorization or not authorization.lower().startswith("bearer "):
        raise Unauthorized("A bearer token is required")
    return verify_token(settings, authorization[7:].strip())
