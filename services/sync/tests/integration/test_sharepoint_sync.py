"""SharePoint / OneDrive sources against the Graph stand-in over HTTP: delta, cTag, claims,
moves, hostile names, throttling, credentials, an interrupted delta."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.errors import ClientFailedError
from docproc_common.db.models import DocumentStatus, KnowledgeBase, SyncSource
from docproc_common.events import DocumentDeleted
from docproc_common.failures import Stage, summary
from docproc_common.runtime import Runtime
from docproc_sync.connectors.sharepoint import SharePointConfig, SharePointConnector
from docproc_sync.testing import SyncBed
from docproc_testing.graph_standin import Drive, GraphStandIn, serve_graph

from .conftest import Client

pytestmark = pytest.mark.integration


@pytest.fixture
def graph() -> Iterator[GraphStandIn]:
    yield from serve_graph(page_size=7)


@pytest.fixture
def bed(runtime: Runtime, bed: SyncBed, graph: GraphStandIn) -> SyncBed:
    settings = bed.settings.model_copy(update={"api_endpoints": graph.endpoints})
    return SyncBed(runtime, settings)


@pytest.fixture
def drive(graph: GraphStandIn) -> Drive:
    return graph.add_site("/sites/handbook", ("Documents", "Policies Library")).drives[0]


async def sp_source(
    bed: SyncBed,
    graph: GraphStandIn,
    *,
    config: dict[str, Any] | None = None,
    secret: dict[str, str] | None = None,
    mode: str = "new_only",
    kb: KnowledgeBase | None = None,
) -> tuple[KnowledgeBase, SyncSource]:
    kb = kb or await bed.kb()
    secret_id = await bed.secret("ms_graph_app", secret or graph.secret_value())
    config = config or {"hostname": graph.hostname, "site_path": "/sites/handbook"}
    return kb, await bed.source(kb, "sharepoint", config, secret_id=secret_id, sync_mode=mode)


def address(drive: Drive, path: str) -> str:
    return f"sharepoint://{drive.id}/{path}"


class TestDelta:
    async def test_incremental_run_fetches_only_the_one_percent_changed(
        self, bed: SyncBed, graph: GraphStandIn, drive: Drive
    ) -> None:
        for n in range(100):
            drive.put(f"Handbook/part{n // 10}/page{n:03}.md", f"# Page {n}\n\nbody {n}".encode())
        drive.put("Elsewhere/outside.md", b"not under the folder")
        config = {"hostname": graph.hostname, "site_path": "/sites/handbook"}
        kb, src = await sp_source(bed, graph, config={**config, "folder_path": "Handbook"})
        first = await bed.run(src.id)
        assert first.status == "done", first.error_message
        assert (first.total_files, first.ingested, first.failed) == (100, 100, 0)
        assert first.listing_complete is True
        assert len(graph.downloads) == 100
        assert first.bytes_fetched == graph.bytes_served
        assert 1 < graph.peak_downloads <= bed.settings.concurrency, "bounded, and concurrent"
        docs = await bed.documents(kb.id)
        assert address(drive, "Handbook/part0/page000.md") in {d.source_path for d in docs}
        assert all(d.source == "sharepoint" for d in docs)
        await bed.finish_pipeline(kb.id)

        changed = drive.put("Handbook/part4/page042.md", b"# Page 42\n\nrewritten")
        served, items_before = graph.bytes_served, graph.delta_items
        second = await bed.run(src.id)
        assert (second.updated, second.skipped, second.ingested, second.deleted) == (1, 99, 0, 0)
        assert graph.downloads[100:] == ["page042.md"], "only the changed file's content"
        assert second.bytes_fetched == graph.bytes_served - served == len(changed.content)
        assert graph.delta_items - items_before == 1, "the kept delta link: only the change"
        assert graph.violations == []

    async def test_without_ctag_the_content_hash_of_graph_is_the_signal(self, bed: SyncBed) -> None:
        # OneDrive for Business leaves cTag out of delta: quickXorHash is the content's version
        standin = GraphStandIn(omit_ctag=True)
        try:
            bed = SyncBed(
                bed.runtime,
                bed.settings.model_copy(update={"api_endpoints": standin.endpoints}),
            )
            drive = standin.add_site().drives[0]
            for n in range(5):
                drive.put(f"doc{n}.md", f"doc {n}".encode())
            kb, src = await sp_source(bed, standin)
            assert (await bed.run(src.id)).ingested == 5
            await bed.finish_pipeline(kb.id)
            drive.move("doc0.md", "doc0.md")  # a new eTag, the same content
            drive.put("doc1.md", b"doc 1, changed")
            log = await bed.run(src.id)
            assert (log.updated, log.skipped) == (1, 4)
            assert standin.downloads[5:] == ["doc1.md"]
        finally:
            standin.close()

    async def test_a_file_deleted_remotely_is_retired(
        self, bed: SyncBed, graph: GraphStandIn, drive: Drive
    ) -> None:
        drive.put("keep.md", b"keep")
        drive.put("old/drop.md", b"drop")
        kb, src = await sp_source(bed, graph)
        await bed.run(src.id)
        await bed.finish_pipeline(kb.id)
        since = await bed.last_event_id()
        drive.delete("old")
        log = await bed.run(src.id)
        assert (log.deleted, log.skipped, log.bytes_fetched) == (1, 1, 0)
        assert [d.filename for d in await bed.documents(kb.id)] == ["keep.md"]
        assert [c.source_path for c in await bed.claims(src.id)] == [address(drive, "keep.md")]
        assert len(await bed.events(DocumentDeleted.TOPIC, since)) == 1

    async def test_a_moved_file_is_claimed_at_its_new_address_not_embedded_again(
        self, bed: SyncBed, graph: GraphStandIn, drive: Drive
    ) -> None:
        drive.put("drafts/plan.md", b"the plan")
        drive.put("drafts/other.md", b"other")
        kb, src = await sp_source(bed, graph)
        await bed.run(src.id)
        await bed.finish_pipeline(kb.id)
        before = {d.filename: d.id for d in await bed.documents(kb.id)}
        drive.move("drafts/plan.md", "published/plan.md")
        log = await bed.run(src.id)
        assert (log.ingested, log.updated, log.deleted, log.skipped) == (0, 0, 0, 2)
        assert {d.filename: d.id for d in await bed.documents(kb.id)} == before
        claims = {c.source_path: c.document_id for c in await bed.claims(src.id)}
        assert claims == {
            address(drive, "published/plan.md"): before["plan.md"],
            address(drive, "drafts/other.md"): before["other.md"],
        }

    async def test_a_renamed_folder_moves_what_is_in_it(
        self, bed: SyncBed, graph: GraphStandIn, drive: Drive
    ) -> None:
        drive.put("team/a.md", b"a")
        drive.put("team/deep/b.md", b"b")
        kb, src = await sp_source(bed, graph)
        await bed.run(src.id)
        await bed.finish_pipeline(kb.id)
        items = graph.delta_items
        drive.move("team", "squad")  # delta names the folder only: its files move with it
        log = await bed.run(src.id)
        assert graph.delta_items - items == 1
        assert (log.ingested, log.deleted) == (0, 0)
        assert sorted(c.source_path for c in await bed.claims(src.id)) == [
            address(drive, "squad/a.md"),
            address(drive, "squad/deep/b.md"),
        ]

    async def test_a_full_run_enumerates_afresh(
        self, bed: SyncBed, graph: GraphStandIn, drive: Drive
    ) -> None:
        drive.put("a.md", b"a")
        kb, src = await sp_source(bed, graph)
        await bed.run(src.id)
        await bed.finish_pipeline(kb.id)
        await bed.set_source(src.id, sync_mode="full")
        items = graph.delta_items
        log = await bed.run(src.id)
        assert graph.delta_items - items == 2, "root and a.md: the whole drive, not the change"
        assert log.updated == 1

    async def test_gone_on_the_kept_link_resyncs(
        self, bed: SyncBed, graph: GraphStandIn, drive: Drive
    ) -> None:
        drive.put("a.md", b"a")
        drive.put("b.md", b"b")
        kb, src = await sp_source(bed, graph)
        await bed.run(src.id)
        await bed.finish_pipeline(kb.id)
        drive.delete("b.md")
        graph.invalidate_delta()
        log = await bed.run(src.id)
        assert log.status == "done", log.error_message
        assert (log.deleted, log.skipped, log.bytes_fetched) == (1, 1, 0)
        assert log.listing_complete is True


class TestIncompleteListing:
    async def test_a_delta_cut_midway_deletes_nothing_and_keeps_the_old_link(
        self, bed: SyncBed, graph: GraphStandIn, drive: Drive
    ) -> None:
        for n in range(12):
            drive.put(f"f{n:02}.md", f"file {n}".encode())
        kb, src = await sp_source(bed, graph)
        assert (await bed.run(src.id)).ingested == 12
        await bed.finish_pipeline(kb.id)
        for n in range(4):
            drive.delete(f"f{n:02}.md")
        for n in range(4, 10):
            drive.put(f"f{n:02}.md", f"file {n}, changed".encode())
        graph.fail("delta", 429, times=-1, skip=1)  # page one of two, then a throttling storm
        cut = await bed.run(src.id)
        assert cut.status == "done", cut.error_message
        assert cut.listing_complete is False
        assert cut.deleted == 0
        assert "Incomplete listing, nothing deleted" in (cut.error_message or "")
        assert "429" in (cut.error_message or "")
        assert len(await bed.documents(kb.id)) >= 12
        await bed.finish_pipeline(kb.id)

        graph.heal()
        items = graph.delta_items
        healed = await bed.run(src.id)
        assert graph.delta_items - items == 10, "the old link again: every change since it"
        assert (healed.listing_complete, healed.deleted) == (True, 4)
        await bed.finish_pipeline(kb.id)
        assert sorted(d.filename for d in await bed.documents(kb.id)) == [
            f"f{n:02}.md" for n in range(4, 12)
        ]

    async def test_a_first_enumeration_cut_short_deletes_nothing(
        self, bed: SyncBed, graph: GraphStandIn, drive: Drive
    ) -> None:
        for n in range(10):
            drive.put(f"f{n}.md", b"x%d" % n)
        kb, src = await sp_source(bed, graph)
        await bed.run(src.id)
        await bed.finish_pipeline(kb.id)
        await bed.set_source(src.id, sync_mode="full")
        graph.fail("delta", 503, times=-1, skip=1)
        log = await bed.run(src.id)
        assert (log.status, log.listing_complete, log.deleted) == ("done", False, 0)
        assert log.updated == 6, "the first page (the root and six files) was listed"
        await bed.finish_pipeline(kb.id)
        assert len({d.source_path for d in await bed.documents(kb.id)}) == 10


class TestThrottling:
    async def test_retry_after_is_waited_and_the_run_completes(
        self, bed: SyncBed, graph: GraphStandIn, drive: Drive
    ) -> None:
        drive.put("a.md", b"a")
        drive.put("b.md", b"b")
        graph.fail("content", 429, times=2, retry_after="1")
        graph.fail("delta", 503, times=1, retry_after="0")
        graph.fail("token", 429, times=1, retry_after="0")
        kb, src = await sp_source(bed, graph)
        started = time.monotonic()
        log = await bed.run(src.id)
        assert time.monotonic() - started >= 1.0, "Retry-After: 1 was waited"
        assert (log.status, log.ingested, log.failed, log.listing_complete) == ("done", 2, 0, True)

    async def test_a_storm_on_a_download_fails_that_file_only(
        self, bed: SyncBed, graph: GraphStandIn, drive: Drive
    ) -> None:
        drive.put("a.md", b"a")
        graph.fail("download", 503, times=-1)
        kb, src = await sp_source(bed, graph)
        log = await bed.run(src.id)
        assert (log.status, log.failed) == ("done", 1)
        (doc,) = await bed.documents(kb.id)
        assert doc.status == DocumentStatus.ERROR
        assert doc.error_message == summary(
            Stage.SYNC, "throttled: HTTP 503 5 times", subject="document"
        )


class TestHostileNames:
    async def test_every_hostile_name_lands_inside_or_is_refused(
        self, bed: SyncBed, graph: GraphStandIn, drive: Drive
    ) -> None:
        long = "x" * 300 + ".md"
        names = ["../../x.md", "a/b.md", "..\\..\\c.md", "\uff0e\uff0e\uff0fd.md", long]
        for name in [*names, "..", ".", "/"]:
            drive.put("inbox", name.encode(), name=name)
        kb, src = await sp_source(bed, graph)
        log = await bed.run(src.id)
        assert log.status == "done", log.error_message
        assert (log.ingested, log.failed) == (5, 3)
        docs = await bed.documents(kb.id)
        landed = {d.filename for d in docs if d.status == DocumentStatus.PROCESSING}
        (truncated,) = {n for n in landed if n.startswith("xxx")}
        assert landed - {truncated} == {"x.md", "b.md", "c.md", "\uff0e\uff0e\uff0fd.md"}
        assert len(truncated.encode()) <= 255 and truncated.endswith(".md")
        refused = [d for d in docs if d.status == DocumentStatus.ERROR]
        assert all("does not name a file" in (d.error_message or "") for d in refused)
        paths = {d.source_path for d in docs}
        assert address(drive, "inbox/a%2Fb.md") in paths, "a slash in a name is no folder"
        assert len(paths) == 8


class TestCredentials:
    async def test_an_expired_client_secret_ends_in_error_without_client_text(
        self, client: Client, bed: SyncBed, graph: GraphStandIn, drive: Drive
    ) -> None:
        drive.put("a.md", b"a")
        kb, src = await sp_source(bed, graph)
        await bed.run(src.id)
        graph.expire_secret()
        log = await bed.run(src.id)
        assert log.status == "error"
        assert log.error_message == summary(
            Stage.SYNC, "token refused: invalid_client", subject="source"
        )
        shown = (await client().get(f"/kb/{kb.id}/sync-sources/{src.id}/logs")).text
        for private in (
            graph.tenant_id,
            graph.client_id,
            graph.client_secret,
            graph.hostname,
            "/sites/handbook",
            "AADSTS",
            "eyJ0",
        ):
            assert private not in shown
            assert private not in (log.error_message or "")
        assert [d.status for d in await bed.documents(kb.id)] == [DocumentStatus.PROCESSING]

    async def test_a_wrong_secret_and_an_unknown_tenant_are_named_by_code(
        self, bed: SyncBed, graph: GraphStandIn, drive: Drive
    ) -> None:
        drive.put("a.md", b"a")
        for value, kind in (
            ({**graph.secret_value(), "client_secret": "wrong"}, "invalid_client"),
            ({**graph.secret_value(), "tenant_id": "fabrikam.onmicrosoft.com"}, "invalid_request"),
        ):
            kb, src = await sp_source(bed, graph, secret=value)
            log = await bed.run(src.id)
            assert log.error_message == summary(
                Stage.SYNC, f"token refused: {kind}", subject="source"
            )
            assert await bed.documents(kb.id) == []

    async def test_an_expired_token_is_renewed_once(
        self, graph: GraphStandIn, drive: Drive, tmp_path: Path
    ) -> None:
        drive.put("a.md", b"alpha")
        options = ConnectorOptions(
            allow_private_networks=True,
            allow_plain_http=True,
            api_endpoints=graph.endpoints,
        )
        config = SharePointConfig(hostname=graph.hostname, site_path="/sites/handbook")
        connector = SharePointConnector(config, graph.secret_value(), options)
        try:
            (remote,) = (await connector.list_files()).files
            graph.expire_tokens()
            landed = await connector.fetch(remote, tmp_path)
            assert landed.read_bytes() == b"alpha"
            graph.expire_secret()
            tmp = tmp_path / "again"
            tmp.mkdir()
            with pytest.raises(ClientFailedError) as refused:
                await connector.fetch(remote, tmp)
            assert refused.value.kind == "token refused: invalid_client"
        finally:
            await connector.aclose()

    async def test_a_user_drive_and_a_named_library(
        self, bed: SyncBed, graph: GraphStandIn
    ) -> None:
        user = graph.add_user("adele@contoso.onmicrosoft.com")
        user.put("mine.md", b"mine")
        library = graph.add_site("/sites/legal", ("Documents", "Contracts 2024")).drives[1]
        library.put("nda.md", b"nda")
        _, mine = await sp_source(bed, graph, config={"user_id": "Adele@contoso.onmicrosoft.com"})
        _, named = await sp_source(
            bed,
            graph,
            config={
                "hostname": graph.hostname,
                "site_path": "/sites/legal",
                "drive": "contracts 2024",
            },
        )
        for src, path in ((mine, address(user, "mine.md")), (named, address(library, "nda.md"))):
            log = await bed.run(src.id)
            assert (log.status, log.ingested) == ("done", 1), log.error_message
            assert [c.source_path for c in await bed.claims(src.id)] == [path]

    async def test_a_missing_folder_is_an_error_that_deletes_nothing(
        self, bed: SyncBed, graph: GraphStandIn, drive: Drive
    ) -> None:
        drive.put("Handbook/a.md", b"a")
        config = {"hostname": graph.hostname, "site_path": "/sites/handbook"}
        kb, src = await sp_source(bed, graph, config={**config, "folder_path": "Handbook"})
        await bed.run(src.id)
        await bed.set_source(src.id, config={**config, "folder_path": "Gone"})
        log = await bed.run(src.id)
        assert log.status == "error"
        assert log.error_message == (
            "Microsoft Graph found no such folder (itemNotFound): check config.folder_path"
        )
        assert len(await bed.documents(kb.id)) == 1


class TestApi:
    async def test_listed_with_its_schema_and_secret_kind(self, client: Client) -> None:
        listed = (await client().get("/rag/sync/connectors")).json()
        (sp,) = [c for c in listed if c["name"] == "sharepoint"]
        assert (sp["secret_kind"], sp["secret_required"]) == ("ms_graph_app", True)
        assert sp["change_signal"] == "Graph delta link, then cTag"
        assert {"hostname", "site_path", "site_id", "drive", "user_id", "folder_path"} <= set(
            sp["config_schema"]["properties"]
        )

    async def test_created_with_the_audience_sentence(
        self, client: Client, bed: SyncBed, graph: GraphStandIn
    ) -> None:
        kb = await bed.kb()
        c = client()
        secret = await bed.secret("ms_graph_app", graph.secret_value())
        body = {
            "connector": "sharepoint",
            "config": {"hostname": graph.hostname, "site_path": "/sites/handbook"},
            "secret_id": str(secret),
        }
        r = await c.post(f"/kb/{kb.id}/sync-sources", json=body)
        assert r.status_code == 201, r.text
        audience = r.json()["audience"]
        assert audience.startswith('The ms_graph_app secret "ms_graph_app-')
        assert audience.endswith(
            '" can read whatever it has been granted, and everything it ingests becomes '
            f"searchable in {kb.collection_name} ({kb.name}) by everyone in the organization "
            "acme who can view the collection."
        )

    async def test_refusals_name_the_rooted_field_and_write_nothing(
        self, client: Client, bed: SyncBed, graph: GraphStandIn
    ) -> None:
        kb = await bed.kb()
        secret = await bed.secret("ms_graph_app", graph.secret_value())
        site = {"hostname": graph.hostname, "site_path": "/sites/handbook"}
        for config, field, message in (
            ({**site, "client_secret": "x"}, "config.client_secret", "a credential does not go"),
            (
                {**site, "tenant_id": graph.tenant_id},
                "config.tenant_id",
                "a credential does not go",
            ),
            ({**site, "folder_path": "../../etc"}, "config.folder_path", "folder names"),
            ({"hostname": "169.254.169.254"}, "config.hostname", "plain DNS name"),
        ):
            body = {"connector": "sharepoint", "config": config, "secret_id": str(secret)}
            r = await client().post(f"/kb/{kb.id}/sync-sources", json=body)
            assert r.status_code == 400, r.text
            (found,) = r.json()["error"]["details"]["fields"]
            assert found["field"] == field
            assert message in found["message"]
        listed = await client().get(f"/kb/{kb.id}/sync-sources")
        assert listed.json() == []


class TestStandInIsStrict:
    """The stand-in refuses what Graph refuses, so a lenient connector cannot pass against it."""

    async def test_refusals(self, graph: GraphStandIn, drive: Drive) -> None:
        item = drive.put("a.md", b"a")
        async with httpx.AsyncClient(base_url=graph.base) as http:
            token = (
                await http.post(
                    f"/{graph.tenant_id}/oauth2/v2.0/token",
                    data={
                        "grant_type": "client_credentials",
                        "scope": "https://graph.microsoft.com/.default",
                        **{k: v for k, v in graph.secret_value().items() if k != "tenant_id"},
                    },
                )
            ).json()["access_token"]
            auth = {"Authorization": f"Bearer {token}"}
            root = f"/v1.0/drives/{drive.id}/root"
            assert (await http.get(root, headers=auth)).status_code == 200
            unknown = await http.get(f"{root}?$expand=children", headers=auth)
            assert (unknown.status_code, unknown.json()["error"]["code"]) == (400, "BadRequest")
            bad = await http.get(f"/v1.0/drives/{drive.id}/root:/a/%2E%2E/b", headers=auth)
            assert bad.status_code == 400
            none = await http.get(root)
            assert none.json()["error"]["code"] == "InvalidAuthenticationToken"
            content = await http.get(
                f"/v1.0/drives/{drive.id}/items/{item.id}/content", headers=auth
            )
            assert content.status_code == 302
            leaked = await http.get(content.headers["location"], headers=auth)
            assert leaked.status_code == 401
            assert graph.violations == ["an Authorization header was sent to the download URL"]
            graph.expire_tokens()
            expired = await http.get(root, headers=auth)
            assert expired.status_code == 401
            assert expired.json()["error"]["message"].startswith("Access token has expired")
