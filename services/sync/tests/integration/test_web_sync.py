"""The web crawler against a local HTTP server the test starts: scope, robots, limits, ETags."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.errors import NetworkRefusedError
from docproc_sync.connectors.web import WebConfig, WebConnector
from docproc_sync.testing import SyncBed
from docproc_testing.servers import QuietHandler, ThreadedServer

from .conftest import RebindingDns, checked_options

pytestmark = pytest.mark.integration


@dataclass
class Page:
    body: str | bytes
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    etag: str | None = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


class Site(ThreadedServer):
    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self.hits: list[str] = []
        self.hosts: set[str | None] = set()
        super().__init__(self._handler())

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        site = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                site.hits.append(self.path)
                site.hosts.add(self.headers.get("Host"))
                page = site.pages.get(self.path)
                if page is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if page.delay_s:
                    time.sleep(page.delay_s)
                body = page.body.encode() if isinstance(page.body, str) else page.body
                self.send_response(page.status)
                self.send_header("Content-Type", page.content_type)
                self.send_header("Content-Length", str(len(body)))
                if page.etag:
                    self.send_header("ETag", page.etag)
                for k, v in page.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(body)
                except BrokenPipeError:
                    pass

        return Handler


@pytest.fixture
def site() -> Iterator[Site]:
    with Site() as s:
        yield s


def html(title: str, body: str) -> str:
    return f"<html><head><title>{title}</title></head><body>{body}</body></html>"


def build_site(site: Site) -> None:
    site.pages.update(
        {
            "/robots.txt": Page("User-agent: *\nDisallow: /private/\n", content_type="text/plain"),
            "/": Page(
                html(
                    "Home",
                    '<h1>Welcome</h1><p>The handbook.</p><a href="/a.html">A</a> <a href="/b/">B</a>'
                    '<a href="https://other.example/x">elsewhere</a>'
                    '<a href="/private/secret.html">secret</a><a href="mailto:x@y">mail</a>',
                ),
                etag='"home-1"',
            ),
            "/a.html": Page(
                html("A", '<p>Penguins are birds.</p><a href="/notes.txt">notes</a>'),
                etag='"a-1"',
            ),
            "/b/": Page(
                '<html><head><meta name="robots" content="noindex"></head>'
                '<body><p>hub</p><a href="/c.html">C</a></body></html>',
                etag='"b-1"',
            ),
            "/c.html": Page(html("C", "<p>Capybaras are rodents.</p>"), etag='"c-1"'),
            "/notes.txt": Page("plain notes", content_type="text/plain", etag='"n-1"'),
            "/private/secret.html": Page(html("S", "<p>secret</p>")),
        }
    )


async def web_source(bed: SyncBed, site: Site, **config: Any) -> tuple[Any, Any]:
    kb = await bed.kb()
    src = await bed.source(kb, "web", {"start_url": f"{site.url}/", **config})
    return kb, src


async def crawled(bed: SyncBed, site: Site, **config: Any) -> tuple[Any, Any]:
    """The test site, a source on it, crawled once and its documents indexed."""
    build_site(site)
    kb, src = await web_source(bed, site, **config)
    await bed.run(src.id)
    await bed.finish_pipeline(kb.id)
    return kb, src


class TestCrawl:
    async def test_same_site_robots_noindex_and_documents(self, bed: SyncBed, site: Site) -> None:
        build_site(site)
        kb, src = await web_source(bed, site)
        log = await bed.run(src.id)
        assert log.status == "done", log.error_message
        assert log.listing_complete is True
        docs = await bed.documents(kb.id)
        assert sorted(d.filename for d in docs) == ["a.md", "c.md", "index.md", "notes.txt"]
        assert sorted(d.source_path or "" for d in docs) == sorted(
            f"{site.url}{p}" for p in ("/", "/a.html", "/c.html", "/notes.txt")
        )
        assert "/private/secret.html" not in site.hits
        assert all(d.source == "web" for d in docs)

    async def test_etag_skips_unchanged_pages(self, bed: SyncBed, site: Site) -> None:
        kb, src = await crawled(bed, site)
        second = await bed.run(src.id)
        assert (second.ingested, second.updated, second.skipped) == (0, 0, 4)
        assert second.bytes_fetched == 0
        site.pages["/c.html"] = Page(html("C", "<p>Capybaras, revised.</p>"), etag='"c-2"')
        third = await bed.run(src.id)
        assert (third.updated, third.skipped) == (1, 3)

    async def test_page_limit_makes_the_listing_incomplete_and_deletes_nothing(
        self, bed: SyncBed, site: Site
    ) -> None:
        kb, src = await crawled(bed, site)
        await bed.set_source(src.id, config={**src.config, "max_pages": 2})
        cut = await bed.run(src.id)
        assert cut.status == "done"
        assert cut.listing_complete is False
        assert "page limit" in (cut.error_message or "")
        assert cut.deleted == 0
        assert len(await bed.documents(kb.id)) == 4

    async def test_a_timed_out_page_makes_the_listing_incomplete(
        self, bed: SyncBed, site: Site
    ) -> None:
        kb, src = await crawled(bed, site, page_timeout_s=1)
        site.pages["/a.html"] = Page(html("A", "<p>slow</p>"), delay_s=2.5)
        log = await bed.run(src.id)
        assert log.listing_complete is False
        assert "timed out" in (log.error_message or "")
        assert log.deleted == 0
        assert "a.md" in {d.filename for d in await bed.documents(kb.id)}

    async def test_a_gone_page_is_deleted_after_a_complete_crawl(
        self, bed: SyncBed, site: Site
    ) -> None:
        kb, src = await crawled(bed, site)
        del site.pages["/c.html"]
        log = await bed.run(src.id)
        assert log.listing_complete is True
        assert log.deleted == 1
        assert "c.md" not in {d.filename for d in await bed.documents(kb.id)}

    async def test_unreadable_robots_crawls_nothing(self, bed: SyncBed, site: Site) -> None:
        build_site(site)
        site.pages["/robots.txt"] = Page("down", status=503, content_type="text/plain")
        kb, src = await web_source(bed, site)
        log = await bed.run(src.id)
        assert log.listing_complete is False
        assert site.hits == ["/robots.txt"]
        assert await bed.documents(kb.id) == []

    async def test_redirects_leave_the_site_never(self, bed: SyncBed, site: Site) -> None:
        site.pages["/"] = Page(html("H", '<p>home</p><a href="/out">out</a><a href="/in">in</a>'))
        site.pages["/out"] = Page("", status=302, headers={"Location": "https://example.org/"})
        site.pages["/in"] = Page("", status=301, headers={"Location": "/target.html"})
        site.pages["/target.html"] = Page(html("T", "<p>target</p>"))
        kb, src = await web_source(bed, site)
        log = await bed.run(src.id)
        assert log.listing_complete is True
        names = sorted(d.filename for d in await bed.documents(kb.id))
        assert names == ["index.md", "target.md"]


class TestHostileNames:
    async def test_an_encoded_path_in_a_url_lands_inside(
        self, bed: SyncBed, site: Site, tmp_path: Any
    ) -> None:
        hostile = "/x/..%2F..%2F..%2F..%2Fhome%2Fapp%2F.ssh%2Fauthorized_keys"
        site.pages["/"] = Page(html("H", f'<p>home</p><a href="{hostile}">k</a>'))
        site.pages[hostile] = Page(html("K", "<p>ssh-rsa AAAA attacker</p>"))
        kb, src = await web_source(bed, site)
        log = await bed.run(src.id)
        assert log.ingested == 2
        names = sorted(d.filename for d in await bed.documents(kb.id))
        assert names == ["authorized_keys.md", "index.md"]

        connector = WebConnector(
            WebConfig(start_url=f"{site.url}/"), None, ConnectorOptions.of(bed.settings)
        )
        listing = await connector.list_files()
        remote = next(f for f in listing.files if f.address.endswith("authorized_keys"))
        sync_dir = tmp_path / "sync"
        sync_dir.mkdir()
        landed = await connector.fetch(remote, sync_dir)
        assert landed == sync_dir.resolve() / "authorized_keys.md"
        assert b"attacker" in landed.read_bytes()
        await connector.aclose()

    async def test_a_nul_encoded_in_a_url_is_a_failed_file_not_a_failed_run(
        self, bed: SyncBed, site: Site
    ) -> None:
        """``%00`` decodes to a NUL in the page's name: the name is refused, and the error
        row that says so carries the name cleaned, as an upload's would be."""
        site.pages["/"] = Page(html("H", '<p>home</p><a href="/re%00port.md">r</a>'))
        site.pages["/re%00port.md"] = Page("# report", content_type="text/markdown")
        kb, src = await web_source(bed, site)
        log = await bed.run(src.id)
        assert log.status == "done", log.error_message
        assert (log.ingested, log.failed) == (1, 1)
        docs = {d.filename: d for d in await bed.documents(kb.id)}
        assert sorted(docs) == ["index.md", "report.md"]
        refused = docs["report.md"]
        assert refused.status == "error"
        assert refused.source_path == f"{site.url}/re%00port.md"
        assert "contains a NUL byte" in (refused.error_message or "")


class TestPinnedAddress:
    """The crawler connects to the address the network check accepted, resolved once."""

    async def test_a_rebinding_name_is_crawled_at_the_checked_address_only(
        self, site: Site, rebinding_dns: RebindingDns, tmp_path: Path
    ) -> None:
        build_site(site)
        port = site.server.server_address[1]
        connector = WebConnector(
            WebConfig(start_url=f"http://docs.rebind.test:{port}/"), None, checked_options(tmp_path)
        )
        listing = await connector.list_files()
        await connector.aclose()
        # every page came from the test server (the name has no real DNS answer at all)
        assert listing.complete, listing.note
        assert {f.name for f in listing.files} == {"index.md", "a.md", "c.md", "notes.txt"}
        assert rebinding_dns.lookups == ["docs.rebind.test"]  # later answers never asked for
        assert site.hosts == {f"docs.rebind.test:{port}"}  # the name, not the address

    async def test_a_name_that_first_resolves_inside_is_refused_before_any_request(
        self, site: Site, rebinding_dns: RebindingDns, tmp_path: Path
    ) -> None:
        build_site(site)
        rebinding_dns.first = RebindingDns.INTERNAL
        port = site.server.server_address[1]
        connector = WebConnector(
            WebConfig(start_url=f"http://docs.rebind.test:{port}/"), None, checked_options(tmp_path)
        )
        with pytest.raises(NetworkRefusedError, match="resolves to a non-public address"):
            await connector.list_files()
        await connector.aclose()
        assert site.hits == []
