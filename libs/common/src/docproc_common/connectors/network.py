"""Which hosts a source may make this deployment reach.

A source's address is typed by a tenant, and the worker that follows it sits
inside the deployment's network: without a check, a crawler pointed at
``http://169.254.169.254/`` or a git URL on ``localhost`` would read the
operator's internal services into a searchable collection. Loopback, private,
link-local, reserved and multicast addresses are refused unless the deployment
allows them (``SYNC__ALLOW_PRIVATE_NETWORKS``, for an on-premises store or tests).

What the API can tell without DNS is here (``literal_refusal``, asked where a source's
configuration is accepted); the worker's check of what a name resolves to, and the
connection pinned to it, are sync's (``docproc_sync.connectors.network``).
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


def is_public(address: str) -> bool:
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
        public = is_public(host)
    except ValueError:
        return None  # a name: resolved when the worker connects
    return None if public else f"{host} is not a public address"
