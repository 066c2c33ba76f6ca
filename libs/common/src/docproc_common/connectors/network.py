"""Which hosts a source may make this deployment reach.

A source's address is typed by a tenant, and the worker that follows it sits
inside the deployment's network: without a check, a crawler pointed at
``http://169.254.169.254/`` or a git URL on ``localhost`` would read the
operator's internal services into a searchable collection. Loopback, private,
link-local, reserved and multicast addresses are refused unless the deployment
allows them (``SYNC__ALLOW_PRIVATE_NETWORKS``, for an on-premises store or tests).

The check resolves the host right before the connection is made; a DNS answer
that changes between the check and the connect (rebinding) is not covered.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

from docproc_common.connectors.errors import NetworkRefusedError

_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


def _is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def literal_refusal(url: str) -> str | None:
    """Without DNS: why ``url`` names a host a source may not reach, or None."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if not host:
        return "the address names no host"
    if host in _LOCAL_NAMES or host.endswith(".localhost"):
        return f"{host} is this machine"
    try:
        public = _is_public(host)
    except ValueError:
        return None  # a name: resolved when the worker connects
    return None if public else f"{host} is not a public address"


async def check_url(url: str, *, allow_private: bool) -> None:
    """Refuse ``url`` when its host resolves to an address a source may not reach."""
    if allow_private:
        return
    reason = literal_refusal(url)
    if reason is not None:
        raise NetworkRefusedError(f"The address {url!r} is refused: {reason}")
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise NetworkRefusedError(f"The host {host!r} could not be resolved") from exc
    for info in infos:
        if not _is_public(str(info[4][0])):
            raise NetworkRefusedError(
                f"The address {url!r} is refused: {host} resolves to a non-public address"
            )
