"""What a failed sync stores, read back through every route that shows it: never the client's text.

botocore quotes the endpoint URL (userinfo, bucket and query string included) in its
messages, and git quotes the repository URL; a sync log and a failed file's row are
read by everyone who sees the collection. Stored: stage, class, advice; the service
log has the rest.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from docproc_common.db.models import DocumentStatus, KnowledgeBase, SyncSource
from docproc_sync.testing import SyncBed
from docproc_testing.servers import KeepAliveHandler, ThreadedServer

from .conftest import Client
from .test_git_sync import TOKEN, GitServer, Repo

pytestmark = pytest.mark.integration

KEYS = {"access_key_id": "AKIAEXAMPLE", "secret_access_key": "example"}
ADVICE = "check the source's configuration and credential, then run the sync again"
LISTING = """<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
<Name>acme-private-bucket</Name><Prefix></Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys>
<IsTruncated>false</IsTruncated>
<Contents><Key>dropped.md</Key><ETag>"e1"</ETag><Size>40</Size></Contents>
<Contents><Key>cut.md</Key><ETag>"e2"</ETag><Size>40</Size></Contents>
</ListBucketResult>"""


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class BrokenStore(ThreadedServer):
    """An S3-compatible server that lists two objects and fails both reads: one connection
    dropped before any answer, one body cut short."""

    def __init__(self) -> None:
        super().__init__(self._handler())

    @staticmethod
    def _handler() -> type[BaseHTTPRequestHandler]:
        class Handler(KeepAliveHandler):
            def do_GET(self) -> None:  # noqa: N802
                if "list-type=2" in self.path:
                    body = LISTING.encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                elif self.path.endswith("/cut.md"):
                    self.send_response(200)
                    self.send_header("Content-Length", "40")
                    self.send_header("ETag", '"e2"')
                    self.end_headers()
                    self.wfile.write(b"# cut")
                    self.close_connection = True
                else:
                    self.close_connection = True  # no answer at all

        return Handler


@pytest.fixture
def store() -> Iterator[BrokenStore]:
    with BrokenStore() as server:
        yield server


async def s3_source(bed: SyncBed, endpoint: str) -> tuple[KnowledgeBase, SyncSource]:
    """Written as a row, not through the API, which refuses a credential in a URL: a source
    stored before that check, or by an operator, still must not leak one."""
    kb = await bed.kb()
    secret = await bed.secret("aws_credentials", KEYS)
    config = {"bucket": "acme-private-bucket", "endpoint_url": endpoint}
    return kb, await bed.source(kb, "s3", config, secret_id=secret)


async def shown(client: Client, kb: KnowledgeBase, src: SyncSource) -> str:
    """Every route that shows a sync's errors, as the collection's viewer reads them."""
    c = client()
    answers = [
        await c.get(f"/kb/{kb.id}/sync-sources/{src.id}/logs"),
        await c.get(f"/rag/sync/logs?source_id={src.id}"),
        await c.get(f"/kb/{kb.id}/documents"),
    ]
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert all(a.json()["items"] for a in answers[:2])
    return "\n".join(a.text for a in answers)


def logged(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(
        f"{r.getMessage()}\n{logging.Formatter().formatException(r.exc_info)}"
        for r in caplog.records
        if r.name == "docproc_sync.service" and r.exc_info
    )


class TestCredentialsInAnAddress:
    @pytest.mark.parametrize(
        ("connector", "config", "secret"),
        [
            ("git", {"repo_url": "http://x-access-token:ghp_SECRET1@127.0.0.1:9/r.git"}, None),
            ("git", {"repo_url": "http://127.0.0.1:9/r.git?private_token=SECRET2"}, None),
            (
                "s3",
                {"bucket": "acme-docs", "endpoint_url": "http://AKIA:SECRET3@127.0.0.1:9"},
                KEYS,
            ),
        ],
    )
    async def test_a_stored_source_with_a_credential_in_its_url_is_refused_unseen(
        self,
        client: Client,
        bed: SyncBed,
        connector: str,
        config: dict[str, Any],
        secret: dict[str, str] | None,
    ) -> None:
        kb = await bed.kb()
        secret_id = await bed.secret("aws_credentials", secret) if secret else None
        src = await bed.source(kb, connector, config, secret_id=secret_id)
        log = await bed.run(src.id)
        assert log.status == "error"
        assert (log.error_message or "").startswith(
            "The source's configuration is no longer accepted: "
        ), log.error_message
        assert "SECRET" not in await shown(client, kb, src)
        assert await bed.documents(kb.id) == []


class TestClientFailures:
    async def test_an_unreachable_endpoint_is_stage_class_and_advice(
        self, client: Client, bed: SyncBed, caplog: pytest.LogCaptureFixture
    ) -> None:
        endpoint = f"http://127.0.0.1:{closed_port()}"
        kb, src = await s3_source(bed, endpoint)
        with caplog.at_level(logging.WARNING, "docproc_sync.service"):
            log = await bed.run(src.id)
        assert log.status == "error"
        assert log.error_message == (
            f"The source could not be synced (EndpointConnectionError) - {ADVICE}. "
            "The worker log has the full error."
        )
        api = await shown(client, kb, src)
        assert endpoint not in api and "list-type" not in api
        assert endpoint in logged(caplog), "the service log has botocore's own text"

    async def test_a_failed_read_is_its_own_row_without_the_endpoint(
        self,
        client: Client,
        bed: SyncBed,
        store: BrokenStore,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        kb, src = await s3_source(bed, store.url)
        with caplog.at_level(logging.WARNING, "docproc_sync.service"):
            log = await bed.run(src.id)
        assert (log.status, log.failed) == ("done", 2), log.error_message
        docs = {d.filename: d for d in await bed.documents(kb.id)}
        assert {d.status for d in docs.values()} == {DocumentStatus.ERROR}
        for name, kind in (
            ("dropped.md", "ConnectionClosedError"),
            ("cut.md", "IncompleteReadError"),
        ):
            assert docs[name].error_message == (
                f"The document could not be synced ({kind}) - {ADVICE}. "
                "The worker log has the full error."
            )
        host = store.url.removeprefix("http://")
        assert host not in await shown(client, kb, src)
        assert host in logged(caplog)

    async def test_git_refusing_the_token_is_named_without_its_url(
        self,
        client: Client,
        bed: SyncBed,
        tmp_path: Path,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        server = GitServer(Repo(tmp_path).root, TOKEN)
        try:
            kb = await bed.kb()
            secret = await bed.secret("git_token", {"token": "ghp_wrong"})
            config = {"repo_url": f"{server.url}/repo.git", "branch": "main"}
            src = await bed.source(kb, "git", config, secret_id=secret)
            with caplog.at_level(logging.WARNING, "docproc_sync.service"):
                log = await bed.run(src.id)
        finally:
            server.close()
        assert log.status == "error"
        assert log.error_message == (
            f"The source could not be synced (git ls-remote: authentication refused) - {ADVICE}. "
            "The worker log has the full error."
        )
        host = server.url.removeprefix("http://")
        assert host not in await shown(client, kb, src)
        assert f"'{server.url}" in logged(caplog), "git's own words are logged"
