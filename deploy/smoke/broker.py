"""The release's consumer groups as the broker sees them (the `kafka-consumer-groups`
equivalent through the admin API): state, the topics their members subscribe to, and the
topics they have committed offsets on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.coordinator.protocol import ConsumerProtocolMemberMetadata
from aiokafka.protocol.admin import (
    DescribeGroupsRequest_v0,
    DescribeGroupsRequest_v1,
    DescribeGroupsRequest_v2,
)
from aiokafka.protocol.api import Request

UpToV2 = DescribeGroupsRequest_v0 | DescribeGroupsRequest_v1 | DescribeGroupsRequest_v2


class DescribeGroups(Request[UpToV2]):  # type: ignore[misc]  # aiokafka's Request is untyped
    """DescribeGroups at most at v2. aiokafka 0.14's v3 request names the v2 response as its
    answer, so a v3 answer (one field more per group) is misread: 'Buffer underrun'."""

    API_KEY = 15

    def __init__(self, groups: list[str]) -> None:
        self._groups = groups

    def build(self, request_struct_class: Any) -> Any:
        return request_struct_class(self._groups)


@dataclass
class Group:
    state: str
    subscribed: set[str]
    committed: set[str]


async def consumer_groups(bootstrap: str, prefix: str) -> dict[str, Group]:
    """Every consumer group whose name starts with ``prefix``."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        names = [g[0] for g in await admin.list_consumer_groups() if g[0].startswith(prefix)]
        groups: dict[str, Group] = {}
        for name in names:
            coordinator = await admin.find_coordinator(name)
            response = await admin._send_request(DescribeGroups([name]), coordinator)
            [described] = response.to_object()["groups"]
            subscribed: set[str] = set()
            if described["state"] == "Stable":  # members carry metadata only when stable
                for member in described["members"]:
                    meta = ConsumerProtocolMemberMetadata.decode(member["member_metadata"])
                    subscribed.update(meta.subscription)
            offsets = await admin.list_consumer_group_offsets(name)
            groups[name] = Group(described["state"], subscribed, {tp.topic for tp in offsets})
        return groups
    finally:
        await admin.close()
