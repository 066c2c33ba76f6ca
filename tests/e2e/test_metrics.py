"""What an SRE scrapes: after a pipeline run, every stage exports the series the dashboards use."""

from __future__ import annotations

import re

import httpx
import pytest
from docproc_testing.api import create_kb

from tests.e2e.harness import Cluster
from tests.e2e.test_pipeline import make_pdf, wait_complete

pytestmark = [pytest.mark.e2e, pytest.mark.integration]


def scrape(cluster: Cluster, service: str) -> dict[str, float]:
    body = httpx.get(f"http://127.0.0.1:{cluster.services[service].port}/metrics", timeout=10).text
    out: dict[str, float] = {}
    for line in body.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def value(series: dict[str, float], pattern: str) -> float:
    matches = [v for k, v in series.items() if re.fullmatch(pattern, k)]
    assert matches, f"no series matches {pattern}"
    return sum(matches)


def test_pipeline_series_after_a_run(cluster: Cluster) -> None:
    with cluster.admin() as client:
        kb = create_kb(client)
        pdf = make_pdf(["Metrics page one.", "Metrics page two.", "Metrics page three."])
        assert (
            client.post(f"/kb/{kb['id']}/documents", files={"file": ("m.pdf", pdf)}).status_code
            == 202
        )
        assert (
            client.post(f"/kb/{kb['id']}/documents", files={"file": ("m.exe", b"MZ")}).status_code
            == 400
        )
        wait_complete(client, kb["id"])

    upload = scrape(cluster, "upload")
    assert value(upload, r'docproc_upload_upload_size_bytes_count\{kind="knowledge_base"\}') >= 1
    assert value(upload, r'docproc_upload_rejections_total\{rule="unsupported_type"\}') >= 1
    assert "docproc_upload_documents_stuck" in upload
    assert value(upload, r"docproc_upload_outbox_backlog") >= 0
    assert "docproc_upload_outbox_oldest_age_seconds" in upload

    parser = scrape(cluster, "parser")
    assert value(parser, r'docproc_parser_documents_total\{outcome="ok",stage="parse"\}') >= 1
    assert value(parser, r"docproc_parser_pages_total") >= 3
    assert value(parser, r'docproc_parser_stage_seconds_count\{stage="parse"\}') >= 1
    assert value(parser, r'docproc_parser_stage_seconds_count\{stage="chunk"\}') >= 1
    assert (
        value(
            parser,
            r'docproc_parser_messages_total\{outcome="ok",topic="docproc\.documents\.accepted\.v1"\}',
        )
        >= 1
    )
    assert any(k.startswith("docproc_parser_consumer_lag{") for k in parser)

    embedder = scrape(cluster, "embedder")
    assert value(embedder, r"docproc_embedder_chunks_total") >= 1
    assert value(embedder, r'docproc_embedder_embedding_tokens_total\{provider="local"\}') >= 10
    assert value(embedder, r'docproc_embedder_stage_seconds_count\{stage="embed"\}') >= 1
    assert value(embedder, r'docproc_embedder_stage_seconds_count\{stage="write"\}') >= 1
    assert value(embedder, r'docproc_embedder_documents_total\{outcome="ok",stage="index"\}') >= 1
    assert (
        value(
            embedder,
            r'docproc_embedder_messages_total\{outcome="ok",topic="docproc\.documents\.parsed\.v1"\}',
        )
        >= 1
    )

    teardown = scrape(cluster, "teardown")
    assert "docproc_teardown_reservations_pending" in teardown
    assert "docproc_teardown_reservation_oldest_age_seconds" in teardown
