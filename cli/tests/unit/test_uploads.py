"""``docproc ingest``'s rules without a server: what a busy answer asks for, sending the
same file again after it, giving up, and what a knowledge base already holds."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from docproc_cli import main, uploads
from typer.testing import CliRunner

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
BUSY = {"error": {"code": "UNAVAILABLE", "message": "Too many documents", "details": {}}}


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("7", 7.0),
        (" 12 ", 12.0),
        ("0", uploads.MIN_RETRY_AFTER_S),
        ("3600", uploads.MAX_RETRY_AFTER_S),
        (format_datetime(NOW + timedelta(seconds=30), usegmt=True), 30.0),
        (format_datetime(NOW - timedelta(minutes=5), usegmt=True), uploads.MIN_RETRY_AFTER_S),
        (format_datetime(NOW + timedelta(hours=2), usegmt=True), uploads.MAX_RETRY_AFTER_S),
        (None, uploads.DEFAULT_WAIT_S),
        ("", uploads.DEFAULT_WAIT_S),
        ("soon", uploads.DEFAULT_WAIT_S),
        ("-5", uploads.DEFAULT_WAIT_S),
    ],
)
def test_retry_after_is_seconds_or_a_date_within_bounds(header: str | None, seconds: float) -> None:
    assert uploads.retry_after_s(header, now=NOW) == seconds


@pytest.mark.parametrize(
    ("response", "wait"),
    [
        (httpx.Response(503, json=BUSY, headers={"Retry-After": "7"}), 7.0),
        (httpx.Response(503, json=BUSY), uploads.DEFAULT_WAIT_S),
        # a proxy's 503, another error code, another status: not the server saying "busy"
        (httpx.Response(503, text="<html>Service Unavailable</html>"), None),
        (
            httpx.Response(
                503,
                json={"error": {"code": "INTERNAL", "message": "x"}},
                headers={"Retry-After": "7"},
            ),
            None,
        ),
        (httpx.Response(500, json=BUSY, headers={"Retry-After": "7"}), None),
        (httpx.Response(202, json={}), None),
    ],
)
def test_only_the_servers_busy_answer_is_waited_out(
    response: httpx.Response, wait: float | None
) -> None:
    assert uploads.busy_wait_s(response, now=NOW) == wait


def _server(answers: list[int], bodies: list[bytes]) -> httpx.Client:
    """A stand-in intake answering ``answers`` in turn, recording each upload's bytes."""

    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append(request.read())
        status = answers.pop(0)
        if status == 503:
            return httpx.Response(503, json=BUSY, headers={"Retry-After": "7"})
        return httpx.Response(status, json={"status": "processing"})

    return httpx.Client(base_url="http://docproc", transport=httpx.MockTransport(answer))


def test_a_busy_answer_sends_the_same_file_again_after_the_wait(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"otters " * 100)
    bodies: list[bytes] = []
    waits: list[float] = []
    with _server([503, 503, 202], bodies) as client:
        r = uploads.send(client, "k1", path, max_wait_s=60, waiting=waits.append)
    assert r.status_code == 202
    assert waits == [7.0, 7.0]
    sent = [body.split(b"\r\n\r\n", 1)[1].rsplit(b"\r\n--", 1)[0] for body in bodies]
    assert sent == [b"otters " * 100] * 3  # each time from its first byte


def test_it_gives_up_once_one_file_has_waited_max_wait(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"otters")
    waits: list[float] = []
    with _server([503] * 5, []) as client, pytest.raises(uploads.StayedBusyError) as busy:
        uploads.send(client, "k1", path, max_wait_s=20, waiting=waits.append)
    assert waits == [7.0, 7.0]  # a third wait would pass 20 s
    assert busy.value.waited_s == 14.0
    assert busy.value.response.status_code == 503


def _doc(name: str, data: bytes | None, status: str = "done") -> dict[str, Any]:
    digest = hashlib.sha256(data).hexdigest() if data is not None else None
    return {"filename": name, "content_hash": digest, "status": status}


def test_held_pages_through_the_listing_and_leaves_out_failed_and_unhashed() -> None:
    pages = {
        None: {"items": [_doc("a.txt", b"a"), _doc("b.txt", b"b", "error")], "next_cursor": "c1"},
        "c1": {
            "items": [_doc("c.txt", b"c", "processing"), _doc("old.txt", None)],
            "next_cursor": None,
        },
    }

    busy = ["c1"]  # the second page is busy once

    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.params["limit"] == str(uploads.PAGE_SIZE)
        cursor = request.url.params.get("cursor")
        if cursor in busy:
            busy.remove(cursor)
            return httpx.Response(503, json=BUSY, headers={"Retry-After": "3"})
        return httpx.Response(200, json=pages[cursor])

    waits: list[float] = []
    with httpx.Client(base_url="http://docproc", transport=httpx.MockTransport(answer)) as client:
        keys = uploads.held(client, "k1", main._check, max_wait_s=60, waiting=waits.append)
    assert waits == [3.0]  # the busy page was asked again, not the listing given up
    assert keys == {
        ("a.txt", hashlib.sha256(b"a").hexdigest()),
        ("c.txt", hashlib.sha256(b"c").hexdigest()),
    }


def test_ingest_skips_what_the_base_holds_and_counts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same name and bytes: skipped; same name, other bytes: uploaded beside it."""
    (tmp_path / "same.txt").write_bytes(b"kept")
    (tmp_path / "changed.txt").write_bytes(b"new words")
    (tmp_path / "new.txt").write_bytes(b"fresh")
    (tmp_path / "photo.xyz").write_bytes(b"?")
    listing = [_doc("same.txt", b"kept"), _doc("changed.txt", b"old words")]
    uploaded: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path.endswith("/kb"):
            return httpx.Response(200, json=[{"id": "k1", "collection_name": "default"}])
        if path.endswith("/documents") and request.method == "GET":
            return httpx.Response(200, json={"items": listing, "next_cursor": None})
        if path.endswith("/documents"):
            uploaded.append(request.read().split(b'filename="')[1].split(b'"')[0].decode())
            return httpx.Response(202, json={})
        state = {"indexing_status": "complete", "document_count": 4}
        return httpx.Response(200, json=state | {"indexed_count": 4, "failed_count": 0})

    monkeypatch.setattr(
        main,
        "_operator_client",
        lambda url: httpx.Client(base_url=url + "/api/v1", transport=httpx.MockTransport(answer)),
    )
    result = CliRunner().invoke(main.app, ["ingest", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert sorted(uploaded) == ["changed.txt", "new.txt"]
    assert "2 uploaded, 1 already present, 1 skipped (unsupported type)" in result.output


def test_ingest_that_gives_up_exits_1_naming_what_it_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt").write_bytes(b"a")
    (tmp_path / "b.txt").write_bytes(b"b")
    answers = [202]  # a.txt goes in, then the server stays busy

    def answer(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path.endswith("/kb"):
            return httpx.Response(200, json=[{"id": "k1", "collection_name": "default"}])
        if request.method == "GET":
            return httpx.Response(200, json={"items": [], "next_cursor": None})
        if answers:
            return httpx.Response(answers.pop(), json={})
        return httpx.Response(503, json=BUSY, headers={"Retry-After": "7"})

    monkeypatch.setattr(
        main,
        "_operator_client",
        lambda url: httpx.Client(base_url=url + "/api/v1", transport=httpx.MockTransport(answer)),
    )
    result = CliRunner().invoke(main.app, ["ingest", str(tmp_path), "--max-wait", "0"])
    assert result.exit_code == 1, result.output
    output = " ".join(result.output.split())
    assert "still busy" in output and "Too many documents" in output
    assert "1 uploaded, 0 already present" in output and "Run the same command again" in output


def _ingest_on_a_busy_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listing_busy: int, polls_busy: int, *args: str
) -> tuple[Any, list[str]]:
    """``docproc ingest`` of one file against a stand-in API whose listing and indexing
    poll answer "busy" so many times first (the waits are not slept); its result and the
    files uploaded."""
    (tmp_path / "a.txt").write_bytes(b"a")
    left = {"listing": listing_busy, "poll": polls_busy}
    uploaded: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path.endswith("/kb"):
            return httpx.Response(200, json=[{"id": "k1", "collection_name": "default"}])
        if path.endswith("/documents") and request.method == "POST":
            uploaded.append(request.read().split(b'filename="')[1].split(b'"')[0].decode())
            return httpx.Response(202, json={})
        which = "listing" if path.endswith("/documents") else "poll"
        if left[which]:
            left[which] -= 1
            return httpx.Response(503, json=BUSY, headers={"Retry-After": "1"})
        if which == "listing":
            return httpx.Response(200, json={"items": [], "next_cursor": None})
        state = {"indexing_status": "complete", "document_count": 1}
        return httpx.Response(200, json=state | {"indexed_count": 1, "failed_count": 0})

    monkeypatch.setattr(
        main,
        "_operator_client",
        lambda url: httpx.Client(base_url=url + "/api/v1", transport=httpx.MockTransport(answer)),
    )
    monkeypatch.setattr(main.time, "sleep", lambda _: None)
    return CliRunner().invoke(main.app, ["ingest", str(tmp_path), *args]), uploaded


def test_ingest_waits_out_a_busy_listing_and_a_busy_indexing_poll(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, uploaded = _ingest_on_a_busy_api(tmp_path, monkeypatch, 1, 2)
    assert result.exit_code == 0, result.output
    assert uploaded == ["a.txt"]
    assert "1 uploaded" in result.output and "1 indexed" in result.output


def test_ingest_gives_up_on_a_listing_that_stays_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, uploaded = _ingest_on_a_busy_api(tmp_path, monkeypatch, 5, 0, "--max-wait", "2")
    assert result.exit_code == 1, result.output
    output = " ".join(result.output.split())
    assert "still busy" in output and "list what the collection holds" in output
    assert uploaded == []
