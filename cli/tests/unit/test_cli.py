"""The CLI's defaults and refusals that need no server: the default collection is ``default``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from docproc_cli import main, mcp_relay
from docproc_common.settings import get_settings
from typer.testing import CliRunner

runner = CliRunner()


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, Any]]:
    """The API calls the client commands make, answered by a stand-in server."""
    calls: list[tuple[str, str, Any]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        body = (
            json.loads(request.content)
            if request.headers.get("content-type") == ("application/json")
            else None
        )
        calls.append((request.method, request.url.path, body))
        if request.url.path.endswith("/kb") and request.method == "GET":
            return httpx.Response(200, json=[])
        if request.url.path.endswith("/kb"):
            return httpx.Response(
                201, json={"id": "k1", "collection_name": body["collection_name"]}
            )
        if request.url.path.endswith("/documents") and request.method == "GET":
            return httpx.Response(200, json={"items": [], "total": 0, "next_cursor": None})
        if request.url.path.endswith("/rag/search"):
            return httpx.Response(200, json={"results": []})
        if request.url.path.endswith("/ingestion"):
            return httpx.Response(
                200,
                json={
                    "indexing_status": "complete",
                    "indexed_count": 1,
                    "failed_count": 0,
                    "document_count": 1,
                },
            )
        return httpx.Response(202, json={})

    def client(url: str) -> httpx.Client:
        return httpx.Client(base_url=url + "/api/v1", transport=httpx.MockTransport(answer))

    monkeypatch.setattr(main, "_operator_client", client)
    return calls


def test_search_defaults_to_the_default_collection(sent: list[tuple[str, str, Any]]) -> None:
    result = runner.invoke(main.app, ["search", "capybara"])
    assert result.exit_code == 0, result.output
    (call,) = sent
    assert call[1] == "/api/v1/rag/search"
    assert call[2]["collections"] == ["default"]
    assert "mode" not in call[2]  # the server's default (hybrid)


def test_search_sends_its_mode(sent: list[tuple[str, str, Any]]) -> None:
    result = runner.invoke(main.app, ["search", "TCK-48213", "--mode", "hybrid"])
    assert result.exit_code == 0, result.output
    assert sent[0][2]["mode"] == "hybrid"


def test_ingest_defaults_to_the_default_collection(
    sent: list[tuple[str, str, Any]], tmp_path: Path
) -> None:
    (tmp_path / "a.md").write_text("# A")
    result = runner.invoke(main.app, ["ingest", str(tmp_path / "a.md")])
    assert result.exit_code == 0, result.output
    created = [body for method, path, body in sent if method == "POST" and path.endswith("/kb")]
    assert created[0]["collection_name"] == "default"
    assert "collection default" in result.output


def test_yes_without_confirm_operator_is_refused() -> None:
    result = runner.invoke(main.app, ["rag-unfiled-provenance", "handbook", "--yes"])
    assert result.exit_code == 2
    assert "--confirm-operator" in result.output


def test_rag_sync_gdrive_needs_the_deployment_key_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("GOOGLE_DRIVE_CREDENTIALS_FILE", raising=False)
    result = runner.invoke(main.app, ["rag-sync-gdrive", "1AbC"])
    assert result.exit_code == 2
    assert "GOOGLE_DRIVE_CREDENTIALS_FILE" in result.output
    (tmp_path / "key.json").write_text("not json")
    monkeypatch.setenv("GOOGLE_DRIVE_CREDENTIALS_FILE", str(tmp_path / "key.json"))
    result = runner.invoke(main.app, ["rag-sync-gdrive", "1AbC"])
    assert result.exit_code == 2
    assert "no readable JSON key file" in result.output


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7"])
def test_dev_refuses_to_expose_its_sign_in(host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The development sign-in makes anyone who reaches the port an app admin: docproc dev
    listens beyond loopback only with it off (nothing is started before the refusal)."""
    from docproc_cli import embedded

    def started() -> str:
        raise AssertionError("the embedded database started before the refusal")

    monkeypatch.setattr(embedded, "start_embedded_postgres", started)
    monkeypatch.delenv("DATABASE__URL", raising=False)
    result = runner.invoke(main.app, ["dev", "--host", host])
    assert result.exit_code == 2, result.output
    assert f"listen on {host}" in result.output and "--no-dev-sign-in" in result.output


def test_the_client_commands_need_a_key_outside_dev(monkeypatch: pytest.MonkeyPatch) -> None:
    main.get_settings.cache_clear()
    monkeypatch.delenv("ENV")
    monkeypatch.delenv("AUTH__JWT_SECRET", raising=False)
    try:
        result = runner.invoke(main.app, ["token", "--user", "ana"])
    finally:
        main.get_settings.cache_clear()
    assert result.exit_code == 1
    assert "AUTH__JWT_SECRET is not set" in result.output


def test_mcp_needs_a_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DOCPROC_TOKEN", raising=False)
    result = runner.invoke(main.app, ["mcp", "--url", "http://127.0.0.1:9"])
    assert result.exit_code == 2
    assert "DOCPROC_TOKEN is not set" in result.stderr


@pytest.mark.parametrize(
    ("url", "endpoint"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/mcp"),
        ("https://docproc.example/", "https://docproc.example/mcp"),
        ("https://docproc.example/mcp", "https://docproc.example/mcp"),
    ],
)
def test_mcp_relays_to_the_deployments_mcp(url: str, endpoint: str) -> None:
    assert mcp_relay.endpoint(url) == endpoint


def test_rag_ingest_says_how_many_files_were_rechunked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from docproc_cli import operator

    done = operator.Totals(ingested=3, rechunked=2, failed=1)
    monkeypatch.setattr(main, "_operator", lambda _work: done)
    (tmp_path / "a.md").write_text("# A")
    result = runner.invoke(main.app, ["rag-ingest", str(tmp_path / "a.md"), "-c", "handbook"])
    assert result.exit_code == 2  # a file failed
    assert "3 ingested (2 re-chunked), 1 failed into handbook" in result.output


@pytest.mark.parametrize(
    ("env", "says"),
    [
        (
            {"STORAGE__BACKEND": "local"},
            ["storage backend: local", "encryption at rest: the volume's own (local backend)"],
        ),
        (
            {"STORAGE__BACKEND": "s3", "STORAGE__S3_SSE": "AES256"},
            ["storage backend: s3", "encryption at rest: on, AES256"],
        ),
        (
            {
                "STORAGE__BACKEND": "s3",
                "STORAGE__S3_SSE": "aws:kms",
                "STORAGE__S3_KMS_KEY_ID": "k1",
            },
            ["storage backend: s3", "encryption at rest: on, aws:kms (KMS key k1)"],
        ),
    ],
    ids=["local", "sse-s3", "sse-kms"],
)
def test_doctor_says_which_storage_backend_and_whether_it_encrypts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: dict[str, str], says: list[str]
) -> None:
    """The seed: ``doctor`` tells which backend a running deployment uses and whether
    encryption at rest is on."""
    monkeypatch.setenv("DOCPROC_HOME", str(tmp_path))
    for name in ("STORAGE__S3_SSE", "STORAGE__S3_KMS_KEY_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("STORAGE__S3_BUCKET", "docproc-files")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()  # the process's settings are read once: read these
    try:
        result = runner.invoke(main.app, ["doctor"])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for line in says:
        assert line in lines
