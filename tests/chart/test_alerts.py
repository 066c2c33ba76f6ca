"""The chart's alerts, evaluated by Prometheus' own rule engine (`promtool`, Debian's prometheus).

The PrometheusRule is rendered from the chart and its groups written to a rules file;
`promtool check rules` validates it and `promtool test rules` replays series through
every alert the chart renders (one per service where the alert is per service): each
must fire on the situation it is for, with its labels and annotations, and stay silent
on the healthy (or recovering) case next to it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import Doc, render_docs

PROMTOOL = shutil.which("promtool")
pytestmark = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool is not installed (Debian package prometheus)"
)
NS = "docproc"
VALUE = re.compile(r"\{\{ \$value[^}]*\}\}")  # {{ $value }}, {{ $value | humanize }}, ...


@dataclass(frozen=True)
class Case:
    """Series to replay, when to look, and whether the alert must be firing then."""

    series: dict[str, str]
    at: str
    fires: bool
    value: str = ""  # $value as the description renders it, when it fires
    labels: tuple[tuple[str, str], ...] = ()  # the labels the alert keeps from its series


# Per alert: the situation it is for, and the healthy (or recovering) case beside it.
def _dlq(svc: str) -> list[Case]:
    metric = f'docproc_{svc}_messages_total{{namespace="{NS}",topic="t",outcome="%s"}}'
    return [
        Case({metric % "dlq": "0 0 0 1 1 1 1 1"}, "6m", True, "1"),
        Case({metric % "dlq": "3x20", metric % "ok": "0+5x20"}, "16m", False),
    ]


def _lag(svc: str) -> list[Case]:
    metric = f'docproc_{svc}_consumer_lag{{namespace="{NS}",topic="t",partition="0"}}'
    return [
        Case({metric: "2000+10x40"}, "35m", True, "2.35k"),  # growing for 30 minutes
        Case({metric: "5000-100x40"}, "35m", False),  # large but draining
        Case({metric: "500x40"}, "35m", False),  # steady under the threshold
    ]


def _outbox(svc: str) -> list[Case]:
    metric = f'docproc_{svc}_outbox_oldest_age_seconds{{namespace="{NS}"}}'
    return [
        Case({metric: "400x20"}, "10m", True, "6m 40s"),
        Case({metric: "400x20"}, "3m", False),  # not yet for 5m
        Case({metric: "100x20"}, "10m", False),
    ]


def _stuck(_svc: str) -> list[Case]:
    metric = f'docproc_upload_documents_stuck{{namespace="{NS}"}}'
    return [Case({metric: "2x30"}, "20m", True, "2"), Case({metric: "0x30"}, "20m", False)]


def _teardown(_svc: str) -> list[Case]:
    metric = f'docproc_teardown_reservation_oldest_age_seconds{{namespace="{NS}"}}'
    return [
        Case({metric: "8000x30"}, "15m", True, "2h 13m 20s"),
        Case({metric: "100x30"}, "15m", False),
    ]


def _retrieval(_svc: str) -> list[Case]:
    """The gauge as two upload replicas export it (the same figure from the database)."""
    metric = (
        f'docproc_retrieval_ndcg_at_10{{namespace="{NS}",collection_id="kb-1",mode="hybrid",'
        'pod="%s"}'
    )
    kept = (("collection_id", "kb-1"), ("mode", "hybrid"))

    def both(values: str) -> dict[str, str]:
        return {metric % "a": values, metric % "b": values}

    return [
        Case(both("0.7x30 0.6x30"), "50m", True, "0.600", kept),  # a settings change cost 0.1
        Case(both("0.7x30 0.6x30"), "33m", False),  # not yet for 5m
        Case(both("0.7x30 0.68x30"), "50m", False),  # within the margin
        Case(both("0.6x30 0.7x30"), "50m", False),  # it got better
    ]


SCENARIOS: dict[str, Callable[[str], list[Case]]] = {
    "DocprocDLQGrowing": _dlq,
    "DocprocConsumerLagNotDraining": _lag,
    "DocprocOutboxAgeHigh": _outbox,
    "DocprocDocumentsStuck": _stuck,
    "DocprocTeardownReservationsStale": _teardown,
    "DocprocRetrievalQualityDropped": _retrieval,
}


@pytest.fixture(scope="module")
def rules(helm: Path) -> list[Doc]:
    (rule,) = [
        d
        for d in render_docs(helm, "--set", "metrics.prometheusRule.enabled=true")
        if d["kind"] == "PrometheusRule"
    ]
    return list(rule["spec"]["groups"])


def _expected(rule: Doc, case: Case) -> dict[str, Any]:
    labels = {"namespace": NS, **rule["labels"], **dict(case.labels)}
    if "by (namespace, topic)" in rule["expr"]:
        labels["topic"] = "t"
    annotations = {}
    for k, v in rule["annotations"].items():
        v = VALUE.sub(case.value, v).replace("{{ $labels.topic }}", "t")
        for label, value in case.labels:
            v = v.replace(f"{{{{ $labels.{label} }}}}", value)
        annotations[k] = v
    return {"exp_labels": labels, "exp_annotations": annotations}


def _tests(groups: list[Doc]) -> list[dict[str, Any]]:
    tests = []
    for group in groups:
        for rule in group["rules"]:
            for case in SCENARIOS[rule["alert"]](rule["labels"]["service"]):
                tests.append(
                    {
                        "name": f"{rule['alert']} {rule['labels']['service']} {case}",
                        "interval": "1m",
                        "input_series": [
                            {"series": s, "values": v} for s, v in case.series.items()
                        ],
                        "alert_rule_test": [
                            {
                                "eval_time": case.at,
                                "alertname": rule["alert"],
                                "exp_alerts": [_expected(rule, case)] if case.fires else [],
                            }
                        ],
                    }
                )
    return tests


def _promtool(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None
    return subprocess.run(
        [PROMTOOL, *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def test_every_rendered_alert_has_scenarios(rules: list[Doc]) -> None:
    alerts = [r for g in rules for r in g["rules"]]
    assert {r["alert"] for r in alerts} == set(SCENARIOS)
    # one per consumer for the bus alerts, as rendered by the chart's defaults
    assert sum(r["alert"] == "DocprocDLQGrowing" for r in alerts) == 4


def test_the_rules_pass_promtool_check_and_every_alert_fires_only_when_it_should(
    rules: list[Doc], tmp_path: Path
) -> None:
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": rules}))
    checked = _promtool("check", "rules", "rules.yaml", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tests = _tests(rules)
    (tmp_path / "tests.yaml").write_text(
        yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": tests})
    )
    result = _promtool("test", "rules", "tests.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert sum(1 for t in tests if t["alert_rule_test"][0]["exp_alerts"]) == 15


def test_a_scenario_that_should_not_fire_would_be_caught(rules: list[Doc], tmp_path: Path) -> None:
    """The harness itself: expecting silence where the alert fires makes promtool fail."""
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": rules}))
    broken = [t for t in _tests(rules) if t["alert_rule_test"][0]["exp_alerts"]][:1]
    broken[0]["alert_rule_test"][0]["exp_alerts"] = []
    (tmp_path / "tests.yaml").write_text(
        yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": broken})
    )
    assert _promtool("test", "rules", "tests.yaml", cwd=tmp_path).returncode != 0


DASHBOARD = Path(__file__).resolve().parents[2] / "deploy/helm/docproc/dashboards/pipeline.json"


def _counter_panel_tests(expected: float) -> list[dict[str, Any]]:
    """One promtool test per dashboard query over a counter, on a deployment that has not
    handled anything yet (no series at all), expecting the sample ``expected``."""
    exprs = sorted(
        {
            t["expr"]
            for p in json.loads(DASHBOARD.read_text())["panels"]
            for t in p.get("targets", [])
            if "_total" in t["expr"]
        }
    )
    assert exprs
    return [
        {
            "name": expr,
            "interval": "1m",
            "input_series": [],
            "promql_expr_test": [
                {
                    "expr": expr.replace("$namespace", NS).replace("$__rate_interval", "5m"),
                    "eval_time": "10m",
                    "exp_samples": [{"labels": "{}", "value": expected}],
                }
            ],
        }
        for expr in exprs
    ]


def _run_query_tests(
    tests: list[dict[str, Any]], tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump({"rule_files": [], "tests": tests}))
    return _promtool("test", "rules", "tests.yaml", cwd=tmp_path)


def test_every_counter_panel_shows_zero_before_the_first_event(tmp_path: Path) -> None:
    """A counter series appears only once its label values are first used, so a panel
    over one said "No data" on a healthy deployment that had not yet failed, dead-lettered
    or refused anything (found by the deploy smoke): each answers 0 instead."""
    result = _run_query_tests(_counter_panel_tests(0), tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_counter_panel_with_no_data_would_be_caught(tmp_path: Path) -> None:
    """The harness itself: expecting another value than the query gives makes promtool fail."""
    result = _run_query_tests(_counter_panel_tests(1)[:1], tmp_path)
    assert result.returncode != 0
