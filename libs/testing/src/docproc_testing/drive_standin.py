"""A strict stand-in for the Google Drive v3 REST subset a sync uses, and Google's OAuth2 token
endpoint, on 127.0.0.1.

Strict on purpose, so a test cannot pass against a lenient fake: it refuses what the real
API refuses. A parameter the method does not declare (read from the discovery document the
client ships), a malformed ``q``, a bad ``pageSize``, a page token of another query, a
``fields`` selection naming no field, a shared-drive item asked for without
``supportsAllDrives``, ``driveId`` without ``corpora=drive`` (and either without
``includeItemsFromAllDrives``), ``alt=media`` on a Google Doc, an export to a format the
type has none of, and a missing, unknown or expired bearer token (401). Errors carry
Google's body: ``{"error": {"code", "message", "errors": [{"reason", ...}], "status"}}``.

The token endpoint runs the service-account JWT grant for real: the assertion is an RS256
JWT verified against the public key of a key pair made by ``service_account()``, for the
audience of its ``token_uri``; a revoked key is ``invalid_grant``. Drive answers only
bearer tokens it issued.

Every change to the tree (``put``, ``update``, ``move``, ``rename``, ``trash``, ``delete``)
is a numbered change for ``changes.list``; ``fail()`` scripts 429s with ``Retry-After``,
503s, 500s; ``calls`` counts requests per method and ``media_bytes`` the bytes of every
download and export served.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler
from importlib.resources import files as package_files
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from docproc_testing.servers import KeepAliveHandler, ThreadedServer
from docproc_testing.service_accounts import service_account_key

FOLDER = "application/vnd.google-apps.folder"
DOC = "application/vnd.google-apps.document"
SHEET = "application/vnd.google-apps.spreadsheet"
SLIDES = "application/vnd.google-apps.presentation"
SHORTCUT = "application/vnd.google-apps.shortcut"
EXPORTABLE = {
    DOC: {
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/pdf",
        "text/plain",
    },
    SHEET: {"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "application/pdf"},
    SLIDES: {
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "application/pdf",
    },
}
#: The audience Google's token endpoint requires of a service-account assertion (google-auth
#: signs it whatever the key file's ``token_uri`` says).
GOOGLE_TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token"
JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
SCOPES = {"https://www.googleapis.com/auth/drive.readonly", "https://www.googleapis.com/auth/drive"}
FILE_FIELDS = {
    "kind", "id", "name", "mimeType", "md5Checksum", "modifiedTime", "createdTime", "size",
    "parents", "trashed", "driveId", "version", "shortcutDetails",
}  # fmt: skip
ORDER_KEYS = {
    "createdTime", "folder", "modifiedByMeTime", "modifiedTime", "name", "name_natural",
    "quotaBytesUsed", "recency", "sharedWithMeTime", "starred", "viewedByMeTime",
}  # fmt: skip
_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
           404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}  # fmt: skip


@cache
def _discovery() -> dict[str, Any]:
    """The Drive v3 discovery document the client ships: what each method declares."""
    doc = package_files("googleapiclient") / "discovery_cache" / "documents" / "drive.v3.json"
    return dict(json.loads(doc.read_text()))


def _methods() -> dict[str, dict[str, Any]]:
    """The declared parameters of the methods a sync calls."""
    resources = _discovery()["resources"]
    return {
        f"{r}.{m}": resources[r]["methods"][m]["parameters"]
        for r, m in (
            ("files", "list"),
            ("files", "get"),
            ("files", "export"),
            ("changes", "list"),
            ("changes", "getStartPageToken"),
        )
    }


class ApiError(Exception):
    def __init__(
        self,
        code: int,
        message: str,
        reason: str,
        location: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code, self.message, self.reason, self.location = code, message, reason, location
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"message": self.message, "domain": "global", "reason": self.reason}
        if self.location:
            error |= {"location": self.location, "locationType": "parameter"}
        return {
            "error": {
                "code": self.code,
                "message": self.message,
                "errors": [error],
                "status": _STATUS.get(self.code, "UNKNOWN"),
            }
        }


def _invalid(location: str, message: str | None = None) -> ApiError:
    return ApiError(400, message or f"Invalid Value: {location}", "invalid", location)


# -- the query language (the subset a folder listing needs, parsed strictly) -------------------

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^'\\]|\\.)*')|(?P<op>!=|=|\(|\))|(?P<word>[A-Za-z]+))")


def _tokens(q: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    at = 0
    while at < len(q):
        if q[at:].strip() == "":
            break
        m = _TOKEN.match(q, at)
        if m is None:
            raise _invalid("q", "Invalid Value")
        kind = m.lastgroup or ""
        value = m.group(kind)
        if kind == "str":
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        out.append((kind, value))
        at = m.end()
    return out


Predicate = Callable[["Item"], bool]


class _Parser:
    def __init__(self, q: str) -> None:
        self.tokens = _tokens(q)
        self.at = 0

    def parse(self) -> Predicate:
        if not self.tokens:
            raise _invalid("q", "Invalid Value")
        predicate = self._or()
        if self.at != len(self.tokens):
            raise _invalid("q", "Invalid Value")
        return predicate

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _take(self, kind: str, value: str | None = None) -> str:
        token = self._peek()
        if token is None or token[0] != kind or (value is not None and token[1] != value):
            raise _invalid("q", "Invalid Value")
        self.at += 1
        return token[1]

    def _or(self) -> Predicate:
        return self._joined("or", self._and, any)

    def _and(self) -> Predicate:
        return self._joined("and", self._unary, all)

    def _joined(
        self,
        word: str,
        operand: Callable[[], Predicate],
        combine: Callable[[Iterator[bool]], bool],
    ) -> Predicate:
        """``operand (word operand)*``: one predicate that ``combine``s the operands'."""
        parts = [operand()]
        while self._peek() == ("word", word):
            self.at += 1
            parts.append(operand())
        return lambda item: combine(p(item) for p in parts)

    def _unary(self) -> Predicate:
        token = self._peek()
        if token == ("word", "not"):
            self.at += 1
            inner = self._unary()
            return lambda item: not inner(item)
        if token == ("op", "("):
            self.at += 1
            inner = self._or()
            self._take("op", ")")
            return inner
        return self._term()

    def _term(self) -> Predicate:
        token = self._peek()
        if token is not None and token[0] == "str":
            value = self._take("str")
            self._take("word", "in")
            self._take("word", "parents")
            return lambda item: value in item.parents
        name = self._take("word")
        if name == "trashed":
            op = self._take("op")
            flag = self._take("word")
            if op not in {"=", "!="} or flag not in {"true", "false"}:
                raise _invalid("q", "Invalid Value")
            want = (flag == "true") == (op == "=")
            return lambda item: item.trashed == want
        if name in {"mimeType", "name"}:
            token = self._peek()
            if token == ("word", "contains") and name == "name":
                self.at += 1
                needle = self._take("str")
                return lambda item: needle.lower() in item.name.lower()
            op = self._take("op")
            value = self._take("str")
            if op not in {"=", "!="}:
                raise _invalid("q", "Invalid Value")

            def compare(item: Item) -> bool:
                actual: str = item.mime if name == "mimeType" else item.name
                return (actual == value) == (op == "=")

            return compare
        raise _invalid("q", "Invalid Value")


# -- partial responses ---------------------------------------------------------------------------


def _mask(spec: str) -> dict[str, Any]:
    """``nextPageToken,files(id,name)`` as ``{"nextPageToken": {}, "files": {"id": {}, ...}}``."""
    out: dict[str, Any] = {}
    at = 0
    stack = [out]
    name = ""
    while at <= len(spec):
        ch = spec[at] if at < len(spec) else ","
        if ch in ",()":
            if name.strip():
                stack[-1].setdefault(name.strip(), {})
            if ch == "(":
                if not name.strip():
                    raise _invalid("fields", "Invalid field selection")
                stack.append(stack[-1][name.strip()])
            elif ch == ")":
                if len(stack) == 1:
                    raise _invalid("fields", "Invalid field selection")
                stack.pop()
            name = ""
        else:
            name += ch
        at += 1
    if len(stack) != 1:
        raise _invalid("fields", "Invalid field selection")
    return out


def _project(value: Any, mask: dict[str, Any]) -> Any:
    if not mask:
        return value
    if isinstance(value, list):
        return [_project(v, mask) for v in value]
    if isinstance(value, dict):
        return {k: _project(value[k], sub) for k, sub in mask.items() if k in value}
    return value


def _check_mask(mask: dict[str, Any], allowed: dict[str, set[str] | None]) -> None:
    for key, sub in mask.items():
        if key not in allowed:
            raise _invalid("fields", f"Invalid field selection {key}")
        inner = allowed[key]
        for child in sub:
            if inner is None or child not in inner:
                raise _invalid("fields", f"Invalid field selection {child}")


# -- the tree ------------------------------------------------------------------------------------


@dataclass
class Item:
    id: str
    name: str
    mime: str
    parents: list[str]
    content: bytes = b""
    exports: dict[str, bytes] = field(default_factory=dict)
    drive_id: str | None = None
    trashed: bool = False
    version: int = 1
    modified: str = ""

    def resource(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "drive#file",
            "id": self.id,
            "name": self.name,
            "mimeType": self.mime,
            "parents": list(self.parents),
            "trashed": self.trashed,
            "version": str(self.version),
            "modifiedTime": self.modified,
        }
        if self.drive_id:
            out["driveId"] = self.drive_id
        if not self.mime.startswith("application/vnd.google-apps."):
            out["md5Checksum"] = hashlib.md5(self.content).hexdigest()  # noqa: S324 - Drive's
            out["size"] = str(len(self.content))
        return out


@dataclass
class Failure:
    method: str
    status: int
    times: int
    after: int = 0
    retry_after: str | None = None


class DriveStandIn(ThreadedServer):
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.items: dict[str, Item] = {}
        self.changes: list[tuple[int, str, bool]] = []  # (seq, file id, removed)
        self.keys: dict[str, Any] = {}  # private_key_id -> public key
        self.revoked: set[str] = set()
        self.tokens: dict[str, float] = {}  # bearer -> expiry (epoch)
        self.page_tokens: dict[str, tuple[str, int]] = {}
        self.failures: list[Failure] = []
        self.calls: Counter[str] = Counter()
        self.media_bytes = 0
        #: Drive may answer fewer files than ``pageSize`` asks for; this is how many at most.
        self.page_size_cap = 1000
        self.seen_params: list[tuple[str, dict[str, str]]] = []
        self._clock = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
        self._methods = self._declared()
        super().__init__(self._handler())

    @property
    def url(self) -> str:
        return f"{super().url}/"

    @staticmethod
    def _declared() -> dict[str, set[str]]:
        common = set(_discovery()["parameters"])
        return {name: common | set(params) - {"fileId"} for name, params in _methods().items()}

    # -- credentials -------------------------------------------------------------------------

    def service_account(
        self, email: str = "sync@docproc-test.iam.gserviceaccount.com"
    ) -> dict[str, Any]:
        """A key file as Google issues it, whose ``token_uri`` is this stand-in."""
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        kid = secrets.token_hex(20)
        with self.lock:
            self.keys[kid] = key.public_key()
        return service_account_key(f"{self.url}token", key=key, key_id=kid, email=email)

    def revoke(self, account: dict[str, Any]) -> None:
        """The key is deleted in the console: its grants are refused, its tokens stop working."""
        with self.lock:
            self.revoked.add(account["private_key_id"])
            self.tokens.clear()

    def expire_tokens(self) -> None:
        with self.lock:
            self.tokens.clear()

    # -- the tree ----------------------------------------------------------------------------

    def _tick(self) -> str:
        self._clock += dt.timedelta(seconds=1)
        return self._clock.strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def _changed(self, item_id: str, removed: bool = False) -> None:
        self.changes.append((len(self.changes) + 1, item_id, removed))

    def shared_drive(self) -> str:
        """A shared drive's id (its root folder has the same id)."""
        drive = "0A" + secrets.token_urlsafe(12).replace("-", "x").replace("_", "y") + "Uk9PVA"
        with self.lock:
            self.items[drive] = Item(drive, "Shared drive", FOLDER, [], drive_id=drive)
        return drive

    def put(
        self,
        name: str,
        parent: str | None = None,
        content: bytes = b"",
        *,
        mime: str = "text/plain",
        exports: dict[str, bytes] | None = None,
        item_id: str | None = None,
    ) -> str:
        with self.lock:
            new_id = item_id or "1" + secrets.token_urlsafe(24)
            drive = self.items[parent].drive_id if parent else None
            self.items[new_id] = Item(
                new_id,
                name,
                mime,
                [parent] if parent else [],
                content,
                dict(exports or {}),
                drive_id=drive,
                modified=self._tick(),
            )
            self._changed(new_id)
            return new_id

    def folder(self, name: str, parent: str | None = None, *, item_id: str | None = None) -> str:
        return self.put(name, parent, mime=FOLDER, item_id=item_id)

    def update(self, item_id: str, content: bytes | None = None, **exports: bytes) -> None:
        with self.lock:
            item = self.items[item_id]
            if content is not None:
                item.content = content
            item.exports.update({k.replace("_", "/", 1): v for k, v in exports.items()})
            item.version += 1
            item.modified = self._tick()
            self._changed(item_id)

    def set_export(self, item_id: str, mime: str, content: bytes) -> None:
        with self.lock:
            item = self.items[item_id]
            item.exports[mime] = content
            item.version += 1
            item.modified = self._tick()
            self._changed(item_id)

    def move(self, item_id: str, parent: str) -> None:
        """A move changes the parents and the version, not the content nor ``modifiedTime``."""
        with self.lock:
            item = self.items[item_id]
            item.parents = [parent]
            item.version += 1
            self._changed(item_id)

    def rename(self, item_id: str, name: str) -> None:
        with self.lock:
            self.items[item_id].name = name
            self.items[item_id].version += 1
            self._changed(item_id)

    def trash(self, item_id: str) -> None:
        with self.lock:
            self.items[item_id].trashed = True
            self.items[item_id].version += 1
            self._changed(item_id)

    def delete(self, item_id: str) -> None:
        with self.lock:
            del self.items[item_id]
            self._changed(item_id, removed=True)

    def fail(
        self,
        method: str,
        status: int,
        *,
        times: int = 1,
        after: int = 0,
        retry_after: str | None = None,
    ) -> None:
        """The next ``times`` calls of ``method`` (after ``after`` more succeed) answer ``status``.

        Methods: ``files.list``, ``files.get``, ``media``, ``export``, ``changes.list``,
        ``changes.getStartPageToken``, ``token``.
        """
        with self.lock:
            self.failures.append(Failure(method, status, times, after, retry_after))

    # -- serving -----------------------------------------------------------------------------

    def _scripted(self, method: str) -> None:
        for failure in self.failures:
            if failure.method != method or failure.times <= 0:
                continue
            if failure.after > 0:
                failure.after -= 1
                return
            failure.times -= 1
            headers = {"Retry-After": failure.retry_after} if failure.retry_after else {}
            reason = {429: "rateLimitExceeded", 503: "backendError", 500: "backendError"}.get(
                failure.status, "unknown"
            )
            raise ApiError(
                failure.status, f"scripted {failure.status} for {method}", reason, headers=headers
            )

    def _authorized(self, header: str | None) -> None:
        scheme, _, token = (header or "").partition(" ")
        expiry = self.tokens.get(token) if scheme.lower() == "bearer" else None
        if expiry is None or expiry < time.time():
            raise ApiError(
                401,
                "Request had invalid authentication credentials. Expected OAuth 2 access token, "
                "login cookie or other valid authentication credential.",
                "authError",
                "Authorization",
            )

    @staticmethod
    def _params(query: str) -> dict[str, str]:
        parsed = parse_qs(query, keep_blank_values=True, strict_parsing=False)
        out: dict[str, str] = {}
        for key, values in parsed.items():
            if len(values) != 1:
                raise _invalid(key)
            out[key] = values[0]
        return out

    def _checked(self, method: str, params: dict[str, str]) -> None:
        doc = _methods()[method]
        for key, value in params.items():
            if key not in self._methods[method]:
                raise ApiError(
                    400,
                    f'Invalid JSON payload received. Unknown name "{key}": Cannot bind query '
                    f"parameter. Field '{key}' could not be found in request message.",
                    "invalid",
                    key,
                )
            kind = doc.get(key, {}).get("type")
            if kind == "boolean" and value not in {"true", "false"}:
                raise _invalid(key)
            if kind == "integer" and not value.isdigit():
                raise _invalid(key)
        for key, spec in doc.items():
            if spec.get("required") and key != "fileId" and key not in params:
                raise ApiError(400, f"Required parameter: {key}", "required", key)
        self.seen_params.append((method, dict(params)))

    @staticmethod
    def _flag(params: dict[str, str], key: str) -> bool:
        return params.get(key) == "true"

    def _visible(self, item: Item, params: dict[str, str]) -> bool:
        return item.drive_id is None or self._flag(params, "supportsAllDrives")

    def _get_item(self, item_id: str, params: dict[str, str]) -> Item:
        item = self.items.get(item_id)
        if item is None or not self._visible(item, params):
            raise ApiError(404, f"File not found: {item_id}.", "notFound", "fileId")
        return item

    def _shared_params(self, params: dict[str, str]) -> None:
        """Drive's rules on the shared-drive parameters of a listing."""
        if bool(params.get("driveId")) != (params.get("corpora") == "drive"):
            raise ApiError(
                400,
                "The driveId parameter must be specified if and only if corpora is set to drive.",
                "teamDriveIdRequiresTeamDriveCorpora",
            )
        needs_items = bool(params.get("driveId")) or params.get("corpora") in {"drive", "allDrives"}
        if needs_items and not self._flag(params, "includeItemsFromAllDrives"):
            raise ApiError(
                403,
                "The includeItemsFromAllDrives parameter must be set to true when driveId is "
                "specified or corpora contains drive or allDrives.",
                "invalid",
            )
        if self._flag(params, "includeItemsFromAllDrives") and not self._flag(
            params, "supportsAllDrives"
        ):
            raise ApiError(
                403,
                "The includeItemsFromAllDrives parameter requires supportsAllDrives to be true.",
                "invalid",
            )
        if params.get("driveId") and params["driveId"] not in self.items:
            raise ApiError(
                404, f"Shared drive not found: {params['driveId']}", "notFound", "driveId"
            )

    def files_list(self, params: dict[str, str]) -> dict[str, Any]:
        self._checked("files.list", params)
        self._shared_params(params)
        if params.get("corpora") not in (None, "user", "drive", "allDrives", "domain"):
            raise _invalid("corpora")
        size = int(params.get("pageSize", "100"))
        if not 1 <= size <= 1000:
            raise _invalid("pageSize")
        size = min(size, self.page_size_cap)
        for key in (params.get("orderBy") or "").split(","):
            if key and key.strip().removesuffix(" desc") not in ORDER_KEYS:
                raise _invalid("orderBy", "Invalid sorting order")
        mask = _mask(params["fields"]) if "fields" in params else {}
        _check_mask(
            mask,
            {
                "kind": set(),
                "nextPageToken": set(),
                "incompleteSearch": set(),
                "files": FILE_FIELDS,
            },
        )
        q = params.get("q", "")
        predicate = _Parser(q).parse() if q else (lambda _item: True)
        corpora = params.get("corpora", "user")
        fingerprint = json.dumps([q, corpora, params.get("driveId"), params.get("orderBy")])
        start = 0
        if "pageToken" in params:
            known = self.page_tokens.get(params["pageToken"])
            if known is None or known[0] != fingerprint:
                raise _invalid("pageToken")
            start = known[1]

        def scoped(item: Item) -> bool:
            if corpora == "drive":
                return item.drive_id == params["driveId"]
            if corpora == "allDrives":
                return True
            return item.drive_id is None

        matched = sorted(
            (i for i in self.items.values() if i.id != i.drive_id and scoped(i) and predicate(i)),
            key=lambda i: (i.name, i.id),
        )
        page = matched[start : start + size]
        body: dict[str, Any] = {
            "kind": "drive#fileList",
            "incompleteSearch": False,
            "files": [i.resource() for i in page],
        }
        if start + size < len(matched):
            token = secrets.token_urlsafe(16)
            self.page_tokens[token] = (fingerprint, start + size)
            body["nextPageToken"] = token
        if not mask:
            mask = {"kind": {}, "incompleteSearch": {}, "nextPageToken": {},
                    "files": {"kind": {}, "id": {}, "name": {}, "mimeType": {}}}  # fmt: skip
        return dict(_project(body, mask))

    def files_get(self, item_id: str, params: dict[str, str]) -> dict[str, Any]:
        self._checked("files.get", params)
        item = self._get_item(item_id, params)
        mask = _mask(params["fields"]) if "fields" in params else {}
        _check_mask({"file": mask} if mask else {}, {"file": FILE_FIELDS})
        return dict(
            _project(item.resource(), mask or {"kind": {}, "id": {}, "name": {}, "mimeType": {}})
        )

    def media(
        self, item_id: str, params: dict[str, str], range_header: str | None
    ) -> tuple[int, dict[str, str], bytes]:
        self._checked("files.get", params)
        item = self._get_item(item_id, params)
        if item.mime.startswith("application/vnd.google-apps."):
            raise ApiError(
                403,
                "Only files with binary content can be downloaded. Use Export with Docs Editors files.",
                "fileNotDownloadable",
                "alt",
            )
        return self._ranged(item.content, range_header)

    def export(self, item_id: str, params: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        self._checked("files.export", params)
        item = self.items.get(item_id)
        if item is None:
            raise ApiError(404, f"File not found: {item_id}.", "notFound", "fileId")
        if item.mime not in EXPORTABLE:
            raise ApiError(403, "Export only supports Docs Editors files.", "fileNotExportable")
        target = params["mimeType"]
        if target not in EXPORTABLE[item.mime]:
            raise ApiError(
                400, "The requested conversion is not supported.", "badRequest", "convertTo"
            )
        data = item.exports.get(target, b"")
        self.media_bytes += len(data)
        return 200, {"Content-Type": target, "Content-Length": str(len(data))}, data

    def _ranged(self, data: bytes, range_header: str | None) -> tuple[int, dict[str, str], bytes]:
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", range_header or "")
        if m is None:
            self.media_bytes += len(data)
            return 200, {"Content-Length": str(len(data))}, data
        first = int(m.group(1))
        if first >= len(data):
            return 416, {"Content-Range": f"bytes */{len(data)}"}, b""
        last = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
        chunk = data[first : last + 1]
        self.media_bytes += len(chunk)
        headers = {
            "Content-Range": f"bytes {first}-{last}/{len(data)}",
            "Content-Length": str(len(chunk)),
        }
        return 206, headers, chunk

    def start_token(self, params: dict[str, str]) -> dict[str, Any]:
        self._checked("changes.getStartPageToken", params)
        if params.get("driveId"):
            if not self._flag(params, "supportsAllDrives"):
                raise ApiError(403, "The driveId parameter requires supportsAllDrives.", "invalid")
            self._shared_params({**params, "corpora": "drive", "includeItemsFromAllDrives": "true"})
        return {"kind": "drive#startPageToken", "startPageToken": str(len(self.changes) + 1)}

    def changes_list(self, params: dict[str, str]) -> dict[str, Any]:
        self._checked("changes.list", params)
        self._shared_params({**params, "corpora": "drive"} if params.get("driveId") else params)
        token = params["pageToken"]
        if not token.isdigit() or not 1 <= int(token) <= len(self.changes) + 1:
            raise _invalid("pageToken")
        size = int(params.get("pageSize", "100"))
        if not 1 <= size <= 1000:
            raise _invalid("pageSize")
        mask = _mask(params["fields"]) if "fields" in params else {}
        _check_mask(
            mask,
            {
                "kind": set(), "nextPageToken": set(), "newStartPageToken": set(),
                "changes": {"kind", "changeType", "removed", "fileId", "file", "time", "driveId"},
            },
        )  # fmt: skip
        if "changes" in mask and "file" in mask["changes"]:
            _check_mask({"file": mask["changes"]["file"]}, {"file": FILE_FIELDS})
        drive = params.get("driveId")
        all_drives = self._flag(params, "includeItemsFromAllDrives")
        latest: dict[str, tuple[int, bool]] = {}
        for seq, item_id, removed in self.changes[int(token) - 1 :]:
            latest[item_id] = (seq, removed)
        selected: list[dict[str, Any]] = []
        for item_id, (seq, removed) in sorted(latest.items(), key=lambda kv: kv[1][0]):
            item = self.items.get(item_id)
            if item is not None:
                if drive and item.drive_id != drive:
                    continue
                if not drive and item.drive_id and not all_drives:
                    continue
            change: dict[str, Any] = {"kind": "drive#change", "changeType": "file", "fileId": item_id,
                                      "removed": removed or item is None, "seq": seq}  # fmt: skip
            if item is not None:
                change["file"] = item.resource()
            selected.append(change)
        page, rest = selected[:size], selected[size:]
        body: dict[str, Any] = {"kind": "drive#changeList", "changes": page}
        if rest:
            body["nextPageToken"] = str(rest[0]["seq"])
        else:
            body["newStartPageToken"] = str(len(self.changes) + 1)
        for change in page:
            change.pop("seq")
        return dict(_project(body, mask)) if mask else body

    def grant(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        """The OAuth2 token endpoint: the JWT-bearer grant, verified for real."""
        if form.get("grant_type") != JWT_GRANT:
            return 400, {
                "error": "unsupported_grant_type",
                "error_description": "Invalid grant_type.",
            }
        assertion = form.get("assertion", "")
        try:
            header = jwt.get_unverified_header(assertion)
        except jwt.PyJWTError:
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT."}
        key = self.keys.get(str(header.get("kid")))
        if key is None or header.get("kid") in self.revoked or header.get("alg") != "RS256":
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
        try:
            claims = jwt.decode(
                assertion,
                key,
                algorithms=["RS256"],
                audience=GOOGLE_TOKEN_AUDIENCE,
                options={"require": ["iss", "aud", "iat", "exp", "scope"]},
            )
        except jwt.PyJWTError as exc:
            return 400, {
                "error": "invalid_grant",
                "error_description": f"Invalid JWT: {type(exc).__name__}",
            }
        if claims["exp"] - claims["iat"] > 3600:
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT: exp too far."}
        if not SCOPES & set(str(claims["scope"]).split()):
            return 400, {"error": "invalid_scope", "error_description": "Invalid OAuth scope."}
        token = "ya29." + secrets.token_urlsafe(32)
        self.tokens[token] = time.time() + 3600
        return 200, {"access_token": token, "expires_in": 3599, "token_type": "Bearer"}

    def _route(
        self, method: str, path: str, query: str, headers: Any, body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        params = self._params(query)
        if method == "POST" and path == "/token":
            self.calls["token"] += 1
            self._scripted("token")
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
            status, answer = self.grant(form)
            return status, {"Content-Type": "application/json"}, json.dumps(answer).encode()
        if method != "GET" or not path.startswith("/drive/v3/"):
            raise ApiError(404, "Not Found", "notFound")
        rest = path.removeprefix("/drive/v3/")
        parts = [unquote(p) for p in rest.split("/")]
        if parts == ["files"]:
            name = "files.list"
        elif len(parts) == 2 and parts[0] == "files":
            name = "media" if params.get("alt") == "media" else "files.get"
        elif len(parts) == 3 and parts[0] == "files" and parts[2] == "export":
            name = "export"
        elif parts == ["changes", "startPageToken"]:
            name = "changes.getStartPageToken"
        elif parts == ["changes"]:
            name = "changes.list"
        else:
            raise ApiError(404, "Not Found", "notFound")
        self.calls[name] += 1
        self._authorized(headers.get("Authorization"))
        self._scripted(name)
        if name == "media":
            return self.media(parts[1], params, headers.get("Range"))
        if name == "export":
            return self.export(parts[1], params)
        answer = {
            "files.list": lambda: self.files_list(params),
            "files.get": lambda: self.files_get(parts[1], params),
            "changes.getStartPageToken": lambda: self.start_token(params),
            "changes.list": lambda: self.changes_list(params),
        }[name]()
        return 200, {"Content-Type": "application/json"}, json.dumps(answer).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(KeepAliveHandler):
            def _serve(self, method: str) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                try:
                    with standin.lock:
                        status, headers, data = standin._route(
                            method, parts.path, parts.query, self.headers, body
                        )
                except ApiError as exc:
                    status, data = exc.code, json.dumps(exc.body()).encode()
                    headers = {"Content-Type": "application/json; charset=UTF-8", **exc.headers}
                self.send_response(status)
                for key, value in headers.items():
                    if key.lower() != "content-length":
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                self._serve("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._serve("POST")

        return Handler
