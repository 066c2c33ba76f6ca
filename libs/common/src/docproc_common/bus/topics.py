"""Every topic, who consumes it, and ``python -m docproc_common.bus.topics create`` for the Helm hook Job."""

from __future__ import annotations

import argparse
import asyncio
import logging

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError

from docproc_common.bus.delivery import dlq_topic, retry_topic
from docproc_common.events import (
    CollectionDeleted,
    DocumentAccepted,
    DocumentDeleted,
    DocumentFailed,
    DocumentIndexed,
    DocumentParsed,
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


def all_topics() -> list[str]:
    topics: list[str] = []
    for topic, consumers in SUBSCRIBERS.items():
        topics.append(topic)
        for consumer in consumers:
            topics += [retry_topic(topic, consumer), dlq_topic(topic, consumer)]
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
    parser.add_argument("command", choices=["create", "list"])
    args = parser.parse_args()
    settings = get_settings().kafka
    if args.command == "list":
        print("\n".join(map(settings.on_broker, all_topics())))  # noqa: T201
        return
    asyncio.run(ensure_topics(settings, all_topics()))


if __name__ == "__main__":
    main()
