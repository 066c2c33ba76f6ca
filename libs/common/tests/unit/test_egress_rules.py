"""Which addresses a source may reach: an IPv6 form is judged by the IPv4 it carries (issue 25)."""

from __future__ import annotations

import pytest
from docproc_common.egress.rules import is_public, literal_refusal

#: Each internal IPv4 address (loopback, cloud metadata, private) in every IPv6 form that
#: carries one: mapped, compatible (::/96), 6to4 (2002::/16), NAT64 (64:ff9b::/96).
CARRIERS = [
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    "::7f00:1",
    "::a9fe:a9fe",
    "::a00:5",
    "2002:7f00:1::",
    "2002:a9fe:a9fe::1",
    "2002:c0a8:101::",
    "64:ff9b::7f00:1",
    "64:ff9b::a9fe:a9fe",
    "64:ff9b::a00:5",
]


@pytest.mark.parametrize("address", CARRIERS)
def test_an_internal_ipv4_inside_ipv6_is_not_public(address: str) -> None:
    assert not is_public(address)
    assert literal_refusal(f"https://[{address}]/") == f"{address} is not a public address"


@pytest.mark.parametrize("address", ["64:ff9b:1::808:808", "64:ff9b:1:ffff::1"])
def test_local_use_nat64_is_never_public(address: str) -> None:
    """Its prefix length is the network's choice, so where the IPv4 sits is unknown."""
    assert not is_public(address)


@pytest.mark.parametrize(
    "address",
    ["8.8.8.8", "::ffff:8.8.8.8", "2002:808:808::", "64:ff9b::808:808", "2606:4700::1111"],
)
def test_a_public_address_stays_public_in_any_form(address: str) -> None:
    assert is_public(address)


@pytest.mark.parametrize("address", ["::", "::1", "fe80::1%eth0", "fc00::1", "2001::1", "ff02::1"])
def test_ipv6_internal_forms(address: str) -> None:
    assert not is_public(address)
