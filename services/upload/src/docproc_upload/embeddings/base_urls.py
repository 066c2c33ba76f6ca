"""Which addresses a collection may send its embedding requests (and its key) to.

A collection's ``embedding_base_url`` receives the collection's API key with every
request, so it is never free-form: it must name one of the provider's own hosts in
the catalog (``base_url_hosts``, ``*.`` for subdomains, https only) or start with
one of the deployment's ``EMBEDDER__ALLOWED_BASE_URLS`` (an operator's own gateway,
or ``http://127.0.0.1`` in tests). URLs are compared parsed, never as strings, so
``https://openrouter.ai@evil.example`` is what it is: a URL with user info, refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from docproc_common.embedding.catalog import ProviderSpec
from docproc_common.errors import FieldError, InvalidInput


def normalize_url(url: str, *, field: str) -> str:
    """``url`` without a trailing slash; a 400 naming ``field`` unless it is a plain http(s) URL."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        parts = None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.username is not None
        or parts.password is not None
        or parts.query
        or parts.fragment
        or len(text) > 500
    ):
        raise InvalidInput(
            "The address must be an http(s) URL without user info, query or fragment",
            fields=[FieldError(field, "not a plain http(s) URL")],
        )
    return text.rstrip("/")


def _host_matches(host: str, patterns: Sequence[str]) -> bool:
    for pattern in patterns:
        p = pattern.lower()
        if p.startswith("*."):
            if host.endswith(p[1:]) and host != p[2:]:
                return True
        elif host == p:
            return True
    return False


def _under(url: str, allowed: str) -> bool:
    u, a = urlsplit(url), urlsplit(allowed.rstrip("/"))
    if (u.scheme, (u.hostname or "").lower()) != (a.scheme, (a.hostname or "").lower()):
        return False
    if a.port is not None and u.port != a.port:
        return False
    prefix = a.path.rstrip("/")
    return not prefix or u.path == prefix or u.path.startswith(prefix + "/")


def allowed_base_url(url: str, provider: ProviderSpec, allowed: Sequence[str]) -> bool:
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme == "https" and _host_matches(host, provider.base_url_hosts):
        return True
    return any(_under(url, a) for a in allowed)


def check_base_url(
    url: str, provider: ProviderSpec, allowed: Sequence[str], *, field: str = "embedding_base_url"
) -> str:
    """The normalized ``url`` when ``provider`` may be reached there; a 400 naming ``field`` otherwise."""
    if not provider.supports_base_url:
        raise InvalidInput(
            f"The provider '{provider.name}' takes no base URL",
            fields=[FieldError(field, f"not accepted with {provider.name}")],
        )
    normalized = normalize_url(url, field=field)
    if not allowed_base_url(normalized, provider, allowed):
        hosts = ", ".join(provider.base_url_hosts) or "none"
        raise InvalidInput(
            f"The base URL is not one of {provider.name}'s hosts ({hosts}) or an address this "
            "deployment allows (EMBEDDER__ALLOWED_BASE_URLS)",
            fields=[FieldError(field, "not an allowed address for this provider")],
        )
    return normalized
