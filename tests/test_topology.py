"""The topic -> consumer-group map is declared once (``docproc_common.bus.topics.SUBSCRIBERS``):
each service subscribes to exactly its topics there, under its own name (the consumer
group); the chart's consumer topics and KEDA triggers are checked against the same map
(tests/chart/test_chart.py, ``CONSUMED``)."""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator

import pytest
import yaml
from docproc_common.bus.topics import SUBSCRIBERS
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


@pytest.mark.parametrize("svc", SERVICES)
async def test_a_service_subscribes_to_its_topics_in_the_map(
    specs: dict[str, ServiceSpec], svc: str
) -> None:
    spec = specs[svc]
    assert spec.name == svc
    declared = {topic for topic, groups in SUBSCRIBERS.items() if svc in groups}
    assert {s.topic for s in spec.subscriptions} == declared


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
