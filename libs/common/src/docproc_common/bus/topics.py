"""Every topic and who consumes it, declared once (``SUBSCRIBERS``): a service's subscriptions
(``subscriptions``) and the chart's consumer topics (``consumers.yaml``, written by
``python -m docproc_common.bus.topics consumers``) are derived from it;
``python -m docproc_common.bus.topics create`` is the Helm hook Job."""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError

from docproc_common.bus.delivery import Delivery, Handler, Subscription, dlq_topic, retry_topic
from docproc_common.events import (
    EVENT_TYPES,
    CollectionDeleted,
    DocumentAccepted,
    DocumentDeleted,
    DocumentFailed,
    DocumentIndexed,
    DocumentParsed,
    Event,
    SyncRequested,
)
from docproc_common.settings import KafkaSettings, get_settings

log = logging.getLogger(__name__)

# topic -> the services (consumer groups) that consume it
SUBSCRIBERS: dict[str, tuple[str, ...]] = {
    DocumentAccepted.TOPIC: ("parser",),
    DocumentParsed.TOPIC: ("embedder",),
    DocumentIndexed.TOPIC: (),
    DocumentFailed.TOPIC: (),
    DocumentDeleted.TOPIC: ("teardown",),
    CollectionDeleted.TOPIC: ("teardown",),
    SyncRequested.TOPIC: ("sync",),
}


def consumed_by(service: str) -> list[str]:
    """The topics ``service``'s consumer group reads, in ``SUBSCRIBERS``' order."""
    return [topic for topic, groups in SUBSCRIBERS.items() if service in groups]


def consumers() -> dict[str, list[str]]:
    """Every consumer group and the topics it reads, both sorted by name."""
    groups = sorted({group for groups in SUBSCRIBERS.values() for group in groups})
    return {group: sorted(consumed_by(group)) for group in groups}


class TopologyError(RuntimeError):
    """A service's handlers are not the topics ``SUBSCRIBERS`` says it consumes."""


@runtime_checkable
class GivingUp(Protocol):
    """A handler that records a failure before its event is dead-lettered
    (``Subscription.give_up``)."""

    async def __call__(self, event: Any, delivery: Delivery) -> None: ...

    async def give_up(self, event: Any, delivery: Delivery, exc: BaseException) -> None: ...


def subscriptions(service: str, handlers: Mapping[type[Event], Handler]) -> list[Subscription]:
    """``service``'s subscriptions: one per topic its consumer group reads in ``SUBSCRIBERS``,
    to the handler of that topic's event type (with the handler's ``give_up`` when it has one).
    A service declares what it does with each event; which events reach it is the map's.
    ``TopologyError`` when a topic it reads has no handler or a handler has no topic of its."""
    topics = consumed_by(service)
    handled = {event_type.TOPIC for event_type in handlers}
    if handled != set(topics):
        raise TopologyError(
            f"{service} handles {sorted(handled) or 'nothing'} but consumes "
            f"{topics or 'nothing'} (docproc_common.bus.topics.SUBSCRIBERS)"
        )
    subscribed = []
    for topic in topics:
        handler = handlers[EVENT_TYPES[topic]]
        give_up = handler.give_up if isinstance(handler, GivingUp) else None
        subscribed.append(Subscription(topic, handler, give_up=give_up))
    return subscribed


def consumers_yaml() -> str:
    """``consumers()`` as the chart reads it (deploy/helm/docproc/consumers.yaml)."""
    lines = [
        "# The topics each consumer group (named after its service) reads: the chart's KEDA",
        "# triggers, scalers and alerts are derived from it. Generated from",
        "# docproc_common.bus.topics.SUBSCRIBERS by `make chart-consumers`; do not edit",
        "# (tests/test_topology.py fails while it differs).",
    ]
    for group, topics in consumers().items():
        lines += [f"{group}:", *(f"  - {topic}" for topic in topics)]
    return "\n".join(lines) + "\n"


def all_topics() -> list[str]:
    topics: list[str] = []
    for topic, groups in SUBSCRIBERS.items():
        topics.append(topic)
        for group in groups:
            topics += [retry_topic(topic, group), dlq_topic(topic, group)]
    return topics


async def ensure_topics(settings: KafkaSettings, topics: list[str]) -> None:
    """Create the missing ``topics`` (their names in the code, placed in the configured
    namespace) with the configured partitions and replication: the topics Job creates them
    all, and a consumer creates its own retry/DLQ topics if they are missing, so neither may
    fall back to a broker default (replication 1)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.bootstrap_servers)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [t for t in map(settings.on_broker, topics) if t not in existing]
        if missing:
            try:
                await admin.create_topics(
                    [
                        NewTopic(
                            t,
                            num_partitions=settings.topic_partitions,
                            replication_factor=settings.topic_replication,
                        )
                        for t in missing
                    ]
                )
            except TopicAlreadyExistsError:
                log.info("topics created concurrently")
    finally:
        await admin.close()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m docproc_common.bus.topics")
    parser.add_argument("command", choices=["create", "list", "consumers"])
    args = parser.parse_args()
    if args.command == "consumers":
        print(consumers_yaml(), end="")  # noqa: T201
        return
    settings = get_settings().kafka
    if args.command == "list":
        print("\n".join(map(settings.on_broker, all_topics())))  # noqa: T201
        return
    asyncio.run(ensure_topics(settings, all_topics()))


if __name__ == "__main__":
    main()
