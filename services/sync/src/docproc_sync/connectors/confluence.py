"""``confluence``: the pages of one Confluence Cloud space, or of one page tree in it, over REST v2.

Scope: the space named by ``space_key`` (its id from ``GET /wiki/api/v2/spaces?keys=``)
and every current page in it (``GET /spaces/{id}/pages``), or, with
``root_page_id``, that page and the pages under it (``GET /pages/{id}/descendants``,
again from every descendant at the deepest level one call returns, then
``GET /pages?id=`` for their versions). With ``include_attachments`` each listed
page's attachments are listed too (``GET /pages/{id}/attachments``), and read from
their download link; the sync decides by the file name's type which are read at all.

Change signal: ``version.number``, of each page and each attachment, read from the
listing, which carries no bodies. A page's body is fetched
(``GET /pages/{id}?body-format=storage``) only when its version is not the one this
source recorded, so a run over an unchanged space costs its listing. A page is one
document per page id: its address is ``<site>/wiki/pages/viewpage.action?pageId=<id>``,
so a renamed or moved page is the same document updated, never a delete and an add.
Its file is ``<title>.md`` (the title is a label: a separator in it becomes ``-``),
the title as a heading over the storage-format body as text (``parse_storage``).

The listing is ``complete=False`` when a request of it goes unanswered: 429 or 503
past the retries (``Retry-After`` obeyed, else backoff; a wait longer than a minute is
not waited out), a timeout, another 5xx, or the listing limit. Such a run deletes
nothing. A refused credential (401), refused access (403) or a space or root page that
cannot be found end the run with the stage, the status and advice, never Confluence's
own text (which can name the account or the site).

Credential: the source's ``confluence_token`` secret, an Atlassian account's email and
API token (HTTP Basic) or a bearer token. Requests go to the site's address as
checked (``PinnedTransport``), never to a host an answer names, at most
``MAX_CONCURRENT`` at a time.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import httpx
from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.errors import ClientFailedError, ConnectorError, Subject
from docproc_common.connectors.specs.confluence import (
    CONTENT_ID,
    ConfluenceConfig,
    ConfluenceSpec,
    site_origin,
)
from docproc_common.egress.pinned import PinnedTransport
from pydantic import BaseModel, ConfigDict

from docproc_sync.connectors.base import BaseSyncConnector, RemoteFile, RemoteListing, write_into
from docproc_sync.connectors.html_text import parse_storage
from docproc_sync.connectors.http_retry import RetryPolicy, read_capped, send
from docproc_sync.connectors.landing import open_landing

T = TypeVar("T")

API = "/wiki/api/v2"
PAGE_LIMIT = 250  # the most v2 answers in one page of a listing
DESCENDANT_DEPTH = 5
MAX_CONCURRENT = 4
MAX_LISTING_REQUESTS = 5000
MAX_ANSWER_BYTES = 64 * 1024 * 1024
MAX_DOWNLOAD_BYTES = 512 * 1024 * 1024
MAX_REDIRECTS = 5
ATTACHMENT_ID = re.compile(r"^(?:att)?[0-9]{1,20}$")
#: Content types of the page tree whose own descendants can be asked for.
TREE_KINDS = {
    "page": "pages",
    "folder": "folders",
    "whiteboard": "whiteboards",
    "database": "databases",
    "embed": "embeds",
}
REASONS = {
    400: "request refused",
    401: "authentication refused",
    403: "access refused",
    404: "not found",
    429: "rate limited",
    500: "server error",
    502: "bad gateway",
    503: "unavailable",
    504: "gateway timeout",
}


class ConfluenceSecret(BaseModel):
    """The ``confluence_token`` secret's value."""

    model_config = ConfigDict(extra="ignore")

    email: str | None = None
    api_token: str | None = None
    bearer_token: str | None = None

    def authorization(self) -> str | None:
        if self.email and self.api_token:
            pair = f"{self.email}:{self.api_token}".encode()
            return f"Basic {base64.b64encode(pair).decode()}"
        if self.bearer_token:
            return f"Bearer {self.bearer_token}"
        return None


class ConfluenceAnsweredError(Exception):
    """Confluence's own answer to a refused request: the cause of a ``ClientFailedError``,
    logged, never stored (its text can name the account, the site or the page)."""


class UnansweredError(ClientFailedError):
    """A request throttled past the retries, timed out or answered 5xx: a listing stops there,
    incomplete; a page's read is that page's failure."""


def page_label(title: str) -> str:
    """A page's file name: its title (a separator becomes ``-``, controls dropped) + ``.md``."""
    flat = "".join(c for c in title.replace("/", "-").replace("\\", "-") if c.isprintable())
    return f"{' '.join(flat.split()) or 'untitled'}.md"


def page_text(title: str, storage: str) -> bytes:
    """Blocking: the markdown a page becomes, its title as the heading."""
    body = parse_storage(storage)
    heading = " ".join(title.split())
    return (f"# {heading}\n\n{body}" if heading else body).encode()


def _version(item: Mapping[str, Any]) -> str | None:
    number = (item.get("version") or {}).get("number")
    return f"v{number}" if isinstance(number, int) and not isinstance(number, bool) else None


def _batched(items: list[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class ConfluenceConnector(ConfluenceSpec, BaseSyncConnector[ConfluenceConfig]):
    RETRY = RetryPolicy()

    def __init__(
        self, config: ConfluenceConfig, secret: Mapping[str, Any] | None, options: ConnectorOptions
    ) -> None:
        super().__init__(config, secret, options)
        authorization = ConfluenceSecret.model_validate(dict(self.secret)).authorization()
        if authorization is None:
            raise ConnectorError(
                "The source's confluence_token secret has neither an email and api_token "
                "nor a bearer_token"
            )
        origin, refusal = site_origin(config.site_url, options)
        if origin is None:
            raise ConnectorError(refusal or "The site URL is not accepted")
        self.origin = origin
        self._authorization = authorization
        self._client: httpx.AsyncClient | None = None
        self._slots = asyncio.Semaphore(MAX_CONCURRENT)
        self._listing_requests = 0

    def page_address(self, page_id: str) -> str:
        return f"{self.origin}/wiki/pages/viewpage.action?pageId={page_id}"

    # -- requests ---------------------------------------------------------------------------

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                transport=PinnedTransport(allow_private=self.options.allow_private_networks),
                timeout=self.options.timeout_s,
                follow_redirects=False,
                max_redirects=MAX_REDIRECTS,
                headers={
                    "Authorization": self._authorization,
                    "Accept": "application/json",
                    "User-Agent": "docproc-sync",
                },
            )
        return self._client

    async def _send(
        self, url: str, params: Mapping[str, Any] | None, subject: Subject, *, download: bool
    ) -> httpx.Response:
        """One GET through the retries, its body unread; a failure in docproc's words."""
        client = self._http()
        try:
            response = await send(
                client,
                lambda: client.build_request("GET", url, params=params),
                self.RETRY,
                follow_redirects=download,
                stream=True,
            )
        except httpx.TimeoutException as exc:
            raise UnansweredError("Confluence: timed out", subject=subject) from exc
        except httpx.HTTPError as exc:
            raise ClientFailedError(f"Confluence: {type(exc).__name__}", subject=subject) from exc
        status = response.status_code
        if status == 200:
            return response
        answer = (await response.aread())[:2000].decode(errors="replace")
        await response.aclose()
        kind = f"Confluence {status}: {REASONS.get(status, 'refused')}"
        cause = ConfluenceAnsweredError(f"{status} {answer}")
        if status in (429, 503) or status >= 500:
            raise UnansweredError(kind, subject=subject) from cause
        raise ClientFailedError(kind, subject=subject) from cause

    async def _json(
        self, path: str, params: Mapping[str, Any] | None = None, subject: Subject = "source"
    ) -> dict[str, Any]:
        async with self._slots:
            response = await self._send(self.origin + path, params, subject, download=False)
            try:
                data = await read_capped(response, MAX_ANSWER_BYTES)
            except httpx.HTTPError as exc:
                raise UnansweredError("Confluence: answer cut short", subject=subject) from exc
            finally:
                await response.aclose()
        if data is None:
            raise ClientFailedError("Confluence: answer too large", subject=subject)
        try:
            body = json.loads(data)
        except ValueError as exc:
            raise ClientFailedError("Confluence: not JSON", subject=subject) from exc
        if not isinstance(body, dict):
            raise ClientFailedError("Confluence: not a JSON object", subject=subject)
        return body

    async def _paged(
        self, path: str, params: Mapping[str, Any], into: list[dict[str, Any]]
    ) -> None:
        """Every result of a cursor-paged listing, appended to ``into`` page by page (so a
        listing cut half-way keeps what it had)."""
        url: str | None = path
        query: Mapping[str, Any] | None = {**params, "limit": PAGE_LIMIT}
        followed: set[str] = set()
        while url is not None:
            self._listing_requests += 1
            if self._listing_requests > MAX_LISTING_REQUESTS:
                raise ListingLimitError(
                    f"stopped at the listing limit ({MAX_LISTING_REQUESTS} requests)"
                )
            body = await self._json(url, query)
            into.extend(r for r in body.get("results") or [] if isinstance(r, dict))
            following = (body.get("_links") or {}).get("next")
            if not following:
                return
            if not isinstance(following, str) or not following.startswith(f"{API}/"):
                raise ClientFailedError("Confluence: a next link outside the API", subject="source")
            if following in followed:
                raise ClientFailedError("Confluence: a next link repeated", subject="source")
            followed.add(following)
            url, query = following, None

    # -- listing ----------------------------------------------------------------------------

    async def list_files(self) -> RemoteListing:
        pages: list[dict[str, Any]] = []
        files: list[RemoteFile] = []
        try:
            space = await self._space_id()
            if self.config.root_page_id is None:
                await self._paged(f"{API}/spaces/{space}/pages", {"status": "current"}, pages)
            else:
                await self._tree(space, self.config.root_page_id, pages)
            files = self._page_files(pages, space)
            if self.config.include_attachments:
                await self._attachments([f.key for f in files], files)
        except (UnansweredError, ListingLimitError) as exc:
            if not files:
                files = self._page_files(pages, None)
            note = exc.kind if isinstance(exc, UnansweredError) else exc.message
            return RemoteListing(
                files, complete=False, note=f"the listing stopped: {note} ({len(files)} listed)"
            )
        return RemoteListing(files, complete=True)

    async def _space_id(self) -> str:
        key = self.config.space_key
        body = await self._json(f"{API}/spaces", {"keys": key})
        for space in body.get("results") or []:
            if isinstance(space, dict) and str(space.get("key", "")).lower() == key.lower():
                space_id = str(space.get("id", ""))
                if CONTENT_ID.fullmatch(space_id):
                    return space_id
        raise ConnectorError(
            f"The space {key} was not found, or the source's credential cannot read it"
        )

    async def _tree(self, space: str, root: str, into: list[dict[str, Any]]) -> None:
        """The root page and its descendants that are pages, with their versions."""
        try:
            page = await self._json(f"{API}/pages/{root}")
        except ClientFailedError as exc:
            if exc.kind.startswith("Confluence 404"):
                raise ConnectorError(
                    f"The root page {root} was not found, or the source's credential cannot read it"
                ) from exc
            raise
        if str(page.get("spaceId", "")) != space:
            raise ConnectorError(
                f"The root page {root} is not in the space {self.config.space_key}"
            )
        ids = [root]
        below: list[tuple[str, str]] = [("pages", root)]
        while below:
            kind, content = below.pop()
            found: list[dict[str, Any]] = []
            await self._paged(
                f"{API}/{kind}/{content}/descendants", {"depth": DESCENDANT_DEPTH}, found
            )
            for item in found:
                item_id, item_type = str(item.get("id", "")), str(item.get("type", ""))
                if not CONTENT_ID.fullmatch(item_id):
                    continue
                if item_type == "page" and item.get("status", "current") == "current":
                    ids.append(item_id)
                if item.get("depth") == DESCENDANT_DEPTH and item_type in TREE_KINDS:
                    below.append((TREE_KINDS[item_type], item_id))
        for chunk in _batched(list(dict.fromkeys(ids)), PAGE_LIMIT):
            await self._paged(f"{API}/pages", {"id": ",".join(chunk), "status": "current"}, into)

    def _page_files(self, pages: list[dict[str, Any]], space: str | None) -> list[RemoteFile]:
        files: list[RemoteFile] = []
        for page in pages:
            page_id = str(page.get("id", ""))
            if not CONTENT_ID.fullmatch(page_id):
                continue
            if space is not None and str(page.get("spaceId", space)) != space:
                continue
            files.append(
                RemoteFile(
                    address=self.page_address(page_id),
                    name=page_label(str(page.get("title") or "")),
                    version=_version(page),
                    key=page_id,
                )
            )
        return files

    async def _attachments(self, page_ids: list[str], into: list[RemoteFile]) -> None:
        async def one(page_id: str) -> None:
            found: list[dict[str, Any]] = []
            await self._paged(f"{API}/pages/{page_id}/attachments", {"status": "current"}, found)
            into.extend(f for f in (self._attachment_file(page_id, a) for a in found) if f)

        await _each(page_ids, one)

    def _attachment_file(self, page_id: str, item: Mapping[str, Any]) -> RemoteFile | None:
        attachment_id = str(item.get("id", ""))
        link = item.get("downloadLink")
        if not ATTACHMENT_ID.fullmatch(attachment_id) or not isinstance(link, str):
            return None
        if not link.startswith("/download/"):
            return None  # never a host or a path outside the site's downloads
        size = item.get("fileSize")
        return RemoteFile(
            address=f"{self.page_address(page_id)}#{attachment_id}",
            name=str(item.get("title") or ""),
            size=size if isinstance(size, int) and not isinstance(size, bool) else None,
            version=_version(item),
            key=f"/wiki{link}",
        )

    # -- fetching ---------------------------------------------------------------------------

    async def _fetch(self, remote: RemoteFile, dest: Path) -> None:
        if remote.key.startswith("/wiki/download/"):
            await self._download(remote.key, dest)
            return
        page = await self._json(
            f"{API}/pages/{remote.key}", {"body-format": "storage"}, subject="document"
        )
        storage = ((page.get("body") or {}).get("storage") or {}).get("value")
        title = str(page.get("title") or "")
        text = await self.blocking(page_text, title, storage if isinstance(storage, str) else "")
        await self.blocking(write_into, dest, text)

    async def _download(self, path: str, dest: Path) -> None:
        async with self._slots:
            response = await self._send(self.origin + path, None, "document", download=True)
            try:
                fd = await self.blocking(open_landing, dest)
                with open(fd, "wb") as out:
                    written = 0
                    async for chunk in response.aiter_bytes(1 << 20):
                        written += len(chunk)
                        if written > MAX_DOWNLOAD_BYTES:
                            raise ClientFailedError(
                                "Confluence: file too large", subject="document"
                            )
                        await self.blocking(out.write, chunk)
            except httpx.HTTPError as exc:
                raise UnansweredError("Confluence: download cut short", subject="document") from exc
            finally:
                await response.aclose()

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


class ListingLimitError(ConnectorError):
    """The listing reached ``MAX_LISTING_REQUESTS``: what it has is incomplete."""


async def _each(items: Iterable[T], fn: Callable[[T], Coroutine[Any, Any, None]]) -> None:
    """``fn`` over every item at once (the request slots bound them); the first failure is
    raised as itself, and the rest are cancelled."""
    tasks = [asyncio.create_task(fn(item)) for item in items]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
