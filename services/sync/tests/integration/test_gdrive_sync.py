"""Google Drive sources against the strict Drive stand-in over HTTP: the real client, the real
JWT grant, change signals and the Changes API, deletion, moves, hostile names, credentials,
listings cut short, shared drives, and the route's refusals."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from docproc_common import vault
from docproc_common.db.models import DocumentStatus, KnowledgeBase, SyncSource
from docproc_common.errors import InvalidInput
from docproc_common.events import DocumentDeleted
from docproc_common.runtime import Runtime
from docproc_common.settings import SyncSettings
from docproc_common.vault import validate_value
from docproc_sync.connectors.gdrive import MAX_ATTEMPTS, STATE_FILE
from docproc_sync.testing import SyncBed
from docproc_testing.drive_standin import DOC, SHEET, SHORTCUT, DriveStandIn

from .conftest import Client

pytestmark = pytest.mark.integration

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
ADVICE = "check the source's configuration and credential, then run the sync again"


@pytest.fixture
def drive() -> Iterator[DriveStandIn]:
    with DriveStandIn() as standin:
        yield standin


@pytest.fixture
def gbed(runtime: Runtime, sync_settings: SyncSettings, drive: DriveStandIn) -> SyncBed:
    settings = sync_settings.model_copy(update={"api_endpoints": {"google_drive": drive.url}})
    return SyncBed(runtime, settings)


async def drive_source(
    bed: SyncBed,
    drive: DriveStandIn,
    folder: str,
    *,
    kb: KnowledgeBase | None = None,
    account: dict[str, Any] | None = None,
    mode: str = "new_only",
    **config: Any,
) -> tuple[KnowledgeBase, SyncSource, dict[str, Any]]:
    kb = kb or await bed.kb()
    account = account or drive.service_account()
    secret = await bed.secret("gcp_service_account", account)
    src = await bed.source(
        kb, "google_drive", {"folder_id": folder, **config}, secret_id=secret, sync_mode=mode
    )
    return kb, src, account


def state_file(bed: SyncBed, src: SyncSource) -> Path:
    return bed.settings.state_dir / "sources" / src.id.hex / STATE_FILE


class TestFullSync:
    async def test_the_tree_is_listed_exported_and_downloaded(
        self, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        outside = drive.folder("Elsewhere")
        drive.put("secret.md", outside, b"# not shared with this source")
        root = drive.folder("Handbook")
        sub = drive.folder("Policies", root)
        deeper = drive.folder("Travel", sub)
        readme = drive.put("readme.md", root, b"# Handbook\n\nWelcome.")
        notes = drive.put("notes.txt", deeper, b"Trains are fine.")
        doc = drive.put("Leave policy", sub, mime=DOC, exports={DOCX: b"PK docx bytes"})
        drive.put("Budget", sub, mime=SHEET, exports={})  # xlsx: not read by pymupdf, not fetched
        drive.put("logo.png", root, b"\x89PNG")
        drive.put("link", root, mime=SHORTCUT)
        kb, src, _ = await drive_source(gbed, drive, root)

        log = await gbed.run(src.id)
        assert log.status == "done", log.error_message
        assert log.listing_complete is True
        assert (log.total_files, log.ingested, log.skipped, log.failed) == (5, 3, 2, 0)
        docs = {d.source_path: d for d in await gbed.documents(kb.id)}
        assert set(docs) == {f"gdrive://{readme}", f"gdrive://{notes}", f"gdrive://{doc}"}
        assert docs[f"gdrive://{doc}"].filename == "Leave policy.docx"
        assert docs[f"gdrive://{notes}"].filename == "notes.txt"
        assert all(d.source == "google_drive" and d.storage_path is None for d in docs.values())
        fetched = len(b"# Handbook\n\nWelcome.") + len(b"Trains are fine.") + len(b"PK docx bytes")
        assert log.bytes_fetched == fetched == drive.media_bytes
        assert drive.calls["files.list"] == 3  # one per folder of the tree, none outside it
        assert drive.calls["token"] == 1, "one JWT grant, its bearer token reused"

    async def test_not_recursive_and_mime_filters(self, gbed: SyncBed, drive: DriveStandIn) -> None:
        root = drive.folder("Root")
        sub = drive.folder("Sub", root)
        drive.put("top.md", root, b"top", mime="text/markdown")
        drive.put("top.txt", root, b"text")
        drive.put("below.md", sub, b"below")
        kb, src, _ = await drive_source(
            gbed, drive, root, recursive=False, exclude_mime_types=["text/markdown"]
        )
        log = await gbed.run(src.id)
        assert (log.total_files, log.ingested) == (1, 1)
        assert [d.filename for d in await gbed.documents(kb.id)] == ["top.txt"]

    async def test_docs_as_pdf(self, gbed: SyncBed, drive: DriveStandIn) -> None:
        root = drive.folder("Root")
        sheet = drive.put("Budget", root, mime=SHEET, exports={"application/pdf": b"%PDF-1.4"})
        kb, src, _ = await drive_source(gbed, drive, root, export_format="pdf")
        log = await gbed.run(src.id)
        assert log.ingested == 1, log.error_message
        (doc,) = await gbed.documents(kb.id)
        assert (doc.filename, doc.source_path) == ("Budget.pdf", f"gdrive://{sheet}")


class TestIncremental:
    async def test_one_percent_changed_fetches_only_those_bytes(
        self, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        root = drive.folder("Root")
        sub = drive.folder("Sub", root)
        ids = [
            drive.put(f"doc{n:03}.md", sub if n % 2 else root, f"# Doc {n}\n\nbody {n}".encode())
            for n in range(100)
        ]
        kb, src, _ = await drive_source(gbed, drive, root)
        first = await gbed.run(src.id)
        assert (first.ingested, first.failed) == (100, 0), first.error_message
        await gbed.finish_pipeline(kb.id)
        assert state_file(gbed, src).exists(), "the start page token and the tree are kept"

        unchanged = await gbed.run(src.id)
        assert (unchanged.skipped, unchanged.bytes_fetched) == (100, 0)

        drive.update(ids[42], b"# Doc 42\n\nrevised")
        before_bytes, before = drive.media_bytes, dict(drive.calls)
        log = await gbed.run(src.id)
        assert (log.total_files, log.updated, log.skipped, log.deleted) == (100, 1, 99, 0)
        assert log.listing_complete is True
        assert log.bytes_fetched == len(b"# Doc 42\n\nrevised") == drive.media_bytes - before_bytes
        assert drive.calls["files.list"] == before.get("files.list"), "no walk: the change feed"
        assert drive.calls["changes.list"] == before.get("changes.list", 0) + 1
        assert drive.calls["media"] == before["media"] + 1

    async def test_a_full_run_walks_the_tree_again(
        self, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        root = drive.folder("Root")
        drive.put("a.md", root, b"a")
        kb, src, _ = await drive_source(gbed, drive, root)
        await gbed.run(src.id)
        await gbed.finish_pipeline(kb.id)
        walks = drive.calls["files.list"]
        await gbed.set_source(src.id, sync_mode="full")
        log = await gbed.run(src.id)
        assert log.updated == 1
        assert drive.calls["files.list"] == walks + 1

    async def test_a_lost_state_walks_and_finds_the_same(
        self, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        root = drive.folder("Root")
        drive.put("a.md", root, b"a")
        kb, src, _ = await drive_source(gbed, drive, root)
        await gbed.run(src.id)
        await gbed.finish_pipeline(kb.id)
        state_file(gbed, src).unlink()
        log = await gbed.run(src.id)
        assert (log.skipped, log.bytes_fetched, log.deleted) == (1, 0, 0)

    async def test_a_doc_edited_is_exported_again(self, gbed: SyncBed, drive: DriveStandIn) -> None:
        root = drive.folder("Root")
        doc = drive.put("Plan", root, mime=DOC, exports={DOCX: b"v1"})
        kb, src, _ = await drive_source(gbed, drive, root)
        await gbed.run(src.id)
        await gbed.finish_pipeline(kb.id)
        drive.set_export(doc, DOCX, b"version two")
        log = await gbed.run(src.id)
        assert (log.updated, log.bytes_fetched) == (1, len(b"version two"))


class TestDeletedAndMoved:
    async def test_a_file_deleted_or_trashed_remotely_is_removed(
        self, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        root = drive.folder("Root")
        keep = drive.put("keep.md", root, b"keep")
        gone = drive.put("gone.md", root, b"gone")
        binned = drive.put("binned.md", root, b"binned")
        kb, src, _ = await drive_source(gbed, drive, root)
        await gbed.run(src.id)
        await gbed.finish_pipeline(kb.id)
        drive.delete(gone)
        drive.trash(binned)
        since = await gbed.last_event_id()
        log = await gbed.run(src.id)
        assert (log.deleted, log.listing_complete) == (2, True)
        assert [d.source_path for d in await gbed.documents(kb.id)] == [f"gdrive://{keep}"]
        assert [c.source_path for c in await gbed.claims(src.id)] == [f"gdrive://{keep}"]
        deleted = await gbed.events(DocumentDeleted.TOPIC, since)
        assert sum(len(e["vector_document_ids"]) for e in deleted) == 2

    async def test_a_move_inside_is_nothing_a_move_out_is_a_deletion(
        self, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        outside = drive.folder("Archive")
        root = drive.folder("Root")
        sub = drive.folder("Sub", root)
        moving = drive.put("moving.md", sub, b"moving content")
        leaving = drive.put("leaving.md", root, b"leaving")
        kb, src, _ = await drive_source(gbed, drive, root)
        await gbed.run(src.id)
        await gbed.finish_pipeline(kb.id)
        before = {d.source_path: d.id for d in await gbed.documents(kb.id)}
        drive.move(moving, root)
        drive.move(leaving, outside)
        log = await gbed.run(src.id)
        assert (log.ingested, log.updated, log.skipped, log.deleted) == (0, 0, 1, 1)
        assert log.bytes_fetched == 0
        rows = await gbed.documents(kb.id)
        assert [(d.source_path, d.id) for d in rows] == [
            (f"gdrive://{moving}", before[f"gdrive://{moving}"])
        ]

    async def test_a_folder_moved_in_brings_its_files(
        self, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        outside = drive.folder("Drafts")
        nested = drive.folder("Nested", outside)
        drive.put("draft.md", nested, b"draft")
        root = drive.folder("Root")
        drive.put("a.md", root, b"a")
        kb, src, _ = await drive_source(gbed, drive, root)
        await gbed.run(src.id)
        await gbed.finish_pipeline(kb.id)
        drive.move(outside, root)
        log = await gbed.run(src.id)
        assert (log.total_files, log.ingested, log.skipped) == (2, 1, 1)
        drive.move(outside, drive.folder("Elsewhere"))
        await gbed.finish_pipeline(kb.id)
        gone = await gbed.run(src.id)
        assert (gone.total_files, gone.deleted) == (1, 1)


class TestHostileNames:
    async def test_every_name_lands_inside_or_is_refused(
        self, gbed: SyncBed, drive: DriveStandIn, tmp_path: Path
    ) -> None:
        root = drive.folder("Shared by anyone")
        long_name = "é" * 200 + ".md"  # 403 bytes
        names = {
            "../../../../home/app/.ssh/authorized_keys.md": "authorized_keys.md",
            "..%2F..%2Fetc%2Fpasswd.md": "..%2F..%2Fetc%2Fpasswd.md",
            "\u2025\uff0fescape.md": "\u2025\uff0fescape.md",
            "a/b/c.md": "c.md",
            long_name: None,
        }
        for name in names:
            drive.put(name, root, b"# hostile")
        for refused in ("..", ".", "/"):
            drive.put(refused, root, b"x")
        kb, src, _ = await drive_source(gbed, drive, root)
        log = await gbed.run(src.id)
        assert log.status == "done"
        assert (log.ingested, log.failed) == (5, 3)
        docs = await gbed.documents(kb.id)
        landed = {d.filename for d in docs if d.status != DocumentStatus.ERROR}
        assert {n for n in names.values() if n} <= landed
        (truncated,) = landed - {n for n in names.values() if n}
        assert truncated.endswith(".md") and len(truncated.encode()) <= 255
        failed = [d for d in docs if d.status == DocumentStatus.ERROR]
        assert all("does not name a file" in (d.error_message or "") for d in failed)
        assert not (gbed.settings.state_dir.parent / "home").exists()

    async def test_a_hostile_subfolder_id_never_reaches_the_query(
        self, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        root = drive.folder("Root")
        drive.put("a.md", root, b"a")
        drive.folder("evil", root, item_id="x' in parents or name contains 'salary")
        kb, src, _ = await drive_source(gbed, drive, root)
        log = await gbed.run(src.id)
        assert log.status == "error"
        assert "A Drive folder id is letters, digits" in (log.error_message or "")
        assert not any(
            "salary" in p.get("q", "") for m, p in drive.seen_params if m == "files.list"
        )
        assert await gbed.documents(kb.id) == []


class TestCredentials:
    async def test_an_expired_token_is_renewed_with_the_key(
        self, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        root = drive.folder("Root")
        drive.put("a.md", root, b"a")
        kb, src, _ = await drive_source(gbed, drive, root)
        await gbed.run(src.id)
        drive.expire_tokens()
        drive.put("b.md", root, b"b")
        log = await gbed.run(src.id)
        assert (log.status, log.ingested) == ("done", 1)
        assert drive.calls["token"] == 2

    async def test_a_revoked_key_ends_the_run_in_error_with_no_client_text(
        self, gbed: SyncBed, drive: DriveStandIn, caplog: pytest.LogCaptureFixture
    ) -> None:
        root = drive.folder("Root")
        drive.put("a.md", root, b"a")
        kb, src, account = await drive_source(gbed, drive, root)
        await gbed.run(src.id)
        await gbed.finish_pipeline(kb.id)
        drive.revoke(account)
        log = await gbed.run(src.id)
        assert log.status == "error"
        message = log.error_message or ""
        assert message.startswith("The source could not be synced (invalid_grant) - ")
        assert ADVICE in message and "worker log" in message
        for leak in ("JWT", "Signature", "127.0.0.1", account["client_email"], "token"):
            assert leak not in message.replace(ADVICE, "")
        assert log.deleted == 0 and len(await gbed.documents(kb.id)) == 1
        assert "Invalid JWT Signature" in caplog.text, "the service log has the client's text"

    async def test_a_malformed_key_file_is_a_clear_refusal(
        self, gbed: SyncBed, drive: DriveStandIn, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        root = drive.folder("Root")
        account = {**drive.service_account(), "private_key": "-----BEGIN PRIVATE KEY-----\nno"}
        with pytest.raises(InvalidInput) as refused:  # the vault refuses it where it is stored
            validate_value("gcp_service_account", account)
        assert [f.field for f in refused.value.fields] == ["value.private_key"]
        # a row stored before the vault checked keys still does not run
        monkeypatch.setattr(vault, "validate_value", lambda _kind, value: value)
        kb, src, _ = await drive_source(gbed, drive, root, account=account)
        log = await gbed.run(src.id)
        assert log.status == "error"
        assert "not a service-account key file (check private_key)" in (log.error_message or "")
        assert "BEGIN" not in (log.error_message or "")

    async def test_a_source_without_its_secret_does_not_run(
        self, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        root = drive.folder("Root")
        kb = await gbed.kb()
        src = await gbed.source(kb, "google_drive", {"folder_id": root})
        log = await gbed.run(src.id)
        assert log.status == "error"
        assert "gcp_service_account" in (log.error_message or "")
        assert drive.calls.total() == 0


class TestListingCutShort:
    async def test_a_paged_walk_interrupted_midway_deletes_nothing(
        self, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        drive.page_size_cap = 5
        root = drive.folder("Root")
        for n in range(12):
            drive.put(f"f{n:02}.md", root, f"file {n}".encode())
        kb, src, _ = await drive_source(gbed, drive, root)
        first = await gbed.run(src.id)
        assert (first.ingested, first.listing_complete) == (12, True)
        assert drive.calls["files.list"] == 3, "three pages of at most five"
        await gbed.finish_pipeline(kb.id)
        state_file(gbed, src).unlink()  # another worker's run: this one walks
        drive.fail("files.list", 429, times=MAX_ATTEMPTS, after=1, retry_after="0")
        log = await gbed.run(src.id)
        assert log.status == "done"
        assert (log.listing_complete, log.deleted, log.total_files) == (False, 0, 5)
        assert "Incomplete listing, nothing deleted" in (log.error_message or "")
        assert "rateLimitExceeded" in (log.error_message or "")
        assert len(await gbed.documents(kb.id)) == 12
        assert not state_file(gbed, src).exists(), "an incomplete walk keeps no token"

    async def test_a_change_feed_cut_short_deletes_nothing_and_keeps_its_token(
        self, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        root = drive.folder("Root")
        doomed = drive.put("doomed.md", root, b"doomed")
        drive.put("kept.md", root, b"kept")
        kb, src, _ = await drive_source(gbed, drive, root)
        await gbed.run(src.id)
        await gbed.finish_pipeline(kb.id)
        drive.delete(doomed)
        drive.fail("changes.list", 503, times=MAX_ATTEMPTS, retry_after="0")
        cut = await gbed.run(src.id)
        assert (cut.listing_complete, cut.deleted) == (False, 0)
        assert len(await gbed.documents(kb.id)) == 2
        again = await gbed.run(src.id)
        assert (again.listing_complete, again.deleted) == (True, 1)

    async def test_retry_after_is_honoured_and_a_503_is_retried(
        self, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        root = drive.folder("Root")
        drive.put("a.md", root, b"a")
        kb, src, _ = await drive_source(gbed, drive, root)
        drive.fail("files.list", 429, retry_after="1")
        drive.fail("media", 503)  # no Retry-After: backoff
        started = time.monotonic()
        log = await gbed.run(src.id)
        assert time.monotonic() - started >= 1.0
        assert (log.status, log.ingested, log.listing_complete) == ("done", 1, True)
        assert drive.calls["files.list"] == 2 and drive.calls["media"] == 2

    async def test_the_file_limit_makes_the_listing_incomplete(
        self, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        root = drive.folder("Root")
        for n in range(4):
            drive.put(f"f{n}.md", root, b"x%d" % n)
        kb, src, _ = await drive_source(gbed, drive, root, max_files=3)
        log = await gbed.run(src.id)
        assert log.listing_complete is False
        assert "file limit (3)" in (log.error_message or "")


class TestSharedDrives:
    async def test_a_shared_drive_folder_syncs_with_the_shared_drive_parameters(
        self, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        shared = drive.shared_drive()
        root = drive.folder("Team docs", shared)
        first = drive.put("a.md", root, b"a")
        kb, src, _ = await drive_source(gbed, drive, root, include_shared_drives=True)
        log = await gbed.run(src.id)
        assert (log.status, log.ingested) == ("done", 1), log.error_message
        listed = [p for m, p in drive.seen_params if m == "files.list"]
        assert all(
            p["corpora"] == "drive" and p["driveId"] == shared and p["supportsAllDrives"] == "true"
            for p in listed
        )
        await gbed.finish_pipeline(kb.id)
        drive.update(first, b"a, changed")
        drive.put("b.md", root, b"b")
        again = await gbed.run(src.id)
        assert (again.updated, again.ingested, again.listing_complete) == (1, 1, True)

    async def test_a_shared_drive_folder_without_the_flag_is_refused(
        self, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        root = drive.folder("Team docs", drive.shared_drive())
        drive.put("a.md", root, b"a")
        kb, src, _ = await drive_source(gbed, drive, root)
        log = await gbed.run(src.id)
        assert log.status == "error"
        assert "set include_shared_drives" in (log.error_message or "")


class TestStandInIsStrict:
    """The stand-in refuses what Drive refuses, so the tests above cannot pass against a fake."""

    async def test_refusals(self, drive: DriveStandIn) -> None:
        account = drive.service_account()
        shared = drive.shared_drive()
        folder = drive.folder("Team", shared)
        async with httpx.AsyncClient(base_url=drive.url) as c:
            assert (await c.get("drive/v3/files")).status_code == 401
            drive.tokens["ya29.test"] = time.time() + 60
            auth = {"Authorization": "Bearer ya29.test"}

            async def error(path: str, **params: str) -> tuple[int, str]:
                r = await c.get(path, params=params, headers=auth)
                body = r.json()["error"]
                assert set(body) == {"code", "message", "errors", "status"}
                return r.status_code, body["errors"][0]["reason"]

            assert await error("drive/v3/files", frobnicate="1") == (400, "invalid")
            assert await error("drive/v3/files", q="'x' in parents and") == (400, "invalid")
            assert await error("drive/v3/files", q="'x' in parents", pageToken="nope") == (
                400,
                "invalid",
            )
            assert await error(f"drive/v3/files/{folder}") == (404, "notFound")
            assert await error("drive/v3/files", corpora="drive") == (
                400,
                "teamDriveIdRequiresTeamDriveCorpora",
            )
            assert (await error("drive/v3/files", fields="files(id,salary)"))[0] == 400
            assert await error("drive/v3/changes") == (400, "required")
            got = await c.get(f"drive/v3/files/{folder}", params={"supportsAllDrives": "true"},
                              headers=auth)  # fmt: skip
            assert got.status_code == 200
            forged = await c.post(
                "token",
                data={"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
                      "assertion": "e30.e30.c2ln"},
            )  # fmt: skip
            assert forged.json()["error"] == "invalid_grant"
        assert account["token_uri"] == f"{drive.url}token"


class TestRoutes:
    async def test_listed_with_its_secret_kind(self, client: Client) -> None:
        listed = {c["name"]: c for c in (await client().get("/rag/sync/connectors")).json()}
        gdrive = listed["google_drive"]
        assert gdrive["secret_kind"] == "gcp_service_account" and gdrive["secret_required"]
        assert "folder_id" in gdrive["config_schema"]["properties"]
        assert gdrive["change_signal"].startswith("md5Checksum")

    async def test_a_hostile_folder_id_is_refused_naming_the_field(
        self, client: Client, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        kb = await gbed.kb()
        secret = await gbed.secret("gcp_service_account", drive.service_account())
        r = await client().post(
            f"/kb/{kb.id}/sync-sources",
            json={
                "connector": "google_drive",
                "config": {"folder_id": "x' in parents or name contains 'salary"},
                "secret_id": str(secret),
            },
        )
        assert r.status_code == 400
        fields = r.json()["error"]["details"]["fields"]
        assert [f["field"] for f in fields] == ["config.folder_id"]
        assert "salary" not in r.text

    async def test_a_key_in_the_config_is_refused_and_the_audience_named(
        self, client: Client, gbed: SyncBed, drive: DriveStandIn
    ) -> None:
        kb = await gbed.kb()
        r = await client().post(
            f"/kb/{kb.id}/sync-sources",
            json={
                "connector": "google_drive",
                "config": {"folder_id": "abc", "service_account_json": {"type": "x"}},
            },
        )
        assert r.status_code == 400
        error = r.json()["error"]
        assert "a credential does not go in a source's configuration" in error["message"].lower()
        assert error["details"]["fields"][0]["field"] == "config.service_account_json"
        secret = await gbed.secret("gcp_service_account", drive.service_account())
        ok = await client().post(
            f"/kb/{kb.id}/sync-sources",
            json={
                "connector": "google_drive",
                "name": f"drive {uuid.uuid4().hex[:6]}",
                "config": {"folder_id": "1AbC_d-9"},
                "secret_id": str(secret),
            },
        )
        assert ok.status_code == 201, ok.text
        assert ok.json()["audience"].startswith("The gcp_service_account secret ")
