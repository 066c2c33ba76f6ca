"""Confluence sources against the strict REST v2 stand-in over HTTP: versions, trees, deletion,
moves, hostile titles, credentials, throttling and listings cut half-way."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from docproc_common.connectors.base import ConnectorOptions
from docproc_common.db.models import DocumentStatus, KnowledgeBase, SyncSource
from docproc_common.events import DocumentDeleted
from docproc_sync.connectors import confluence
from docproc_sync.connectors.confluence import ConfluenceConfig, ConfluenceConnector, page_text
from docproc_sync.connectors.http_retry import RetryPolicy
from docproc_sync.testing import SyncBed
from docproc_testing.confluence_standin import ConfluenceStandIn, running_confluence

from .conftest import Client
from .test_stored_errors import ADVICE, logged, shown

pytestmark = pytest.mark.integration

API = "/wiki/api/v2"


@pytest.fixture
def wiki(monkeypatch: pytest.MonkeyPatch) -> Iterator[ConfluenceStandIn]:
    # no real waits between retries: the stand-in answers Retry-After: 0
    monkeypatch.setattr(ConfluenceConnector, "RETRY", RetryPolicy(attempts=3, base_delay_s=0.01))
    with running_confluence() as standin:
        standin.add_space("DOCS")
        standin.add_space("HR")
        yield standin


def storage(text: str) -> str:
    return f"<p>{text}</p>"


async def confluence_source(
    bed: SyncBed,
    wiki: ConfluenceStandIn,
    *,
    kb: KnowledgeBase | None = None,
    secret: dict[str, Any] | None = None,
    **config: Any,
) -> tuple[KnowledgeBase, SyncSource]:
    kb = kb or await bed.kb()
    value = secret or {"email": wiki.email, "api_token": wiki.api_token}
    secret_id = await bed.secret("confluence_token", value)
    settings = {"site_url": wiki.url, "space_key": "DOCS", **config}
    return kb, await bed.source(kb, "confluence", settings, secret_id=secret_id)


def address(wiki: ConfluenceStandIn, page_id: str) -> str:
    return f"{wiki.url}/wiki/pages/viewpage.action?pageId={page_id}"


class TestFullAndIncremental:
    async def test_a_space_synced_then_only_its_changed_page_fetched(
        self, bed: SyncBed, wiki: ConfluenceStandIn, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(confluence, "PAGE_LIMIT", 40)  # 100 pages: three listing pages
        ids = [wiki.add_page("DOCS", f"Page {n}", storage(f"fact number {n}")) for n in range(100)]
        wiki.add_page("HR", "Salaries", storage("not this space"))
        kb, src = await confluence_source(bed, wiki)
        first = await bed.run(src.id)
        assert first.status == "done", first.error_message
        assert (first.total_files, first.ingested, first.listing_complete) == (100, 100, True)
        docs = await bed.documents(kb.id)
        assert {d.source_path for d in docs} == {address(wiki, i) for i in ids}
        assert {d.filename for d in docs} == {f"Page {n}.md" for n in range(100)}
        assert all(d.source == "confluence" for d in docs)
        assert sorted(wiki.body_fetches) == sorted(ids) and wiki.refused == []
        listings = [r for r in wiki.requests if "/pages?" in r and "/spaces/" in r]
        assert len(listings) == 3 and all("body-format" not in r for r in listings)
        await bed.finish_pipeline(kb.id)

        wiki.reset_counts()
        unchanged = await bed.run(src.id)
        assert (unchanged.skipped, unchanged.bytes_fetched) == (100, 0)
        assert wiki.body_fetches == {}, "an unchanged version is never fetched"

        wiki.edit(ids[42], body=storage("fact number 42, revised"))
        wiki.reset_counts()
        changed = await bed.run(src.id)
        assert (changed.updated, changed.skipped, changed.ingested) == (1, 99, 0)
        assert dict(wiki.body_fetches) == {ids[42]: 1}
        expected = page_text("Page 42", storage("fact number 42, revised"))
        assert changed.bytes_fetched == len(expected)
        await bed.finish_pipeline(kb.id)
        rows = await bed.documents(kb.id)
        assert len(rows) == 100
        (row,) = [d for d in rows if d.source_path == address(wiki, ids[42])]
        assert row.status == DocumentStatus.DONE and row.filesize == len(expected)


class TestTreeDeletionAndMoves:
    async def test_a_page_deleted_remotely_is_retired(
        self, bed: SyncBed, wiki: ConfluenceStandIn
    ) -> None:
        keep = wiki.add_page("DOCS", "Keep", storage("stays"))
        gone = wiki.add_page("DOCS", "Gone", storage("goes"))
        kb, src = await confluence_source(bed, wiki)
        await bed.run(src.id)
        await bed.finish_pipeline(kb.id)
        (gone_doc,) = [d for d in await bed.documents(kb.id) if d.filename == "Gone.md"]
        since = await bed.last_event_id()
        wiki.delete(gone)
        log = await bed.run(src.id)
        assert (log.listing_complete, log.deleted, log.skipped) == (True, 1, 1)
        assert [d.source_path for d in await bed.documents(kb.id)] == [address(wiki, keep)]
        assert [c.source_path for c in await bed.claims(src.id)] == [address(wiki, keep)]
        deleted = await bed.events(DocumentDeleted.TOPIC, since)
        assert [e["vector_document_ids"] for e in deleted] == [[str(gone_doc.vector_document_id)]]

    async def test_a_moved_or_renamed_page_is_the_same_document(
        self, bed: SyncBed, wiki: ConfluenceStandIn
    ) -> None:
        home = wiki.add_page("DOCS", "Home", storage("home"))
        guide = wiki.add_page("DOCS", "Guide", storage("how to"), parent=home)
        other = wiki.add_page("DOCS", "Other", storage("elsewhere"))
        kb, src = await confluence_source(bed, wiki)
        await bed.run(src.id)
        await bed.finish_pipeline(kb.id)
        (before,) = [d for d in await bed.documents(kb.id) if d.filename == "Guide.md"]

        wiki.move(guide, other)
        wiki.reset_counts()
        moved = await bed.run(src.id)
        assert (moved.deleted, moved.ingested, moved.updated, moved.skipped) == (0, 0, 0, 3)
        assert wiki.body_fetches == {}
        assert before.id in {d.id for d in await bed.documents(kb.id)}

        wiki.edit(guide, title="Guide (2024)")
        renamed = await bed.run(src.id)
        assert (renamed.updated, renamed.deleted, renamed.ingested) == (1, 0, 0)
        await bed.finish_pipeline(kb.id)
        (after,) = [d for d in await bed.documents(kb.id) if d.source_path == address(wiki, guide)]
        assert after.filename == "Guide (2024).md" and after.id != before.id
        assert before.id not in {d.id for d in await bed.documents(kb.id)}

    async def test_a_page_tree_deeper_than_one_call_and_moves_out_of_it(
        self, bed: SyncBed, wiki: ConfluenceStandIn
    ) -> None:
        root = wiki.add_page("DOCS", "Handbook", storage("root"))
        folder = wiki.add_page("DOCS", "Folder", parent=root, kind="folder")
        in_folder = wiki.add_page("DOCS", "Filed", storage("in a folder"), parent=folder)
        chain, parent = [], root
        for depth in range(8):  # deeper than the 5 levels one descendants call returns
            parent = wiki.add_page("DOCS", f"Level {depth}", storage(f"level {depth}"), parent)
            chain.append(parent)
        outside = wiki.add_page("DOCS", "Outside", storage("not in the tree"))
        kb, src = await confluence_source(bed, wiki, root_page_id=root)
        log = await bed.run(src.id)
        assert log.status == "done", log.error_message
        expected = {root, in_folder, *chain}
        assert {d.source_path for d in await bed.documents(kb.id)} == {
            address(wiki, i) for i in expected
        }
        assert wiki.refused == []
        await bed.finish_pipeline(kb.id)

        wiki.move(chain[3], outside)  # levels 3..7 leave the tree
        wiki.move(outside, root)  # and "Outside" (with them below it) comes in
        log = await bed.run(src.id)
        assert (log.ingested, log.deleted) == (1, 0)
        wiki.move(outside, None)
        log = await bed.run(src.id)
        assert log.deleted == 6
        assert {d.source_path for d in await bed.documents(kb.id)} == {
            address(wiki, i) for i in (root, in_folder, *chain[:3])
        }

    async def test_a_root_page_of_another_space_is_refused(
        self, bed: SyncBed, wiki: ConfluenceStandIn
    ) -> None:
        elsewhere = wiki.add_page("HR", "Salaries", storage("pay"))
        kb, src = await confluence_source(bed, wiki, root_page_id=elsewhere)
        log = await bed.run(src.id)
        assert log.status == "error"
        assert log.error_message == f"The root page {elsewhere} is not in the space DOCS"
        assert wiki.body_fetches == {} and await bed.documents(kb.id) == []

    async def test_an_unknown_space_says_so(self, bed: SyncBed, wiki: ConfluenceStandIn) -> None:
        _kb, src = await confluence_source(bed, wiki, space_key="NOPE")
        log = await bed.run(src.id)
        assert (log.status, log.error_message) == (
            "error",
            "The space NOPE was not found, or the source's credential cannot read it",
        )


class TestAttachments:
    async def test_supported_attachments_by_their_own_version(
        self, bed: SyncBed, wiki: ConfluenceStandIn
    ) -> None:
        page = wiki.add_page("DOCS", "Specs", storage("see attached"))
        notes = wiki.attach(page, "notes.md", b"# Notes\n\nattached notes", "text/markdown")
        wiki.attach(page, "logo.png", b"\x89PNG", "image/png")
        kb, src = await confluence_source(bed, wiki, include_attachments=True)
        log = await bed.run(src.id)
        assert (log.total_files, log.ingested, log.skipped) == (3, 2, 1)
        assert {d.filename for d in await bed.documents(kb.id)} == {"Specs.md", "notes.md"}
        assert dict(wiki.downloads) == {notes: 1}
        await bed.finish_pipeline(kb.id)
        wiki.reset_counts()
        again = await bed.run(src.id)
        assert (again.skipped, again.bytes_fetched) == (3, 0)
        assert wiki.downloads == {} and wiki.body_fetches == {}


HOSTILE = [
    "../../x",
    "../../../../home/app/.ssh/authorized_keys",
    "a/b/c",
    "．．／．．／etc",
    "..",
    ".",
    "/",
    "ü" * 200,
]


class TestHostileNames:
    async def test_every_title_lands_inside(
        self, bed: SyncBed, wiki: ConfluenceStandIn, tmp_path: Path
    ) -> None:
        for title in HOSTILE:
            wiki.add_page("DOCS", title, storage(f"titled {title[:10]}"))
        kb, src = await confluence_source(bed, wiki)
        log = await bed.run(src.id)
        assert (log.ingested, log.failed) == (len(HOSTILE), 0)
        names = {d.filename for d in await bed.documents(kb.id)}
        assert "..-..-x.md" in names and "...md" in names and "-.md" in names
        assert all("/" not in n and len(n.encode()) <= 255 for n in names)

        connector = ConfluenceConnector(
            ConfluenceConfig(site_url=wiki.url, space_key="DOCS"),
            {"email": wiki.email, "api_token": wiki.api_token},
            ConnectorOptions.of(bed.settings),
        )
        try:
            listing = await connector.list_files()
            sync_dir = tmp_path / "sync"
            for remote in listing.files:
                sync_dir.mkdir()
                landed = await connector.fetch(remote, sync_dir)
                assert landed.parent == sync_dir.resolve() and landed.is_file()
                landed.unlink()
                sync_dir.rmdir()
        finally:
            await connector.aclose()
        assert not (tmp_path / "x").exists() and not (tmp_path.parent / "x.md").exists()

    async def test_a_hostile_attachment_name_lands_inside_or_is_refused(
        self, bed: SyncBed, wiki: ConfluenceStandIn
    ) -> None:
        page = wiki.add_page("DOCS", "Files", storage("files"))
        wiki.attach(page, "../../../../tmp/evil.md", b"evil", "text/markdown")
        wiki.attach(page, "..", b"dots", "text/plain")
        kb, src = await confluence_source(bed, wiki, include_attachments=True)
        log = await bed.run(src.id)
        assert (log.ingested, log.failed) == (2, 1)
        docs = {d.filename: d for d in await bed.documents(kb.id)}
        assert set(docs) == {"Files.md", "evil.md", ".."}
        assert docs[".."].status == DocumentStatus.ERROR
        assert "does not name a file" in (docs[".."].error_message or "")


class TestCredentials:
    @pytest.mark.parametrize(
        "secret",
        [
            {"email": "reader@acme.example", "api_token": "ATATT-revoked"},
            {"bearer_token": "expired-oauth-token"},
        ],
    )
    async def test_a_refused_credential_is_stage_status_and_advice(
        self,
        client: Client,
        bed: SyncBed,
        wiki: ConfluenceStandIn,
        secret: dict[str, str],
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        wiki.add_page("DOCS", "Page", storage("x"))
        kb, src = await confluence_source(bed, wiki, secret=secret)
        with caplog.at_level(logging.WARNING, "docproc_sync.service"):
            log = await bed.run(src.id)
        assert log.status == "error"
        assert log.error_message == (
            "The source could not be synced (Confluence 401: authentication refused) - "
            f"{ADVICE}. The worker log has the full error."
        )
        text = await shown(client, kb, src)
        for private in (*secret.values(), wiki.email, wiki.url, "127.0.0.1"):
            assert private not in text
        assert "expired or revoked" in logged(caplog), "Confluence's own words are logged"
        assert await bed.documents(kb.id) == []

    async def test_a_bearer_token_is_sent_as_bearer(
        self, bed: SyncBed, wiki: ConfluenceStandIn
    ) -> None:
        wiki.bearer_token = "oauth-access-token"
        wiki.add_page("DOCS", "Page", storage("x"))
        _kb, src = await confluence_source(bed, wiki, secret={"bearer_token": "oauth-access-token"})
        log = await bed.run(src.id)
        assert (log.status, log.ingested) == ("done", 1)


class TestThrottlingAndCutListings:
    async def test_a_429_with_retry_after_is_waited_out(
        self, bed: SyncBed, wiki: ConfluenceStandIn
    ) -> None:
        for n in range(3):
            wiki.add_page("DOCS", f"P{n}", storage(str(n)))
        wiki.fault(429, f"{API}/spaces", times=2)
        wiki.fault(503, f"{API}/pages/", times=1)
        kb, src = await confluence_source(bed, wiki)
        log = await bed.run(src.id)
        assert (log.status, log.listing_complete, log.ingested, log.failed) == (
            "done",
            True,
            3,
            0,
        )

    @pytest.mark.parametrize("status", [429, 503])
    async def test_a_storm_midway_through_the_listing_deletes_nothing(
        self,
        bed: SyncBed,
        wiki: ConfluenceStandIn,
        monkeypatch: pytest.MonkeyPatch,
        status: int,
    ) -> None:
        monkeypatch.setattr(confluence, "PAGE_LIMIT", 5)
        for n in range(20):
            wiki.add_page("DOCS", f"P{n:02}", storage(str(n)))
        kb, src = await confluence_source(bed, wiki)
        await bed.run(src.id)
        await bed.finish_pipeline(kb.id)
        space = next(i for i, k in wiki.spaces.items() if k == "DOCS")
        wiki.fault(status, f"{API}/spaces/{space}/pages", after=2)  # page 3 of 4, for ever
        log = await bed.run(src.id)
        assert log.status == "done"
        assert (log.listing_complete, log.deleted, log.total_files) == (False, 0, 10)
        assert f"Confluence {status}" in (log.error_message or "")
        assert len(await bed.documents(kb.id)) == 20
        assert len(await bed.claims(src.id)) == 20

    async def test_a_cut_attachment_listing_deletes_nothing(
        self, bed: SyncBed, wiki: ConfluenceStandIn
    ) -> None:
        pages = [wiki.add_page("DOCS", f"P{n}", storage(str(n))) for n in range(3)]
        for page in pages:
            wiki.attach(page, f"a{page}.txt", b"attached", "text/plain")
        kb, src = await confluence_source(bed, wiki, include_attachments=True)
        await bed.run(src.id)
        await bed.finish_pipeline(kb.id)
        wiki.fault(429, f"{API}/pages/{pages[1]}/attachments")
        log = await bed.run(src.id)
        assert (log.listing_complete, log.deleted) == (False, 0)
        assert len(await bed.documents(kb.id)) == 6


class TestStrictStandIn:
    """The stand-in refuses what Confluence refuses, so a lenient connector cannot pass."""

    async def test_it_refuses_what_the_api_refuses(self, wiki: ConfluenceStandIn) -> None:
        page = wiki.add_page("DOCS", "P", storage("x"))
        space = next(i for i, k in wiki.spaces.items() if k == "DOCS")
        auth = (wiki.email, wiki.api_token)
        async with httpx.AsyncClient(base_url=wiki.url, auth=auth) as c:
            assert (
                await c.get(f"{API}/spaces/{space}/pages", params={"limit": 251})
            ).status_code == 400
            assert (
                await c.get(f"{API}/spaces/{space}/pages", params={"expand": "body"})
            ).status_code == 400
            assert (
                await c.get(f"{API}/pages/{page}", params={"body-format": "html"})
            ).status_code == 400
            assert (
                await c.get(f"{API}/spaces/{space}/pages", params={"cursor": "bm9wZQ"})
            ).status_code == 400
            assert (await c.get(f"{API}/pages/999999")).status_code == 404
            assert (
                await c.get(f"{API}/pages/{page}/descendants", params={"depth": 6})
            ).status_code == 400
            refused = await c.get(f"{API}/spaces", auth=(wiki.email, "wrong"))
            assert refused.status_code == 401
            assert refused.json()["errors"][0]["code"] == "UNAUTHORIZED"
            ok = await c.get(f"{API}/pages/{page}", params={"body-format": "storage"})
            assert ok.json()["body"]["storage"]["value"] == storage("x")


class TestApi:
    async def test_created_with_its_audience_and_listed(self, client: Client, bed: SyncBed) -> None:
        kb = await bed.kb()
        secret = await bed.secret("confluence_token", {"email": "a@b.c", "api_token": "t"})
        c = client()
        config = {"site_url": "https://acme.atlassian.net", "space_key": "DOCS"}
        r = await c.post(
            f"/kb/{kb.id}/sync-sources",
            json={"connector": "confluence", "config": config, "secret_id": str(secret)},
        )
        assert r.status_code == 201, r.text
        assert r.json()["audience"].startswith('The confluence_token secret "confluence_token-')
        assert r.json()["audience"].endswith(
            "can read whatever it has been granted (every page of the space it can see, "
            "restricted pages included), and everything it ingests becomes searchable in "
            f"{kb.collection_name} ({kb.name}) by everyone in the organization acme who can "
            "view the collection."
        )
        listed = {x["name"]: x for x in (await c.get("/rag/sync/connectors")).json()}
        assert listed["confluence"]["secret_kind"] == "confluence_token"

    async def test_a_token_in_the_config_is_refused_and_nothing_is_written(
        self, client: Client, bed: SyncBed
    ) -> None:
        kb = await bed.kb()
        secret = await bed.secret("confluence_token", {"bearer_token": "b"})
        config = {
            "site_url": "https://acme.atlassian.net",
            "space_key": "D",
            "api_token": "ATATT-x",
        }
        c = client()
        r = await c.post(
            f"/kb/{kb.id}/sync-sources",
            json={"connector": "confluence", "config": config, "secret_id": str(secret)},
        )
        assert r.status_code == 400
        error = r.json()["error"]
        assert error["details"]["fields"] == [
            {
                "field": "config.api_token",
                "message": "a credential does not go in a source's configuration",
            }
        ]
        assert "ATATT-x" not in r.text
        assert (await c.get(f"/kb/{kb.id}/sync-sources")).json() == []
