"""A service's subscriptions come from the one topic map (``SUBSCRIBERS``): it gives a handler
per event type, and the map says which topics reach it."""

from typing import Any

import pytest
from docproc_common.bus.delivery import Delivery
from docproc_common.bus.topics import TopologyError, consumed_by, consumers, subscriptions
from docproc_common.events import (
    CollectionDeleted,
    DocumentAccepted,
    DocumentDeleted,
)


async def plain(event: Any, delivery: Delivery) -> None: ...


class Recording:
    async def __call__(self, event: Any, delivery: Delivery) -> None: ...

    async def give_up(self, event: Any, delivery: Delivery, exc: BaseException) -> None: ...


def test_each_topic_of_the_map_gets_the_handler_of_its_event_type() -> None:
    handler = Recording()
    subs = subscriptions("teardown", {DocumentDeleted: handler, CollectionDeleted: plain})
    assert [s.topic for s in subs] == consumed_by("teardown")
    by_topic = {s.topic: s for s in subs}
    assert by_topic[DocumentDeleted.TOPIC].handler is handler
    assert by_topic[DocumentDeleted.TOPIC].give_up == handler.give_up
    assert by_topic[CollectionDeleted.TOPIC].handler is plain
    assert by_topic[CollectionDeleted.TOPIC].give_up is None


def test_a_topic_of_the_map_without_a_handler_is_refused() -> None:
    with pytest.raises(TopologyError, match=r"teardown handles .*documents\.deleted.* consumes"):
        subscriptions("teardown", {DocumentDeleted: plain})


def test_a_handler_for_a_topic_the_map_does_not_send_is_refused() -> None:
    with pytest.raises(TopologyError, match=r"embedder handles .*documents\.accepted"):
        subscriptions("embedder", {DocumentAccepted: plain})


def test_a_service_that_consumes_nothing_has_no_subscriptions() -> None:
    assert subscriptions("upload", {}) == []
    with pytest.raises(TopologyError, match="upload handles .* but consumes nothing"):
        subscriptions("upload", {DocumentAccepted: plain})


def test_consumers_lists_each_group_with_its_topics() -> None:
    assert consumers()["teardown"] == sorted([CollectionDeleted.TOPIC, DocumentDeleted.TOPIC])
    assert "upload" not in consumers()
