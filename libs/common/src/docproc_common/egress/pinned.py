"""The worker's side: resolve once, check every answer, connect to the address checked (the
package docstring says why; the rules: ``egress.rules``).

The web, SharePoint and Confluence connectors' HTTP clients and the embedding client's, for an
organization's endpoint, connect through :class:`PinnedTransport`; git is given the checked
address with ``http.curloptResolve``. (The S3 connector's endpoint is checked, not pinned:
botocore resolves it itself.)
"""

from __future__ import annotations

import asyncio
import socket
import time
from urllib.parse import urlsplit

import httpx

from docproc_common.connectors.errors import NetworkRefusedError
from docproc_common.egress import rules


async def resolve(host: str, port: int) -> list[str]:
    """Every address DNS gives ``host`` (the one lookup a connection is pinned to)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def check_url(url: str, *, allow_private: bool) -> list[str]:
    """Refuse ``url`` when its host resolves to an address a tenant's address may not reach.

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
    """Sends each request to an address ``check_url`` accepted for its host.

    The URL's host becomes that address; the ``Host`` header keeps the name, and so does
    TLS (``sni_hostname``: the certificate is still verified against the name). With
    private networks allowed nothing is checked and requests pass unchanged.

    A host's address is resolved and checked once, then kept for ``pin_ttl_s`` seconds, or,
    with None, for the transport's life: a sync connector's, one run. A long-lived client
    (the embedding client's, one per process) gives a TTL, so an endpoint that moves is
    followed once its pin expires; every new answer is checked again, so expiry never lets
    an internal address through. A refused host is not kept: it is asked again next time.
    """

    def __init__(
        self,
        *,
        allow_private: bool,
        inner: httpx.AsyncBaseTransport | None = None,
        pin_ttl_s: float | None = None,
    ) -> None:
        self._allow_private = allow_private
        self._inner = inner or httpx.AsyncHTTPTransport()
        self._ttl = pin_ttl_s
        #: (host, port) -> (the checked address, when it was checked: ``time.monotonic``)
        self._pins: dict[tuple[str, int], tuple[str, float]] = {}

    async def _pinned(self, url: str, host: str) -> str:
        key = (host, default_port(url))
        now = time.monotonic()
        pin = self._pins.get(key)
        if pin is None or (self._ttl is not None and now - pin[1] >= self._ttl):
            pin = ((await check_url(url, allow_private=False))[0], now)
            self._pins[key] = pin
        return pin[0]

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not self._allow_private:
            host = request.url.host
            address = await self._pinned(str(request.url), host)
            request.url = request.url.copy_with(host=address)
            request.extensions = {**request.extensions, "sni_hostname": host}
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()
