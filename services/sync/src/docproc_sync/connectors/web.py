"""``web``: a crawler over one site, its pages indexed as text.

Scope is the start URL's site (same scheme, host and port), optionally narrowed
to a path prefix; robots.txt is obeyed (a site whose robots.txt cannot be read
is not crawled at all, and that listing is incomplete). The listing is
``complete=False`` when the crawl stops at ``max_pages`` with pages left to
visit, or when a page timed out or answered 5xx: such a run deletes nothing.

Change signal: a page's ``ETag`` (or ``Last-Modified``), compared before the
page is converted, parsed and embedded. A crawler has to read a page to find its
links, so the signal saves the embedding, not the transfer.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import shutil
import tempfile
from collections import deque
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit
from urllib.robotparser import RobotFileParser

import httpx
from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.errors import ConnectorError
from docproc_common.connectors.specs.web import (
    WebConfig,
    WebSpec,
    normalize,
)
from docproc_common.egress.pinned import PinnedTransport

from docproc_sync.connectors.base import BaseSyncConnector, RemoteFile, RemoteListing, copy_into
from docproc_sync.connectors.html_text import parse_html
from docproc_sync.connectors.http_retry import read_capped

USER_AGENT = "docproc-sync"
MAX_PAGE_BYTES = 10 * 1024 * 1024
MAX_CRAWL_DELAY_S = 5.0
DOCUMENT_TYPES = {
    "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "text/markdown": "md",
    "text/plain": "txt",
}
DOCUMENT_EXTENSIONS = {"pdf", "docx", "md", "txt"}


def page_name(url: str, extension: str) -> str:
    """A label for a page: its last path segment (decoded), ``index`` for a directory."""
    segment = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    if extension == "md" and not segment.lower().endswith((".md", ".markdown")):
        stem = segment
        for ext in (".html", ".htm", ".php", ".aspx", ".asp", ".jsp"):
            if stem.lower().endswith(ext):
                stem = stem[: -len(ext)]
        return f"{stem or 'index'}.md"
    return segment or f"index.{extension}"


class WebConnector(WebSpec, BaseSyncConnector[WebConfig]):
    def __init__(
        self, config: WebConfig, secret: Mapping[str, Any] | None, options: ConnectorOptions
    ) -> None:
        super().__init__(config, secret, options)
        start = normalize(config.start_url)
        if start is None:
            raise ConnectorError("The start URL must be an http or https URL")
        self.start = start
        parts = urlsplit(start)
        self.site = (parts.scheme, parts.netloc)
        self.prefix = config.path_prefix or "/"
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if options.work_dir is not None:
            self.cache = Path(options.work_dir) / "web-cache"
        else:
            self._tmp = tempfile.TemporaryDirectory(prefix="docproc-web-")
            self.cache = Path(self._tmp.name)
        self.cache.mkdir(parents=True, exist_ok=True)
        self._names = itertools.count()

    def in_scope(self, url: str) -> bool:
        parts = urlsplit(url)
        return (parts.scheme, parts.netloc) == self.site and parts.path.startswith(self.prefix)

    async def list_files(self) -> RemoteListing:
        timeout = self.config.page_timeout_s
        # the first request checks the host (refusing an internal one); every request then
        # goes to the address that check accepted
        pinned = PinnedTransport(allow_private=self.options.allow_private_networks)
        async with httpx.AsyncClient(
            transport=pinned,
            timeout=timeout,
            follow_redirects=False,
            headers={"User-Agent": USER_AGENT},
        ) as client:
            robots, note = await self._robots(client)
            if robots is None:
                return RemoteListing([], complete=False, note=note)
            delay = min(float(robots.crawl_delay(USER_AGENT) or 0), MAX_CRAWL_DELAY_S)
            return await self._crawl(client, robots, delay)

    async def _robots(self, client: httpx.AsyncClient) -> tuple[RobotFileParser | None, str]:
        url = urlunsplit((*self.site, "/robots.txt", "", ""))
        parser = RobotFileParser()
        try:
            response = await asyncio.wait_for(client.get(url), self.config.page_timeout_s)
        except (httpx.HTTPError, TimeoutError):
            return None, "robots.txt could not be read; nothing was crawled"
        if response.status_code >= 500:
            return None, f"robots.txt answered {response.status_code}; nothing was crawled"
        if response.status_code >= 400 or response.status_code in range(300, 400):
            parser.parse([])  # no robots.txt: everything is allowed
        else:
            parser.parse(response.text.splitlines())
        return parser, ""

    async def _crawl(
        self, client: httpx.AsyncClient, robots: RobotFileParser, delay: float
    ) -> RemoteListing:
        frontier: deque[str] = deque([self.start])
        seen = {self.start}
        files: list[RemoteFile] = []
        problems: list[str] = []
        fetched = 0
        while frontier:
            if fetched >= self.config.max_pages:
                problems.append(f"stopped at the page limit ({self.config.max_pages})")
                break
            url = frontier.popleft()
            if not self.in_scope(url) or not robots.can_fetch(USER_AGENT, url):
                continue
            if fetched and delay:
                await asyncio.sleep(delay)
            fetched += 1
            try:
                response = await asyncio.wait_for(
                    self._get(client, url), self.config.page_timeout_s
                )
            except TimeoutError:
                problems.append(f"{url} timed out")
                continue
            except httpx.HTTPError as exc:
                problems.append(f"{url} failed: {type(exc).__name__}")
                continue
            if response is None:
                continue  # larger than MAX_PAGE_BYTES: not indexed
            status, headers, body = response
            if status in range(300, 400) and "location" in headers:
                target = normalize(urljoin(url, headers["location"]))
                if target and target not in seen and self.in_scope(target):
                    seen.add(target)
                    frontier.appendleft(target)
                continue
            if status >= 500 or status == 429:
                problems.append(f"{url} answered {status}")
                continue
            if status != 200:
                continue
            version = headers.get("etag") or headers.get("last-modified")
            ctype = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            ext = PurePosixPath(urlsplit(url).path).suffix.lower().lstrip(".")
            if ctype in {"text/html", "application/xhtml+xml"}:
                page = parse_html(body.decode(_charset(headers), errors="replace"))
                if not page.nofollow:
                    base = urljoin(url, page.base_href) if page.base_href else url
                    for href in page.links:
                        target = normalize(urljoin(base, href))
                        if target and target not in seen and self.in_scope(target):
                            seen.add(target)
                            frontier.append(target)
                if page.noindex or not page.text.strip():
                    continue
                files.append(self._cached(url, page_name(url, "md"), page.text.encode(), version))
            elif self.config.include_documents and (
                ctype in DOCUMENT_TYPES or ext in DOCUMENT_EXTENSIONS
            ):
                kind = ext if ext in DOCUMENT_EXTENSIONS else DOCUMENT_TYPES[ctype]
                files.append(self._cached(url, page_name(url, kind), body, version))
        note = "; ".join(problems[:5]) + (
            f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""
        )
        return RemoteListing(files, complete=not problems, note=note or None)

    async def _get(
        self, client: httpx.AsyncClient, url: str
    ) -> tuple[int, dict[str, str], bytes] | None:
        async with client.stream("GET", url) as response:
            headers = {k.lower(): v for k, v in response.headers.items()}
            if response.status_code != 200:
                return response.status_code, headers, b""
            declared = headers.get("content-length", "")
            if declared.isdigit() and int(declared) > MAX_PAGE_BYTES:
                return None
            body = await read_capped(response, MAX_PAGE_BYTES)
            return None if body is None else (200, headers, body)

    def _cached(self, url: str, name: str, data: bytes, version: str | None) -> RemoteFile:
        path = self.cache / f"page-{next(self._names)}"
        path.write_bytes(data)
        return RemoteFile(address=url, name=name, size=len(data), version=version, key=str(path))

    async def _fetch(self, remote: RemoteFile, dest: Path) -> None:
        await self.blocking(copy_into, Path(remote.key), dest)

    async def aclose(self) -> None:
        if self._tmp is not None:
            with contextlib.suppress(OSError):
                self._tmp.cleanup()
        elif self.cache.exists():
            shutil.rmtree(self.cache, ignore_errors=True)


def _charset(headers: dict[str, str]) -> str:
    for part in headers.get("content-type", "").split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            candidate = value.strip("\"' ")
            try:
                "".encode(candidate)
            except LookupError:
                break
            return candidate
    return "utf-8"
