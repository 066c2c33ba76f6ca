"""The rules: which addresses a tenant's address may reach, judged without DNS (the package
docstring says why). The API asks ``literal_refusal`` where an address is accepted; the
worker's resolver (``egress.pinned``) asks ``is_public`` of every answer."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


#: NAT64's well-known prefix (RFC 6052): the last 32 bits are the IPv4 address it reaches.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
#: Local-use NAT64 (RFC 8215): a network's own translator, its prefix length its choice, so
#: where the IPv4 address sits is unknown; never public.
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
#: IPv4-compatible addresses (deprecated, RFC 4291): the last 32 bits.
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")


def _carried_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form carries (mapped, compatible, 6to4, NAT64), or None."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64 or ip in _IPV4_COMPATIBLE:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def is_public(address: str) -> bool:
    """Whether a tenant's address may reach ``address``: the API's check and the worker's
    resolver both ask this. An IPv6 form that carries an IPv4 address (``::ffff:127.0.0.1``,
    ``::7f00:1``, ``2002:7f00:1::``, ``64:ff9b::7f00:1``) is judged by that address: the
    network delivers it there, and ``ipaddress`` calls most of these forms global."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _NAT64_LOCAL:
            return False
        carried = _carried_ipv4(ip)
        if carried is not None:
            ip = carried
    return ip.is_global and not ip.is_multicast


def literal_refusal(url: str) -> str | None:
    """Without DNS: why ``url`` names a host a tenant's address may not reach, or None."""
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
