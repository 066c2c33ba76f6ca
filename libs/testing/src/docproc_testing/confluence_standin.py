"""A strict stand-in for the Confluence Cloud REST v2 subset the ``confluence`` connector uses.

Served on 127.0.0.1 (``running_confluence``). It answers what Atlassian documents:

* ``GET /wiki/api/v2/spaces?keys=`` - spaces by key;
* ``GET /wiki/api/v2/spaces/{id}/pages`` - a space's pages, ``version`` and ``parentId``
  and no body unless ``body-format`` asks for one;
* ``GET /wiki/api/v2/pages?id=`` - pages by id (at most 250 ids);
* ``GET /wiki/api/v2/pages/{id}?body-format=storage`` - one page with
  ``body.storage.value`` (counted: ``body_fetches``, ``body_bytes``);
* ``GET /wiki/api/v2/{pages,folders}/{id}/descendants?depth=`` - the content tree below,
  top to bottom, with ``depth`` and ``type``;
* ``GET /wiki/api/v2/pages/{id}/attachments`` - with ``downloadLink``, and
  ``GET /wiki/download/attachments/{page}/{file}`` - the bytes (counted: ``downloads``).

Listings are cursor-paged (``limit`` 1-250, default 25; ``_links.next`` and a ``Link``
header carry an opaque cursor bound to the query). It refuses what the real API refuses,
with Atlassian's ``{"errors": [...]}`` body: an unknown query parameter, a ``limit`` out
of range, an unknown ``body-format`` or ``status``, a cursor it did not issue (400);
missing or wrong credentials (401, the body naming the account and the site, as a
gateway's can - a stored error must never carry it); an id it does not hold (404).
``fault(...)`` scripts 429 (with ``Retry-After`` and ``X-RateLimit-*``) or 503 answers.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from docproc_testing.servers import KeepAliveHandler, serving

API = "/wiki/api/v2"
LIST_PARAMS = {"ids", "keys", "id", "space-id", "status"}
PAGE_STATUSES = {"current", "archived", "deleted", "trashed"}
BULK_BODY_FORMATS = {"storage", "atlas_doc_format"}
PAGE_BODY_FORMATS = BULK_BODY_FORMATS | {
    "view",
    "export_view",
    "anonymous_export_view",
    "styled_view",
    "editor",
}
MAX_DESCENDANT_DEPTH = 5


@dataclass
class Content:
    id: str
    space_id: str
    title: str
    parent_id: str | None
    type: str = "page"  # or "folder"
    body: str = ""
    version: int = 1
    status: str = "current"


@dataclass
class Attachment:
    id: str
    page_id: str
    title: str
    data: bytes
    media_type: str
    version: int = 1


@dataclass
class Fault:
    status: int
    path: str  # a path prefix the fault answers
    times: int | None  # None: every time
    after: int = 0  # matching requests let through first
    retry_after: str | None = "0"
    seen: int = 0


class Refusal(Exception):
    def __init__(self, status: int, code: str, title: str) -> None:
        super().__init__(title)
        self.status, self.code, self.title = status, code, title


def _error_body(status: int, code: str, title: str, detail: str | None = None) -> dict[str, Any]:
    return {"errors": [{"status": status, "code": code, "title": title, "detail": detail}]}


@dataclass
class ConfluenceStandIn:
    email: str = "reader@acme.example"
    api_token: str = "ATATT-standin-token"
    bearer_token: str | None = None
    port: int = 0
    spaces: dict[str, str] = field(default_factory=dict)  # id -> key
    contents: dict[str, Content] = field(default_factory=dict)
    attachments: dict[str, Attachment] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    refused: list[tuple[int, str]] = field(default_factory=list)
    body_fetches: Counter[str] = field(default_factory=Counter)
    body_bytes: int = 0
    downloads: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(65537))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- the site's content -----------------------------------------------------------------

    def add_space(self, key: str) -> str:
        with self.lock:
            space_id = str(next(self._ids))
            self.spaces[space_id] = key
            return space_id

    def _space(self, key: str) -> str:
        return next(i for i, k in self.spaces.items() if k == key)

    def add_page(
        self, space: str, title: str, body: str = "", parent: str | None = None, kind: str = "page"
    ) -> str:
        with self.lock:
            content_id = str(next(self._ids))
            self.contents[content_id] = Content(
                content_id, self._space(space), title, parent, kind, body
            )
            return content_id

    def edit(self, content_id: str, *, title: str | None = None, body: str | None = None) -> None:
        """A new version (a title change is one, as in Confluence)."""
        with self.lock:
            page = self.contents[content_id]
            page.title = title if title is not None else page.title
            page.body = body if body is not None else page.body
            page.version += 1

    def move(self, content_id: str, parent: str | None) -> None:
        """A move changes the tree, not the page: no new version."""
        with self.lock:
            self.contents[content_id].parent_id = parent

    def delete(self, content_id: str) -> None:
        """Gone with its attachments; its children move up to its parent, as in Confluence."""
        with self.lock:
            gone = self.contents.pop(content_id)
            for child in self.contents.values():
                if child.parent_id == content_id:
                    child.parent_id = gone.parent_id
            for attachment_id in [
                a.id for a in self.attachments.values() if a.page_id == content_id
            ]:
                del self.attachments[attachment_id]

    def attach(self, page: str, title: str, data: bytes, media_type: str) -> str:
        with self.lock:
            attachment_id = f"att{next(self._ids)}"
            self.attachments[attachment_id] = Attachment(
                attachment_id, page, title, data, media_type
            )
            return attachment_id

    def fault(
        self,
        status: int,
        path: str = API,
        *,
        times: int | None = None,
        after: int = 0,
        retry_after: str | None = "0",
    ) -> Fault:
        with self.lock:
            fault = Fault(status, path, times, after, retry_after)
            self.faults.append(fault)
            return fault

    def reset_counts(self) -> None:
        with self.lock:
            self.requests.clear()
            self.refused.clear()
            self.body_fetches.clear()
            self.body_bytes = 0
            self.downloads.clear()

    # -- answering --------------------------------------------------------------------------

    def authorized(self, header: str | None) -> bool:
        pair = base64.b64encode(f"{self.email}:{self.api_token}".encode()).decode()
        accepted = {f"Basic {pair}"}
        if self.bearer_token:
            accepted.add(f"Bearer {self.bearer_token}")
        return header in accepted

    def answer(self, target: str, authorization: str | None) -> tuple[int, dict[str, str], bytes]:
        with self.lock:
            self.requests.append(target)
            parts = urlsplit(target)
            path = unquote(parts.path)
            for fault in self.faults:
                if not path.startswith(fault.path):
                    continue
                fault.seen += 1
                if fault.seen <= fault.after:
                    continue
                if fault.times is not None and fault.seen > fault.after + fault.times:
                    continue
                return self._fault(fault)
            if not self.authorized(authorization):
                body = _error_body(
                    401,
                    "UNAUTHORIZED",
                    "Unauthorized",
                    f"The API token of {self.email} for {self.url} is expired or revoked",
                )
                self.refused.append((401, target))
                return 401, {"WWW-Authenticate": 'Basic realm="protected"'}, _json(body)
            try:
                return self._route(parts.path, parts.query)
            except Refusal as refusal:
                self.refused.append((refusal.status, target))
                body = _error_body(refusal.status, refusal.code, refusal.title)
                return refusal.status, {}, _json(body)

    def _fault(self, fault: Fault) -> tuple[int, dict[str, str], bytes]:
        headers: dict[str, str] = {}
        if fault.retry_after is not None:
            headers["Retry-After"] = fault.retry_after
        if fault.status == 429:
            headers |= {"X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "0"}
            body = _error_body(429, "TOO_MANY_REQUESTS", "Rate limit exceeded")
        else:
            body = _error_body(fault.status, "SERVICE_UNAVAILABLE", "Service unavailable")
        return fault.status, headers, _json(body)

    def _route(self, raw_path: str, raw_query: str) -> tuple[int, dict[str, str], bytes]:
        segments = [unquote(s) for s in raw_path.strip("/").split("/")]  # %2F stays in its segment
        path = "/" + "/".join(segments)
        if path.startswith("/wiki/download/attachments/") and len(segments) == 5:
            return self._download(segments[3], segments[4], raw_query)
        if not path.startswith(f"{API}/"):
            raise Refusal(404, "NOT_FOUND", "No such resource")
        rest = segments[3:]
        if rest == ["spaces"]:
            return self._spaces(_query(raw_query, {"ids", "keys", "type", "status", "labels",
                "favorited-by", "not-favorited-by", "sort", "description-format",
                "include-icon", "cursor", "limit"}), path)  # fmt: skip
        if len(rest) == 3 and rest[0] == "spaces" and rest[2] == "pages":
            query = _query(raw_query, {"depth", "sort", "status", "title", "body-format",
                "cursor", "limit"})  # fmt: skip
            if rest[1] not in self.spaces:
                raise Refusal(404, "NOT_FOUND", "Space not found")
            pages = [c for c in self._pages() if c.space_id == rest[1] and self._listed(c, query)]
            if query.get("depth") == "root":
                pages = [p for p in pages if p.parent_id is None]
            elif query.get("depth") not in (None, "all"):
                raise Refusal(400, "INVALID_REQUEST_PARAMETER", "depth must be all or root")
            return self._paged(path, query, [self._page(p, query) for p in pages])
        if rest == ["pages"]:
            query = _query(raw_query, {"id", "space-id", "sort", "status", "title",
                "body-format", "subtype", "cursor", "limit"})  # fmt: skip
            wanted = query["id"].split(",") if "id" in query else None
            if wanted is not None and (len(wanted) > 250 or not all(w.isdigit() for w in wanted)):
                raise Refusal(400, "INVALID_REQUEST_PARAMETER", "id takes up to 250 page ids")
            pages = [
                c
                for c in self._pages()
                if (wanted is None or c.id in wanted) and self._listed(c, query)
            ]
            return self._paged(path, query, [self._page(p, query) for p in pages])
        if len(rest) == 2 and rest[0] == "pages":
            query = _query(raw_query, {"body-format", "get-draft", "status", "version",
                "include-labels", "include-properties", "include-versions"})  # fmt: skip
            page = self._content(rest[1], "page")
            fmt = query.get("body-format")
            if fmt is not None and fmt not in PAGE_BODY_FORMATS:
                raise Refusal(400, "INVALID_REQUEST_PARAMETER", "Unknown body-format")
            if fmt == "storage":
                self.body_fetches[page.id] += 1
                self.body_bytes += len(page.body.encode())
            return 200, {}, _json(self._page(page, query))
        if len(rest) == 3 and rest[0] in {"pages", "folders"} and rest[2] == "descendants":
            query = _query(raw_query, {"limit", "depth", "cursor"})
            top = self._content(rest[1], rest[0].removesuffix("s"))
            depth = _int(query.get("depth", "5"), "depth", 1, MAX_DESCENDANT_DEPTH)
            return self._paged(path, query, self._descendants(top.id, depth))
        if len(rest) == 3 and rest[0] == "pages" and rest[2] == "attachments":
            query = _query(raw_query, {"sort", "cursor", "status", "mediaType", "filename",
                "limit"})  # fmt: skip
            page = self._content(rest[1], "page")
            found = [a for a in self.attachments.values() if a.page_id == page.id]
            return self._paged(path, query, [self._attachment(a) for a in found])
        raise Refusal(404, "NOT_FOUND", "No such resource")

    def _pages(self) -> list[Content]:
        return [c for c in self.contents.values() if c.type == "page"]

    def _content(self, content_id: str, kind: str) -> Content:
        if not content_id.isdigit():
            raise Refusal(400, "INVALID_REQUEST_PARAMETER", "The id is not a content id")
        found = self.contents.get(content_id)
        if found is None or found.type != kind:
            raise Refusal(404, "NOT_FOUND", f"No {kind} with that id")
        return found

    @staticmethod
    def _listed(page: Content, query: dict[str, str]) -> bool:
        statuses = query.get("status", "current").split(",")
        if not set(statuses) <= PAGE_STATUSES:
            raise Refusal(400, "INVALID_REQUEST_PARAMETER", "Unknown status")
        fmt = query.get("body-format")
        if fmt is not None and fmt not in BULK_BODY_FORMATS:
            raise Refusal(400, "INVALID_REQUEST_PARAMETER", "Unknown body-format")
        return page.status in statuses

    def _spaces(self, query: dict[str, str], path: str) -> tuple[int, dict[str, str], bytes]:
        keys = query["keys"].split(",") if "keys" in query else None
        found = [
            {"id": i, "key": k, "name": k, "type": "global", "status": "current"}
            for i, k in self.spaces.items()
            if keys is None or k in keys
        ]
        return self._paged(path, query, found)

    def _page(self, page: Content, query: dict[str, str]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": page.id,
            "status": page.status,
            "title": page.title,
            "spaceId": page.space_id,
            "parentId": page.parent_id,
            "parentType": "page" if page.parent_id else None,
            "authorId": "557058:standin",
            "createdAt": "2024-01-15T10:30:00.000Z",
            "version": {
                "number": page.version,
                "message": "",
                "minorEdit": False,
                "authorId": "557058:standin",
                "createdAt": "2024-01-15T10:30:00.000Z",
            },
            "_links": {"webui": f"/spaces/{self.spaces[page.space_id]}/pages/{page.id}"},
        }
        fmt = query.get("body-format")
        if fmt:
            value = page.body if fmt == "storage" else ""
            out["body"] = {fmt: {"representation": fmt, "value": value}}
        return out

    def _descendants(self, top: str, depth: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        level = [top]
        for d in range(1, depth + 1):
            children = [c for c in self.contents.values() if c.parent_id in level]
            out += [
                {"id": c.id, "status": c.status, "title": c.title, "type": c.type,
                 "parentId": c.parent_id, "depth": d, "childPosition": n}
                for n, c in enumerate(children)
            ]  # fmt: skip
            level = [c.id for c in children]
        return out

    def _attachment(self, a: Attachment) -> dict[str, Any]:
        link = f"/download/attachments/{a.page_id}/{quote(a.title, safe='')}"
        return {
            "id": a.id,
            "status": "current",
            "title": a.title,
            "pageId": a.page_id,
            "mediaType": a.media_type,
            "fileSize": len(a.data),
            "fileId": hashlib.sha256(a.data).hexdigest()[:32],
            "version": {"number": a.version, "minorEdit": False},
            "downloadLink": f"{link}?version={a.version}&modificationDate=1705314600000&api=v2",
            "_links": {"download": link},
        }

    def _download(
        self, page_id: str, name: str, raw_query: str
    ) -> tuple[int, dict[str, str], bytes]:
        _query(raw_query, {"version", "modificationDate", "cacheVersion", "api"})
        title = unquote(name)
        for a in self.attachments.values():
            if a.page_id == page_id and a.title == title:
                self.downloads[a.id] += 1
                return 200, {"Content-Type": a.media_type}, a.data
        raise Refusal(404, "NOT_FOUND", "No such attachment")

    def _paged(
        self, path: str, query: dict[str, str], items: list[dict[str, Any]]
    ) -> tuple[int, dict[str, str], bytes]:
        limit = _int(query.get("limit", "25"), "limit", 1, 250)
        bound = {k: v for k, v in sorted(query.items()) if k != "cursor"}
        start = 0
        if "cursor" in query:
            start = self._cursor_offset(query["cursor"], path, bound)
        page = items[start : start + limit]
        links: dict[str, str] = {"base": f"{self.url}/wiki"}
        headers: dict[str, str] = {}
        if start + limit < len(items):
            cursor = self._cursor(start + limit, path, bound)
            links["next"] = f"{path}?{urlencode({**bound, 'cursor': cursor})}"
            headers["Link"] = f'<{links["next"]}>; rel="next", <{self.url}/wiki>; rel="base"'
        return 200, headers, _json({"results": page, "_links": links})

    @staticmethod
    def _seal(offset: int, path: str, bound: dict[str, str]) -> str:
        return hashlib.sha256(json.dumps([offset, path, bound]).encode()).hexdigest()[:16]

    def _cursor(self, offset: int, path: str, bound: dict[str, str]) -> str:
        raw = f"{offset}:{self._seal(offset, path, bound)}".encode()
        return base64.urlsafe_b64encode(raw).decode()

    def _cursor_offset(self, cursor: str, path: str, bound: dict[str, str]) -> int:
        try:
            offset_text, seal = base64.urlsafe_b64decode(cursor.encode()).decode().split(":")
            offset = int(offset_text)
        except ValueError:
            raise Refusal(400, "INVALID_CURSOR", "The cursor is not valid") from None
        if seal != self._seal(offset, path, bound):
            raise Refusal(400, "INVALID_CURSOR", "The cursor does not belong to this query")
        return offset


def _json(body: Any) -> bytes:
    return json.dumps(body).encode()


def _int(value: str, name: str, low: int, high: int) -> int:
    if not value.isdigit() or not low <= int(value) <= high:
        raise Refusal(400, "INVALID_REQUEST_PARAMETER", f"{name} must be {low} to {high}")
    return int(value)


def _query(raw: str, allowed: set[str]) -> dict[str, str]:
    """The query's parameters, refusing one the endpoint does not take or a repeated one."""
    out: dict[str, str] = {}
    for key, value in parse_qsl(raw, keep_blank_values=True):
        if key not in allowed:
            raise Refusal(400, "INVALID_REQUEST_PARAMETER", f"Unknown query parameter {key}")
        if key in out and key not in LIST_PARAMS:
            raise Refusal(400, "INVALID_REQUEST_PARAMETER", f"{key} given twice")
        out[key] = f"{out[key]},{value}" if key in out else value
    return out


@contextmanager
def running_confluence(standin: ConfluenceStandIn | None = None) -> Iterator[ConfluenceStandIn]:
    """Serve ``standin`` on a free loopback port until exit."""
    s = standin or ConfluenceStandIn()

    class Handler(KeepAliveHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            status, headers, body = s.answer(self.path, self.headers.get("authorization"))
            self.send_response(status)
            self.send_header("Content-Type", headers.pop("Content-Type", "application/json"))
            self.send_header("Content-Length", str(len(body)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

    with serving(Handler, daemon_threads=True) as port:
        s.port = port
        yield s
