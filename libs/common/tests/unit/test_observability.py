"""The Kafka client's reconnect noise is limited to one line per message a window; a metric's
labels are the fixed ones."""

from __future__ import annotations

import logging

import pytest
from docproc_common.observability import RepeatLimit, gauge


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _record(name: str, msg: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord(name, logging.ERROR, __file__, 1, msg, args, None)


def test_repeats_of_a_kafka_message_pass_once_a_window_with_the_count_dropped() -> None:
    clock = Clock()
    limit = RepeatLimit(("aiokafka",), window_s=30.0, clock=clock)
    down = 'Unable connect to "%s:%s": %s'

    passed = []
    for i in range(100):
        clock.now = i * 0.01
        record = _record("aiokafka.conn", down, "127.0.0.1", 9092, "refused")
        if limit.filter(record):
            passed.append(record)
    assert len(passed) == 1

    clock.now = 31.0
    record = _record("aiokafka.conn", down, "127.0.0.1", 9092, "refused")
    assert limit.filter(record)
    assert record.getMessage() == (
        'Unable connect to "127.0.0.1:9092": refused (and 99 like it in the last 31 s)'
    )


def test_other_messages_and_other_libraries_are_never_held_back() -> None:
    limit = RepeatLimit(("aiokafka",), window_s=30.0, clock=Clock())
    assert limit.filter(_record("aiokafka.consumer", "fetch failed: %s", "x"))
    assert limit.filter(_record("aiokafka.consumer", "coordinator dead: %s", "x"))
    assert limit.filter(_record("aiokafka.conn", "fetch failed: %s", "x"))
    for _ in range(5):
        assert limit.filter(_record("docproc_embedder.handler", "document failed: %s", "x"))


def test_a_metric_labelled_by_a_name_a_tenant_chose_is_refused() -> None:
    """A collection's name in a label is a tenant's text in the monitoring stack (issue 25,
    item 11): refused when the metric is declared, not found in a dashboard later."""
    for label in ("collection", "collection_name", "knowledge_base", "filename"):
        with pytest.raises(ValueError, match=f"label {label} is not one of LABELS"):
            gauge(f"docproc_test_by_{label}", "A series per tenant's name", (label,))
