"""Events carry ids and storage keys: never file bytes, never chunk text."""

import typing

import pytest
from docproc_common.bus.topics import SUBSCRIBERS, all_topics
from docproc_common.events import EVENT_TYPES, Event


@pytest.mark.parametrize("event_type", list(EVENT_TYPES.values()), ids=lambda t: t.__name__)
def test_no_event_field_can_carry_bytes_or_text_bodies(event_type: type[Event]) -> None:
    hints = typing.get_type_hints(event_type)
    for name in event_type.model_fields:
        assert "bytes" not in str(hints[name]), name
        assert name not in {"text", "content", "chunks", "data", "body"}, name
    assert event_type.model_fields["schema_version"].default == 1


def test_topics_are_versioned_past_tense_and_every_consumer_has_retry_and_dlq() -> None:
    for topic in EVENT_TYPES:
        assert topic.startswith("docproc.")
        assert topic.rsplit(".", 1)[1].startswith("v")
    topics = set(all_topics())
    for topic, consumers in SUBSCRIBERS.items():
        for consumer in consumers:
            assert f"{topic}.retry.{consumer}" in topics
            assert f"{topic}.dlq.{consumer}" in topics


def test_an_unknown_schema_version_is_a_dead_letter_not_read_as_the_known_one() -> None:
    from docproc_common.bus.delivery import Subscription
    from docproc_common.errors import PermanentError
    from docproc_common.events import DocumentDeleted

    async def handler(*_: object) -> None: ...

    subscription = Subscription(DocumentDeleted.TOPIC, handler)
    event = DocumentDeleted(collection_name="c", vector_document_ids=[], storage_paths=[])
    assert subscription.decode(event.model_dump_json().encode()) == event
    future = event.model_dump(mode="json") | {"schema_version": 2}
    with pytest.raises(PermanentError):
        subscription.decode(future)
