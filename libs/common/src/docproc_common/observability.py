"""Logging, tracing and the metric helpers every service uses.

Metric names are ``docproc_<service>_<what>_<unit>``; each service declares its
own in its ``metrics.py``. Constructors here are idempotent per name, because
the embedded all-in-one builds all five services in one process and tests build
them repeatedly. Labels come from ``LABELS`` only: each takes values from a set the
code fixes, never a name a tenant chose.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.metrics import MetricWrapperBase

from docproc_common.settings import OtelSettings

M = TypeVar("M", bound=MetricWrapperBase)
_metrics: dict[str, MetricWrapperBase] = {}

STAGE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


#: Every label a docproc metric may carry, each valued from a set the code fixes (a stage,
#: an outcome, a rule, a topic, a provider of the catalog). A collection, knowledge base,
#: file or user name would put what a tenant typed into the monitoring stack, where every
#: operator and dashboard reads it, and grow the series without bound: such a series is
#: exported unlabelled (a total), its detail left to the API and the logs. The one
#: exception is ``collection_id``: a knowledge base's id (a UUID docproc assigned, never its
#: name), on the retrieval-quality gauge of the bases that keep an evaluation set, whose
#: whole point is one series per base.
LABELS = frozenset(
    {
        "collection_id",
        "connector",
        "error_class",
        "file_type",
        "kind",
        "mode",
        "outcome",
        "partition",
        "provider",
        "result",
        "route",
        "rule",
        "stage",
        "topic",
    }
)


def _metric(cls: type[M], name: str, doc: str, labels: tuple[str, ...] = (), **kw: Any) -> M:
    unknown = sorted(set(labels) - LABELS)
    if unknown:
        raise ValueError(f"{name}: label {', '.join(unknown)} is not one of LABELS")
    existing = _metrics.get(name)
    if existing is None:
        existing = cls(name, doc, labels, registry=REGISTRY, **kw)
        _metrics[name] = existing
    assert isinstance(existing, cls)
    return existing


def counter(name: str, doc: str, labels: tuple[str, ...] = ()) -> Counter:
    return _metric(Counter, name, doc, labels)


def gauge(name: str, doc: str, labels: tuple[str, ...] = ()) -> Gauge:
    return _metric(Gauge, name, doc, labels)


def histogram(
    name: str, doc: str, labels: tuple[str, ...] = (), buckets: tuple[float, ...] = STAGE_BUCKETS
) -> Histogram:
    return _metric(Histogram, name, doc, labels, buckets=buckets)


class BusMetrics:
    """The consumer- and relay-side series every stage exports."""

    def __init__(self, service: str) -> None:
        p = f"docproc_{service}"
        self.messages = counter(
            f"{p}_messages_total",
            "Messages handled, by topic and outcome (ok|retry|dlq)",
            ("topic", "outcome"),
        )
        self.lag = gauge(
            f"{p}_consumer_lag",
            "Messages behind the partition's high-water mark",
            ("topic", "partition"),
        )
        self.outbox_backlog = gauge(f"{p}_outbox_backlog", "Outbox rows not yet published")
        self.outbox_oldest_age = gauge(
            f"{p}_outbox_oldest_age_seconds", "Age of the oldest unpublished outbox row"
        )


class RepeatLimit(logging.Filter):
    """Passes the first record of each (logger, message template) of the libraries named,
    then at most one a ``window_s``, which says how many like it were dropped.

    While the broker is away, the Kafka client logs each failed reconnect, metadata
    refresh and fetch (about a hundred ERROR lines a second per process); what an SRE
    needs is that it is failing, how often, and when it stops.
    """

    def __init__(
        self,
        prefixes: tuple[str, ...],
        window_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self._prefixes = prefixes
        self._window_s = window_s
        self._clock = clock
        self._seen: dict[tuple[str, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(self._prefixes):
            return True
        key = (record.name, str(record.msg))
        now = self._clock()
        last = self._seen.get(key)
        if last is None:
            self._seen[key] = (now, 0)
            return True
        passed_at, dropped = last
        if now - passed_at < self._window_s:
            self._seen[key] = (passed_at, dropped + 1)
            return False
        self._seen[key] = (now, 0)
        if dropped:
            record.msg = f"{record.msg} (and {dropped} like it in the last {now - passed_at:.0f} s)"
        return True


def configure_logging() -> None:
    level = os.environ.get("LOG_LEVEL", "INFO").upper()
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("aiokafka").setLevel(logging.WARNING)
    repeats = RepeatLimit(("aiokafka",))
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RepeatLimit) for f in handler.filters):
            handler.addFilter(repeats)


def configure_tracing(service: str, settings: OtelSettings) -> None:
    """Install a tracer provider; export over OTLP/HTTP when an endpoint is configured."""
    if isinstance(trace.get_tracer_provider(), TracerProvider):
        return
    provider = TracerProvider(
        resource=Resource.create(
            {"service.name": f"docproc-{service}", "service.namespace": settings.service_namespace}
        )
    )
    if settings.exporter_otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(
            BatchSpanProcessor(OTLPSpanExporter(endpoint=settings.exporter_otlp_endpoint))
        )
    trace.set_tracer_provider(provider)
