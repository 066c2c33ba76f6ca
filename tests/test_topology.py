"""The topic -> consumer-group map is declared once (``docproc_common.bus.topics.SUBSCRIBERS``):
each service's subscriptions are derived from it (``subscriptions``: a service gives a handler
per event type, the map which topics reach it, under its own name as the consumer group), and
the chart reads the map's generated ``consumers.yaml`` (its KEDA triggers, scalers and lag
alerts: tests/chart/test_chart.py)."""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator

import pytest
import yaml
from docproc_common.bus.topics import SUBSCRIBERS, consumed_by, consumers_yaml
from docproc_common.runtime import Runtime, ServiceSpec
from docproc_common.settings import DatabaseSettings, Settings
from docproc_testing.infra import find_repo_root

SERVICES = ("upload", "parser", "embedder", "sync", "teardown")


@pytest.fixture(scope="module")
async def specs() -> AsyncIterator[dict[str, ServiceSpec]]:
    # building a service opens no connection; the URL only has to parse
    settings = Settings(database=DatabaseSettings(url="postgresql+asyncpg://u:p@127.0.0.1:1/db"))
    runtime = Runtime.create(settings)
    built = {svc: importlib.import_module(f"docproc_{svc}.app").build(runtime) for svc in SERVICES}
    try:
        yield built
    finally:
        for spec in built.values():
            for close in spec.on_shutdown:
                await close()
        await runtime.close()


def test_every_consumer_group_in_the_map_is_a_service() -> None:
    assert {group for groups in SUBSCRIBERS.values() for group in groups} <= set(SERVICES)


@pytest.mark.parametrize("svc", SERVICES)
async def test_a_service_subscribes_to_its_topics_in_the_map(
    specs: dict[str, ServiceSpec], svc: str
) -> None:
    """Building a service derives its subscriptions from the map (``subscriptions`` refuses a
    handler without a topic or a topic without a handler); none writes its own."""
    spec = specs[svc]
    assert spec.name == svc
    assert [s.topic for s in spec.subscriptions] == consumed_by(svc)


def test_no_service_writes_a_subscription_of_its_own() -> None:
    """A service names its handlers; the topics they receive are the map's alone."""
    written = [
        str(path.relative_to(find_repo_root()))
        for path in find_repo_root().glob("services/*/src/**/*.py")
        if "Subscription(" in path.read_text()
    ]
    assert not written, f"build them with docproc_common.bus.topics.subscriptions: {written}"


def test_the_charts_consumer_topics_are_generated_from_the_map() -> None:
    chart_file = find_repo_root() / "deploy/helm/docproc/consumers.yaml"
    assert chart_file.read_text() == consumers_yaml(), (
        "deploy/helm/docproc/consumers.yaml is not the topic map's: run make chart-consumers"
    )


#: The chart's secret that carries each key (values.yaml ``services.<svc>.secrets``).
CHART_SECRET = {"auth": "jwt", "vault": "vault"}


@pytest.mark.parametrize("svc", SERVICES)
def test_the_chart_hands_a_service_exactly_the_keys_it_uses(
    specs: dict[str, ServiceSpec], svc: str
) -> None:
    """A key a service uses and the chart does not hand it would stop it from starting
    (``ServiceSpec.keys``); a key it does not use is one more place it can leak from."""
    values = yaml.safe_load((find_repo_root() / "deploy/helm/docproc/values.yaml").read_text())
    handed = set(values["services"][svc]["secrets"]) & set(CHART_SECRET.values())
    assert handed == {CHART_SECRET[key] for key in specs[svc].keys}
