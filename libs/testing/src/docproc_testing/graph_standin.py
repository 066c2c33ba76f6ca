"""A stand-in for Microsoft Graph v1.0 and its token endpoint, served over HTTP on 127.0.0.1.

The documented subset the ``sharepoint`` connector uses, in Graph's own shapes:

* ``POST /{tenant}/oauth2/v2.0/token`` — the client-credentials grant (form-encoded
  ``grant_type``, ``client_id``, ``client_secret``, ``scope``); Entra's error body
  (``error``, ``error_description`` with its AADSTS text naming the tenant and the
  client, ``error_codes``, ``trace_id``…) for an unknown tenant, an unknown client, a
  wrong secret (401 ``invalid_client`` AADSTS7000215) or an expired one (AADSTS7000222).
* ``GET /v1.0/sites/{hostname}`` and ``/sites/{hostname}:/{site-path}``, ``/sites/{id}/drive``,
  ``/sites/{id}/drives`` (paged), ``/sites/{id}/drives/{drive-id}``, ``/users/{id}/drive``,
  ``/drives/{id}/root``, ``/drives/{id}/root:/{path}``.
* ``GET /v1.0/drives/{id}/root/delta`` — a fresh enumeration, or ``?token=`` from an
  ``@odata.nextLink`` (the next page) or an ``@odata.deltaLink`` (what changed since,
  deleted items with the ``deleted`` facet and no name, as OneDrive for Business sends
  them); ``410 Gone`` ``resyncRequired`` (with a ``Location``) once ``invalidate_delta``.
* ``GET /v1.0/drives/{id}/items/{item-id}/content`` — ``302`` to a single-use
  pre-authenticated ``/download/…?tempauth=…`` URL.

It is strict, so a test cannot pass against it by being lenient: every ``/v1.0`` call
needs a bearer token it issued and has not expired (else 401
``InvalidAuthenticationToken``), a query parameter it does not know is a 400, a path it
cannot take apart is a 400 ``invalidRequest``, and an ``Authorization`` header sent to the
download URL is refused *and recorded* in ``violations``. Errors are Graph's
``{"error": {"code", "message", "innerError": {...}}}``. ``fail`` injects 429/503 (with
``Retry-After``) on a route. It counts what it served: ``downloads`` (item names),
``bytes_served``, ``delta_items``, and the peak of downloads in flight.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from docproc_testing.servers import QuietHandler

SCOPE = "https://graph.microsoft.com/.default"


class GraphError(Exception):
    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.headers = headers or {}


def _bad(message: str = "Invalid request") -> GraphError:
    return GraphError(400, "invalidRequest", message)


def _missing(what: str = "The resource could not be found.") -> GraphError:
    return GraphError(404, "itemNotFound", what)


def _item_id() -> str:
    return "01" + secrets.token_hex(16).upper()


@dataclass
class Item:
    id: str
    name: str
    parent: str | None
    folder: bool
    content: bytes = b""
    seq: int = 0
    etag_n: int = 1
    ctag_n: int = 1
    deleted: bool = False
    guid: str = field(default_factory=lambda: str(uuid.uuid4()).upper())


@dataclass
class Fault:
    route: str
    status: int
    times: int  # -1: every time
    retry_after: str | None
    skip: int = 0


class Drive:
    def __init__(self, standin: GraphStandIn, name: str, web_url: str) -> None:
        self.standin = standin
        self.id = "b!" + secrets.token_urlsafe(36)
        self.name = name
        self.web_url = web_url
        root = Item(_item_id(), "root", None, True, seq=standin.tick())
        self.root_id = root.id
        self.items: dict[str, Item] = {root.id: root}

    # -- the tree, for tests ---------------------------------------------------------------

    def children(self, parent: str) -> list[Item]:
        return [i for i in self.items.values() if i.parent == parent and not i.deleted]

    def find(self, path: str) -> Item | None:
        here = self.items[self.root_id]
        for name in [p for p in path.split("/") if p]:
            found = [c for c in self.children(here.id) if c.name.casefold() == name.casefold()]
            if not found:
                return None
            here = found[0]
        return here

    def _folder(self, path: str) -> Item:
        here = self.items[self.root_id]
        for name in [p for p in path.split("/") if p]:
            found = [c for c in self.children(here.id) if c.name.casefold() == name.casefold()]
            if found:
                here = found[0]
            else:
                new = Item(_item_id(), name, here.id, True, seq=self.standin.tick())
                self.items[new.id] = new
                here = new
        return here

    def put(self, path: str, data: bytes, *, name: str | None = None) -> Item:
        """Create or replace a file. With ``name`` the item's raw name (any string: a hostile
        one) and ``path`` the folder it is in."""
        with self.standin.lock:
            if name is None:
                folder_path, _, name = path.rpartition("/")
            else:
                folder_path = path
            folder = self._folder(folder_path)
            existing = [c for c in self.children(folder.id) if c.name == name and not c.folder]
            if existing:
                item = existing[0]
                item.content, item.etag_n, item.ctag_n = data, item.etag_n + 1, item.ctag_n + 1
                item.seq = self.standin.tick()
                return item
            item = Item(_item_id(), name, folder.id, False, data, seq=self.standin.tick())
            self.items[item.id] = item
            return item

    def move(self, path: str, new_path: str) -> None:
        """Move and/or rename: a new parent and name, a new eTag, the same cTag."""
        with self.standin.lock:
            item = self.find(path)
            assert item is not None, path
            folder_path, _, name = new_path.rpartition("/")
            item.parent, item.name = self._folder(folder_path).id, name
            item.etag_n += 1
            item.seq = self.standin.tick()

    def delete(self, path: str) -> None:
        with self.standin.lock:
            item = self.find(path)
            assert item is not None, path
            doomed = [item]
            while doomed:
                gone = doomed.pop()
                doomed += self.children(gone.id)
                gone.deleted, gone.seq = True, self.standin.tick()

    # -- Graph's shapes --------------------------------------------------------------------

    def item_json(self, item: Item, *, delta: bool = False) -> dict[str, Any]:
        if item.deleted:
            # OneDrive for Business omits the name (and cTag) of a deleted item
            return {
                "id": item.id,
                "deleted": {"state": "deleted"},
                "parentReference": {"driveId": self.id, "driveType": "documentLibrary"},
            }
        out: dict[str, Any] = {
            "@odata.type": "#microsoft.graph.driveItem",
            "id": item.id,
            "name": item.name,
            "eTag": f'"{{{item.guid}}},{item.etag_n}"',
            "lastModifiedDateTime": "2024-05-01T10:00:00Z",
            "webUrl": f"{self.web_url}/{item.name}",
            "size": len(item.content),
            "parentReference": {"driveId": self.id, "driveType": "documentLibrary"},
        }
        if not (delta and self.standin.omit_ctag):
            out["cTag"] = f'"c:{{{item.guid}}},{item.ctag_n}"'
        if item.parent is None:
            out["root"] = {}
        else:
            out["parentReference"]["id"] = item.parent
        if item.folder:
            out["folder"] = {"childCount": len(self.children(item.id))}
        else:
            digest = base64.b64encode(hashlib.sha1(item.content).digest()).decode()  # noqa: S324
            out["file"] = {
                "mimeType": "application/octet-stream",
                "hashes": {"quickXorHash": digest},
            }
        return out

    def json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "driveType": "documentLibrary",
            "webUrl": self.web_url,
        }


@dataclass
class Site:
    id: str
    hostname: str
    path: str
    drives: list[Drive]

    def json(self) -> dict[str, Any]:
        name = self.path.rsplit("/", 1)[-1] or self.hostname
        return {
            "id": self.id,
            "name": name,
            "displayName": name,
            "webUrl": f"https://{self.hostname}{self.path}",
            "siteCollection": {"hostname": self.hostname},
        }


@dataclass
class DeltaPage:
    drive_id: str
    items: list[dict[str, Any]]
    offset: int
    upto: int


class GraphStandIn:
    """Graph and its authority on one loopback server; ``login_url`` and ``graph_url`` for them."""

    def __init__(self, *, page_size: int = 200, omit_ctag: bool = False) -> None:
        self.lock = threading.RLock()
        self.page_size = page_size
        self.omit_ctag = omit_ctag
        self.tenant_id = str(uuid.uuid4())
        self.client_id = str(uuid.uuid4())
        self.client_secret = "Zx8Q~" + secrets.token_urlsafe(24)
        self.secret_expired = False
        self.hostname = "contoso.sharepoint.com"
        self._seq = 0
        self.sites: dict[str, Site] = {}
        self.users: dict[str, Drive] = {}
        self.tokens: dict[str, float] = {}  # token -> expiry (monotonic)
        self.faults: list[Fault] = []
        self._links: dict[str, tuple[str, int]] = {}  # delta link token -> (drive id, seq)
        self._pages: dict[str, DeltaPage] = {}
        self._downloads: dict[str, tuple[str, str]] = {}  # tempauth -> (drive id, item id)
        self.delta_invalid = False
        # observations
        self.downloads: list[str] = []
        self.bytes_served = 0
        self.delta_items = 0
        self.violations: list[str] = []
        self.requests: list[tuple[str, str]] = []
        self._in_flight = 0
        self.peak_downloads = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    # -- the test's handles ----------------------------------------------------------------

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def login_url(self) -> str:
        return self.base

    @property
    def graph_url(self) -> str:
        return f"{self.base}/v1.0"

    @property
    def endpoints(self) -> dict[str, str]:
        """``SYNC__API_ENDPOINTS`` pointing the sharepoint connector here."""
        return {"sharepoint": self.graph_url, "sharepoint_login": self.login_url}

    def secret_value(self) -> dict[str, str]:
        """The ``ms_graph_app`` secret's value for the app this stand-in knows."""
        return {
            "tenant_id": self.tenant_id,
            "client_id": self.client_id,
            "client_secret": self.client_secret,
        }

    def tick(self) -> int:
        with self.lock:
            self._seq += 1
            return self._seq

    def add_site(
        self, path: str = "/sites/handbook", libraries: tuple[str, ...] = ("Documents",)
    ) -> Site:
        with self.lock:
            site_id = f"{self.hostname},{uuid.uuid4()},{uuid.uuid4()}"
            url = f"https://{self.hostname}{path}"
            drives = [Drive(self, lib, f"{url}/{lib.replace(' ', '%20')}") for lib in libraries]
            site = Site(site_id, self.hostname, path, drives)
            self.sites[site_id] = site
            return site

    def add_user(self, user_id: str) -> Drive:
        with self.lock:
            drive = Drive(self, "OneDrive", f"https://contoso-my.sharepoint.com/personal/{user_id}")
            self.users[user_id.casefold()] = drive
            return drive

    def fail(
        self,
        route: str,
        status: int = 429,
        *,
        times: int = 1,
        retry_after: str | None = "0",
        skip: int = 0,
    ) -> None:
        """Answer ``status`` on ``route`` (token, site, drive, item, delta, content, download)
        ``times`` times (-1: always), after ``skip`` requests that succeed."""
        with self.lock:
            self.faults.append(Fault(route, status, times, retry_after, skip))

    def heal(self) -> None:
        with self.lock:
            self.faults.clear()

    def expire_tokens(self) -> None:
        with self.lock:
            self.tokens = dict.fromkeys(self.tokens, 0.0)

    def expire_secret(self) -> None:
        """The app's client secret passed its end date: every token request is refused."""
        with self.lock:
            self.secret_expired = True
            self.tokens = dict.fromkeys(self.tokens, 0.0)

    def invalidate_delta(self) -> None:
        """Every delta link issued so far answers 410 Gone ``resyncRequired``."""
        with self.lock:
            self.delta_invalid = True

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- serving ---------------------------------------------------------------------------

    def _fault(self, route: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.route != route or fault.times == 0:
                    continue
                if fault.skip > 0:
                    fault.skip -= 1
                    return None
                if fault.times > 0:
                    fault.times -= 1
                return fault
        return None

    def _check_bearer(self, header: str | None) -> None:
        token = header[len("Bearer ") :] if header and header.startswith("Bearer ") else None
        with self.lock:
            expiry = self.tokens.get(token or "")
        if expiry is None or expiry < time.monotonic():
            message = (
                "Access token has expired or is not yet valid."
                if expiry is not None
                else "IDX14100: JWT is not well formed, there are no dots (.)."
            )
            raise GraphError(
                401,
                "InvalidAuthenticationToken",
                message,
                {"WWW-Authenticate": 'Bearer realm="", error="invalid_token"'},
            )

    @staticmethod
    def _query(raw: str, allowed: set[str]) -> dict[str, str]:
        query = parse_qs(raw, keep_blank_values=True)
        for key in query:
            if key not in allowed:
                raise GraphError(
                    400, "BadRequest", f"Unrecognized query argument specified: '{key}'."
                )
        return {k: v[-1] for k, v in query.items()}

    def _token(self, tenant: str, body: bytes, content_type: str) -> dict[str, Any]:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%SZ")
        trace = str(uuid.uuid4())

        def refuse(status: int, error: str, code: int, text: str) -> GraphError:
            exc = GraphError(status, error, text)
            exc.headers["x-entra"] = json.dumps(
                {
                    "error": error,
                    "error_description": f"AADSTS{code}: {text} Trace ID: {trace} "
                    f"Correlation ID: {uuid.uuid4()} Timestamp: {stamp}",
                    "error_codes": [code],
                    "timestamp": stamp,
                    "trace_id": trace,
                    "correlation_id": str(uuid.uuid4()),
                    "error_uri": f"https://login.microsoftonline.com/error?code={code}",
                }
            )
            return exc

        if not content_type.startswith("application/x-www-form-urlencoded"):
            raise refuse(
                400, "invalid_request", 900144, "The request body must contain 'grant_type'."
            )
        form = {k: v[-1] for k, v in parse_qs(body.decode()).items()}
        if tenant != self.tenant_id:
            raise refuse(400, "invalid_request", 90002, f"Tenant '{tenant}' not found.")
        if form.get("grant_type") != "client_credentials":
            raise refuse(
                400, "unsupported_grant_type", 70003, "The app requested an unsupported grant type."
            )
        if form.get("scope") != SCOPE:
            raise refuse(
                400,
                "invalid_scope",
                1002012,
                f"The provided value for scope {form.get('scope')} is not valid.",
            )
        client = form.get("client_id", "")
        if client != self.client_id:
            raise refuse(
                400,
                "unauthorized_client",
                700016,
                f"Application with identifier '{client}' was not found in the directory '{tenant}'.",
            )
        if self.secret_expired:
            raise refuse(
                401,
                "invalid_client",
                7000222,
                f"The provided client secret keys for app '{client}' are expired.",
            )
        if form.get("client_secret") != self.client_secret:
            raise refuse(
                401,
                "invalid_client",
                7000215,
                f"Invalid client secret provided. Ensure the secret being sent in the request is the "
                f"client secret value, not the client secret ID, for a secret added to app '{client}'.",
            )
        token = "eyJ0eXAiOiJKV1Qi." + secrets.token_urlsafe(32) + "." + secrets.token_urlsafe(16)
        with self.lock:
            self.tokens[token] = time.monotonic() + 3599
        return {
            "token_type": "Bearer",
            "expires_in": 3599,
            "ext_expires_in": 3599,
            "access_token": token,
        }

    def _drive(self, drive_id: str) -> Drive:
        for site in self.sites.values():
            for drive in site.drives:
                if drive.id == drive_id:
                    return drive
        for drive in self.users.values():
            if drive.id == drive_id:
                return drive
        raise _missing()

    def _site(self, ref: str) -> Site:
        """``{hostname}`` (the root site), ``{hostname}:/{path}`` or a site id."""
        if ref in self.sites:
            return self.sites[ref]
        host, sep, path = ref.partition(":")
        if sep and not path.startswith("/"):
            raise _bad()
        if "," in host or (sep and path in {"", "/"}):
            raise _missing("Requested site could not be found")
        for site in self.sites.values():
            if site.hostname == host and site.path.casefold() == (path.rstrip("/")).casefold():
                return site
        raise _missing("Requested site could not be found")

    def _delta(self, drive: Drive, token: str | None) -> dict[str, Any]:
        with self.lock:
            if token is None:
                upto = self._seq
                live = [i for i in drive.items.values() if not i.deleted]
                depth = {i.id: self._depth(drive, i) for i in live}
                items = [
                    drive.item_json(i, delta=True)
                    for i in sorted(live, key=lambda i: (depth[i.id], i.seq))
                ]
                page = DeltaPage(drive.id, items, 0, upto)
            elif token in self._pages:
                page = self._pages.pop(token)
            elif token in self._links:
                link_drive, since = self._links[token]
                if link_drive != drive.id:
                    raise _bad("The delta token is not this drive's.")
                if self.delta_invalid:
                    raise GraphError(
                        410,
                        "resyncRequired",
                        "Resync required. Replace any local items with the server's version "
                        "(including deletes) if you're sure that the service was up to date with "
                        "your local changes when you last sync'd.",
                        {"Location": f"{self.graph_url}/drives/{drive.id}/root/delta"},
                    )
                changed = sorted(
                    (i for i in drive.items.values() if i.seq > since), key=lambda i: i.seq
                )
                page = DeltaPage(
                    drive.id, [drive.item_json(i, delta=True) for i in changed], 0, self._seq
                )
            else:
                raise _bad("Invalid or malformed delta token.")
            chunk = page.items[page.offset : page.offset + self.page_size]
            self.delta_items += len(chunk)
            out: dict[str, Any] = {
                "@odata.context": "https://graph.microsoft.com/v1.0/$metadata#Collection(driveItem)",
                "value": chunk,
            }
            link = f"{self.graph_url}/drives/{drive.id}/root/delta?token="
            if page.offset + self.page_size < len(page.items):
                nxt = secrets.token_urlsafe(18)
                self._pages[nxt] = DeltaPage(
                    drive.id, page.items, page.offset + self.page_size, page.upto
                )
                out["@odata.nextLink"] = link + nxt
            else:
                done = secrets.token_urlsafe(18)
                self._links[done] = (drive.id, page.upto)
                out["@odata.deltaLink"] = link + done
            return out

    @staticmethod
    def _depth(drive: Drive, item: Item) -> int:
        depth, here = 0, item
        while here.parent is not None:
            depth, here = depth + 1, drive.items[here.parent]
        return depth

    def route(
        self, method: str, raw_path: str, headers: Any, body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        """One request: (status, headers, body). Raises ``GraphError`` for Graph's error answers."""
        parts = urlsplit(raw_path)
        raw = [unquote(s) for s in parts.path.split("/")[1:]]
        if method == "POST" and len(raw) == 4 and raw[1:] == ["oauth2", "v2.0", "token"]:
            self._query(parts.query, set())
            self._faulted("token")
            doc = self._token(raw[0], body, headers.get("Content-Type", ""))
            return 200, {}, json.dumps(doc).encode()
        if method == "GET" and raw[:1] == ["download"] and len(raw) == 2:
            return self._download(raw[1], parts.query, headers)
        if method != "GET" or raw[:1] != ["v1.0"] or len(raw) < 3 or "" in raw[1:]:
            raise _bad()
        self._check_bearer(headers.get("Authorization"))
        seg = raw[1:]
        if seg[0] == "sites":
            self._query(parts.query, set())
            self._faulted("site")
            # the site reference may hold a ':' path (sites/{host}:/{a}/{b}) split by '/'
            if len(seg) >= 2 and seg[1].endswith(":") and ":" not in seg[1][:-1]:
                site = self._site(seg[1] + "/" + "/".join(seg[2:]))
                return 200, {}, json.dumps(site.json()).encode()
            site = self._site(seg[1])
            rest = seg[2:]
            if not rest:
                return 200, {}, json.dumps(site.json()).encode()
            if rest == ["drive"]:
                return 200, {}, json.dumps(site.drives[0].json()).encode()
            if rest == ["drives"]:
                return 200, {}, json.dumps({"value": [d.json() for d in site.drives]}).encode()
            if len(rest) == 2 and rest[0] == "drives":
                drive = next((d for d in site.drives if d.id == rest[1]), None)
                if drive is None:
                    raise _missing()
                return 200, {}, json.dumps(drive.json()).encode()
            raise _bad()
        if seg[0] == "users" and len(seg) == 3 and seg[2] == "drive":
            self._query(parts.query, set())
            self._faulted("drive")
            drive = self.users.get(seg[1].casefold())
            if drive is None:
                raise _missing()
            return 200, {}, json.dumps(drive.json()).encode()
        if seg[0] == "drives" and len(seg) >= 3:
            drive = self._drive(seg[1])
            rest = seg[2:]
            if rest == ["root", "delta"]:
                query = self._query(parts.query, {"token"})
                self._faulted("delta")
                return 200, {}, json.dumps(self._delta(drive, query.get("token"))).encode()
            if rest == ["root"] or rest[0] == "root:":
                self._query(parts.query, set())
                self._faulted("item")
                if any(s in {".", ".."} for s in rest[1:]):
                    raise _bad()
                with self.lock:
                    item = drive.find("/".join(rest[1:]))
                    if item is None:
                        raise _missing()
                    return 200, {}, json.dumps(drive.item_json(item)).encode()
            if len(rest) == 3 and rest[0] == "items" and rest[2] == "content":
                self._query(parts.query, set())
                self._faulted("content")
                with self.lock:
                    item = drive.items.get(rest[1])
                    if item is None or item.deleted or item.folder:
                        raise _missing()
                    tempauth = secrets.token_urlsafe(24)
                    self._downloads[tempauth] = (drive.id, item.id)
                location = f"{self.base}/download/{secrets.token_hex(8)}?tempauth={tempauth}"
                return 302, {"Location": location}, b""
        raise _bad()

    def _faulted(self, route: str) -> None:
        fault = self._fault(route)
        if fault is not None:
            code = "TooManyRequests" if fault.status == 429 else "serviceNotAvailable"
            headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
            raise GraphError(fault.status, code, "Please retry again later.", headers)

    def _download(
        self, _name: str, raw_query: str, headers: Any
    ) -> tuple[int, dict[str, str], bytes]:
        if headers.get("Authorization"):
            with self.lock:
                self.violations.append("an Authorization header was sent to the download URL")
            raise GraphError(401, "unauthenticated", "The download URL is pre-authenticated.")
        query = self._query(raw_query, {"tempauth"})
        self._faulted("download")
        with self.lock:
            target = self._downloads.pop(query.get("tempauth", ""), None)
            if target is None:
                raise GraphError(401, "unauthenticated", "Invalid or expired tempauth.")
            drive = self._drive(target[0])
            item = drive.items[target[1]]
            self.downloads.append(item.name)
            self.bytes_served += len(item.content)
            return 200, {"Content-Type": "application/octet-stream"}, item.content

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(QuietHandler):
            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with standin.lock:
                    standin.requests.append((method, self.path))
                    downloading = self.path.startswith("/download/")
                    if downloading:
                        standin._in_flight += 1
                        standin.peak_downloads = max(standin.peak_downloads, standin._in_flight)
                try:
                    try:
                        status, extra, payload = standin.route(
                            method, self.path, self.headers, body
                        )
                    except GraphError as exc:
                        status, extra = exc.status, dict(exc.headers)
                        entra = extra.pop("x-entra", None)
                        if entra is not None:
                            payload = entra.encode()
                        else:
                            payload = json.dumps(
                                {
                                    "error": {
                                        "code": exc.code,
                                        "message": exc.message,
                                        "innerError": {
                                            "date": datetime.now(UTC).isoformat(timespec="seconds"),
                                            "request-id": str(uuid.uuid4()),
                                            "client-request-id": str(uuid.uuid4()),
                                        },
                                    }
                                }
                            ).encode()
                        extra.setdefault("Content-Type", "application/json")
                    if downloading:
                        time.sleep(0.02)  # long enough for concurrent downloads to overlap
                    self.send_response(status)
                    extra.setdefault("Content-Type", "application/json")
                    for key, value in extra.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                finally:
                    if downloading:
                        with standin.lock:
                            standin._in_flight -= 1

            def do_GET(self) -> None:  # noqa: N802
                self._serve("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._serve("POST")

        return Handler


def serve_graph(**kwargs: Any) -> Iterator[GraphStandIn]:
    """A fixture body: a running stand-in, shut down afterwards."""
    standin = GraphStandIn(**kwargs)
    try:
        yield standin
    finally:
        standin.close()
