"""The worker's side of which hosts a source may reach (the rules:
``docproc_common.connectors.network``).

The check resolves the host once, and the connection goes to an address that check
accepted, never to a second DNS answer: a name that resolves to a public address for
the check and to an internal one a moment later (DNS rebinding, a zero TTL) cannot
reach the internal one. The web connector's HTTP client connects through
:class:`PinnedTransport`; git is given the checked address with
``http.curloptResolve``. (The S3 connector's endpoint is checked, not pinned: botocore
resolves it itself.)
"""

from __future__ import annotations

import asyncio
import socket
from urllib.parse import urlsplit

import httpx
from docproc_common.connectors import network as rules
from docproc_common.connectors.errors import NetworkRefusedError


async def resolve(host: str, port: int) -> list[str]:
    """Every address DNS gives ``host`` (the one lookup a connection is pinned to)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def check_url(url: str, *, allow_private: bool) -> list[str]:
    """Refuse ``url`` when its host resolves to an address a source may not reach.

    The refusal names the host, never the URL: a sync log shows it, and a URL can carry
    userinfo or a token in its query string.

    Returns the addresses it checked (none when private networks are allowed: nothing is
    checked then), for the connection to be pinned to.
    """
    if allow_private:
        return []
    reason = rules.literal_refusal(url)
    if reason is not None:
        raise NetworkRefusedError(f"The address is refused: {reason}")
    host = urlsplit(url).hostname or ""
    try:
        addresses = await resolve(host, default_port(url))
    except OSError as exc:
        raise NetworkRefusedError(f"The host {host!r} could not be resolved") from exc
    if not addresses or not all(rules.is_public(a) for a in addresses):
        raise NetworkRefusedError(
            f"The address is refused: {host} resolves to a non-public address"
        )
    return addresses


def default_port(url: str) -> int:
    parts = urlsplit(url)
    return parts.port or (443 if parts.scheme == "https" else 80)


class PinnedTransport(httpx.AsyncBaseTransport):
    """Sends each request to an address ``check_url`` accepted for its host, resolved once.

    The URL's host becomes that address; the ``Host`` header keeps the name, and so does
    TLS (``sni_hostname``: the certificate is still verified against the name). With
    private networks allowed nothing is checked and requests pass unchanged.
    """

    def __init__(
        self, *, allow_private: bool, inner: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self._allow_private = allow_private
        self._inner = inner or httpx.AsyncHTTPTransport()
        self._pins: dict[tuple[str, int], str] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not self._allow_private:
            url = str(request.url)
            host = request.url.host
            key = (host, default_port(url))
            if key not in self._pins:
                self._pins[key] = (await check_url(url, allow_private=False))[0]
            request.url = request.url.copy_with(host=self._pins[key])
            request.extensions = {**request.extensions, "sni_hostname": host}
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()
