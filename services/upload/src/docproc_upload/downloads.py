"""The headers every file download answers with: a named file the browser never sniffs or runs.

``Content-Disposition`` per RFC 6266 and RFC 5987: an ASCII fallback ``filename="..."``
(anything outside printable ASCII, a quote, a backslash or a ``;`` becomes ``_``, so a
name can neither end the quoted string nor split the header with CR/LF) and the exact
name as ``filename*=UTF-8''...``, percent-encoded.

A download that a caller fetches later, outside the request that named it (a workspace's
files for the chat runner), is a **link**: a signed, short-lived grant bound to the one
caller (person and organisation) it was minted for, checked against the bearer token
that presents it (``sign_link`` / ``open_link``). No row backs it; the key is derived
from the bearer tokens' own (``link_key``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote

from docproc_common.auth import Principal
from docproc_common.errors import NotFound
from docproc_common.settings import AuthSettings


def content_disposition(filename: str, *, inline: bool = False) -> str:
    fallback = "".join(
        c if c.isascii() and c.isprintable() and c not in '"\\;' else "_" for c in filename
    )
    kind = "inline" if inline else "attachment"
    return f"{kind}; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


def download_headers(filename: str, *, inline: bool = False) -> dict[str, str]:
    return {
        "Content-Disposition": content_disposition(filename, inline=inline),
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'; sandbox",
        "Cache-Control": "private, no-store",
    }


# --- short-lived, caller-bound links ---------------------------------------------------------

#: What a refused link answers, whatever the reason: a link that is not the caller's, or was
#: tampered with, reads like a file that is not there (the chat file's own rule).
LINK_REFUSED = "File not found"
_LINK_LABEL = b"docproc download links v1"


@dataclass(frozen=True, slots=True)
class Link:
    """What a link grants: ``target`` for ``purpose``, to the one caller, until ``expires_at``.

    ``target`` is what the route reads, named relative to the caller's own space (a route
    rebuilds the storage key from the caller it authenticated, never from the link alone).
    """

    purpose: str
    user_id: str
    organization_id: str | None
    target: tuple[str, ...]
    expires_at: int

    def expires(self) -> datetime:
        return datetime.fromtimestamp(self.expires_at, UTC)


def link_key(auth: AuthSettings) -> bytes:
    """The links' HMAC key, derived from the bearer tokens' key under its own label, so a
    link is never a token and a token never a link."""
    return hmac.new(auth.secret().encode(), _LINK_LABEL, hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key: bytes, body: str) -> str:
    return _b64(hmac.new(key, body.encode("ascii"), hashlib.sha256).digest())


def sign_link(key: bytes, link: Link) -> str:
    """``<payload>.<signature>``, both base64url: safe in one path segment."""
    payload = {
        "p": link.purpose,
        "u": link.user_id,
        "o": link.organization_id,
        "t": list(link.target),
        "e": link.expires_at,
    }
    body = _b64(json.dumps(payload, separators=(",", ":"), ensure_ascii=True).encode())
    return f"{body}.{_mac(key, body)}"


def open_link(key: bytes, token: str, *, purpose: str, caller: Principal, now: float) -> Link:
    """The link, if it is genuine, for ``purpose``, the caller's (person *and* organisation)
    and not expired; otherwise ``NotFound`` with the file's own message.

    Only the link's own caller learns that it expired (``details.reason``), so a runner
    knows to render again; to anyone else every refusal is the same as no file.
    """
    body, dot, mac = token.partition(".")
    if not dot or not token.isascii() or not hmac.compare_digest(_mac(key, body), mac):
        raise NotFound(LINK_REFUSED)
    try:
        raw = json.loads(_unb64(body))
        link = Link(
            purpose=str(raw["p"]),
            user_id=str(raw["u"]),
            organization_id=None if raw["o"] is None else str(raw["o"]),
            target=tuple(str(t) for t in raw["t"]),
            expires_at=int(raw["e"]),
        )
    except (ValueError, KeyError, TypeError):  # signed by us, so never; refused all the same
        raise NotFound(LINK_REFUSED) from None
    if (
        link.purpose != purpose
        or link.user_id != caller.user_id
        or link.organization_id != caller.organization_id
    ):
        raise NotFound(LINK_REFUSED)
    if now >= link.expires_at:
        raise NotFound(
            LINK_REFUSED,
            details={"reason": "link_expired", "expired_at": link.expires().isoformat()},
        )
    return link
