"""A pinned connection: the checked address on the wire, the name in Host and in TLS."""

from __future__ import annotations

import httpx
import pytest
from docproc_common.connectors.errors import NetworkRefusedError
from docproc_common.egress import pinned
from docproc_common.egress.pinned import PinnedTransport, check_url


async def test_https_goes_to_the_checked_address_with_the_name_for_tls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answers = iter([["93.184.216.34"], ["10.0.0.7"]])  # the second would be a rebinding

    async def resolve(_host: str, _port: int) -> list[str]:
        return next(answers)

    monkeypatch.setattr(pinned, "resolve", resolve)
    seen: list[httpx.Request] = []

    def wire(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200)

    transport = PinnedTransport(allow_private=False, inner=httpx.MockTransport(wire))
    async with httpx.AsyncClient(transport=transport) as client:
        for path in ("/", "/a", "/b"):
            assert (await client.get(f"https://docs.example.com{path}")).status_code == 200
    assert [str(r.url) for r in seen] == [
        "https://93.184.216.34/",
        "https://93.184.216.34/a",
        "https://93.184.216.34/b",
    ]
    assert {r.headers["host"] for r in seen} == {"docs.example.com"}
    assert {r.extensions["sni_hostname"] for r in seen} == {"docs.example.com"}


async def test_with_private_networks_allowed_nothing_is_resolved_or_rewritten(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def resolve(_host: str, _port: int) -> list[str]:
        raise AssertionError("nothing to check")

    monkeypatch.setattr(pinned, "resolve", resolve)
    seen: list[str] = []

    def wire(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(204)

    transport = PinnedTransport(allow_private=True, inner=httpx.MockTransport(wire))
    async with httpx.AsyncClient(transport=transport) as client:
        await client.get("http://minio.internal:9000/bucket")
    assert seen == ["http://minio.internal:9000/bucket"]


@pytest.mark.parametrize("answer", ["64:ff9b::a9fe:a9fe", "2002:7f00:1::", "::a00:5"])
async def test_a_name_resolving_to_an_ipv6_form_of_an_internal_ipv4_is_refused(
    monkeypatch: pytest.MonkeyPatch, answer: str
) -> None:
    """The worker's resolver asks the same rule as the API's check (a NAT64 DNS64 answer)."""

    async def resolve(_host: str, _port: int) -> list[str]:
        return [answer]

    monkeypatch.setattr(pinned, "resolve", resolve)
    with pytest.raises(NetworkRefusedError, match="resolves to a non-public address"):
        await check_url("https://metadata.example.com/", allow_private=False)


async def test_an_expired_pin_is_resolved_and_checked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A long-lived client's pins expire (``pin_ttl_s``): the next answer is followed only if
    it is public, and a refused one is not kept."""
    answers = iter([["93.184.216.34"], ["10.0.0.7"], ["93.184.216.35"]])

    async def resolve(_host: str, _port: int) -> list[str]:
        return next(answers)

    monkeypatch.setattr(pinned, "resolve", resolve)
    seen: list[str] = []

    def wire(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200)

    transport = PinnedTransport(allow_private=False, inner=httpx.MockTransport(wire), pin_ttl_s=0)
    async with httpx.AsyncClient(transport=transport) as client:
        await client.get("https://models.example.com/v1")
        with pytest.raises(
            NetworkRefusedError, match="models.example.com resolves to a non-public"
        ):
            await client.get("https://models.example.com/v1")
        await client.get("https://models.example.com/v1")
    assert seen == ["https://93.184.216.34/v1", "https://93.184.216.35/v1"]
