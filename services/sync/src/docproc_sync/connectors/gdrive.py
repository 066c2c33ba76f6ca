"""``google_drive``: a Drive folder (and, ``recursive``, its subfolders), read with the source's
own service account (a ``gcp_service_account`` secret; the folder is shared with its email).

The official client (``google-api-python-client`` with ``google-auth``) is built from the
discovery document shipped in the package (no discovery request), against the public API
or the deployment's ``SYNC__API_ENDPOINTS["google_drive"]``. Its calls are blocking and run
in worker threads, each thread with its own HTTP connection. The service-account JWT grant
goes to the key file's ``token_uri`` (https, and a public address unless the deployment
allows private networks; checked, not pinned: google-auth resolves it itself).

Change signal, read before any byte moves: a binary file's ``md5Checksum`` (its
``modifiedTime`` when Drive has none); a Google Docs/Sheets/Slides/Drawings file, which has
no checksum, by its ``modifiedTime`` and the export format. Exports are DOCX/XLSX/PPTX
(``export_format: pdf``: PDF; Drawings are always PDF); binary files are downloaded
(``alt=media``). Shortcuts and the other Google types (Forms, Sites...) are not listed.

The listing knows the whole tree without walking it every run: the first run (and a
``full`` run) walks the folder tree with ``files.list`` and keeps the tree and the Changes
API ``startPageToken`` read *before* the walk in the source's cache directory; a later run
asks ``changes.list`` from that token, applies the changes (an edit, a move in or out, a
rename, a trash or a removal), walks only folders that moved into the tree, and keeps the
new token. A walk or a change feed cut short (the ``max_files`` limit, a 429 storm, a
timeout, an incomplete search) is ``complete=False``: that run deletes nothing and the
token is not advanced. A lost cache costs one walk; a stale one (another worker ran the
source since) only replays older changes.

Every call retries 429, 5xx and Drive's rate-limit 403s, honouring ``Retry-After`` (else
an exponential backoff), at most ``MAX_ATTEMPTS`` times; the listing lists at most
``LIST_CONCURRENCY`` folders at once, and the run bounds the downloads.

A folder id reaches Drive's query language inside single quotes, so it is checked against
what Google emits (``checked_drive_folder_id``) where the ``'<id>' in parents`` query is
built: the configured folder and every subfolder id go through that one place.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import hashlib
import json
import os
import random
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

import httplib2
from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.errors import ClientFailedError, ConnectorError, Subject
from docproc_common.connectors.specs.gdrive import (
    GoogleDriveConfig,
    GoogleDriveSpec,
    checked_drive_folder_id,
)
from docproc_common.egress.pinned import check_url
from docproc_common.vault import GcpServiceAccountValue
from google.auth.exceptions import RefreshError, TransportError
from google.oauth2 import service_account
from google_auth_httplib2 import AuthorizedHttp
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError
from googleapiclient.http import MediaIoBaseDownload
from pydantic import ValidationError

from docproc_sync.connectors.base import BaseSyncConnector, RemoteFile, RemoteListing
from docproc_sync.connectors.landing import open_landing

T = TypeVar("T")

SCOPE = "https://www.googleapis.com/auth/drive.readonly"
DEFAULT_API_ROOT = "https://www.googleapis.com/"
DEFAULT_TOKEN_URI = "https://oauth2.googleapis.com/token"
FOLDER = "application/vnd.google-apps.folder"
GOOGLE_TYPES = "application/vnd.google-apps."
PDF = ("pdf", "application/pdf")
OFFICE_EXPORTS = {
    "application/vnd.google-apps.document": (
        "docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ),
    "application/vnd.google-apps.spreadsheet": (
        "xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
    "application/vnd.google-apps.presentation": (
        "pptx",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ),
    "application/vnd.google-apps.drawing": PDF,
}
FILE_FIELDS = "id,name,mimeType,md5Checksum,modifiedTime,size,parents,trashed,driveId"
LIST_FIELDS = f"nextPageToken,incompleteSearch,files({FILE_FIELDS})"
CHANGE_FIELDS = (
    f"nextPageToken,newStartPageToken,changes(changeType,removed,fileId,file({FILE_FIELDS}))"
)
PAGE_SIZE = 1000
LIST_CONCURRENCY = 4
MAX_ATTEMPTS = 5
MAX_WAIT_S = 60.0
BACKOFF_S = 1.0
DOWNLOAD_CHUNK = 8 * 1024 * 1024
STATE_FILE = "drive-state.json"
STATE_VERSION = 1

_SYMBOL = re.compile(r"[A-Za-z][A-Za-z0-9_.]{0,63}")
_RATE_LIMITED = {"rateLimitExceeded", "userRateLimitExceeded"}
_RETRIED_STATUS = {429, 500, 502, 503, 504}


def parents_query(folder_id: str) -> str:
    """The one place a folder id enters Drive's query language."""
    return f"'{checked_drive_folder_id(folder_id)}' in parents and trashed = false"


class DriveCallError(ClientFailedError):
    """A Drive or token call that failed; ``retryable``: 429, 5xx, a rate limit, a timeout."""

    def __init__(
        self, kind: str, *, subject: Subject, status: int | None = None, retryable: bool = False
    ) -> None:
        super().__init__(kind, subject=subject)
        self.status = status
        self.retryable = retryable


class RetriesExhaustedError(DriveCallError):
    """A call still throttled or failing after ``MAX_ATTEMPTS``: a listing ends incomplete."""


def http_failure(exc: HttpError, subject: Subject) -> DriveCallError:
    """Drive's error ``reason`` (``notFound``, ``rateLimitExceeded``), never its message
    (which can quote the request); a reason that is no symbol is only the status."""
    status = int(exc.resp.status)
    reason = ""
    try:
        body = json.loads(exc.content)
        errors = body["error"].get("errors") or [{}]
        reason = str(errors[0].get("reason") or body["error"].get("status") or "")
    except (ValueError, KeyError, TypeError, AttributeError, IndexError):
        pass
    kind = reason if _SYMBOL.fullmatch(reason) else f"HttpError {status}"
    retryable = status in _RETRIED_STATUS or (status == 403 and reason in _RATE_LIMITED)
    return DriveCallError(kind, subject=subject, status=status, retryable=retryable)


def refresh_failure(exc: RefreshError, subject: Subject) -> DriveCallError:
    """The token endpoint refused the grant: its OAuth ``error`` code (``invalid_grant``)."""
    data = exc.args[1] if len(exc.args) > 1 else None
    code = str(data.get("error", "")) if isinstance(data, Mapping) else ""
    return DriveCallError(code if _SYMBOL.fullmatch(code) else "RefreshError", subject=subject)


def retry_after(headers: Mapping[str, Any]) -> float | None:
    """Seconds a ``Retry-After`` asks for (delta or HTTP date), capped at ``MAX_WAIT_S``."""
    value = str(headers.get("retry-after", "")).strip()
    if not value:
        return None
    if value.isdigit():
        return min(float(value), MAX_WAIT_S)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, min((when - dt.datetime.now(dt.UTC)).total_seconds(), MAX_WAIT_S))


def _files_list(service: Any, params: dict[str, Any]) -> Any:
    return service.files().list(**params)


def _changes_list(service: Any, params: dict[str, Any]) -> Any:
    return service.changes().list(**params)


def _matches(mime: str, patterns: Iterable[str]) -> bool:
    for pattern in patterns:
        if pattern.endswith("/*") and mime.startswith(pattern[:-1]):
            return True
        if mime == pattern:
            return True
    return False


@dataclass
class Tree:
    """The folder tree as the last listing left it: folders (id -> parents) and file entries."""

    root: str
    folders: dict[str, list[str]] = field(default_factory=dict)
    files: dict[str, dict[str, Any]] = field(default_factory=dict)

    def reachable(self) -> set[str]:
        children: dict[str, list[str]] = {}
        for folder, parents in self.folders.items():
            for parent in parents:
                children.setdefault(parent, []).append(folder)
        seen, stack = {self.root}, [self.root]
        while stack:
            for child in children.get(stack.pop(), []):
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
        return seen

    def prune(self) -> None:
        """Forget folders no longer under the root and files in none of the tree's folders."""
        inside = self.reachable()
        self.folders = {f: p for f, p in self.folders.items() if f in inside}
        self.files = {
            i: e for i, e in self.files.items() if any(p in inside for p in e.get("parents", []))
        }

    def drop(self, item: str) -> None:
        self.folders.pop(item, None)
        self.files.pop(item, None)


class GoogleDriveConnector(GoogleDriveSpec, BaseSyncConnector[GoogleDriveConfig]):
    """Files of a Drive folder, by id (``gdrive://<file id>``), with their own names as labels.

    Change signal: ``md5Checksum`` (binary files) or ``modifiedTime`` with the export format
    (Google Docs, Sheets, Slides), from the listing; the listing itself comes from the Changes
    API (``changes.list`` from the ``startPageToken`` the previous run kept), so an unchanged
    folder costs one call and an unchanged file is never fetched.
    """

    def __init__(
        self,
        config: GoogleDriveConfig,
        secret: Mapping[str, Any] | None,
        options: ConnectorOptions,
    ) -> None:
        super().__init__(config, secret, options)
        info = dict(self.secret)
        try:
            GcpServiceAccountValue.model_validate(info)
        except ValidationError as exc:
            fields = sorted({str(e["loc"][0]) for e in exc.errors() if e["loc"]})
            raise ConnectorError(
                "The source's gcp_service_account secret is not a service-account key file "
                f"(check {', '.join(fields) or 'its fields'})"
            ) from None
        info.setdefault("token_uri", DEFAULT_TOKEN_URI)
        self.token_uri = str(info["token_uri"])
        parts = urlsplit(self.token_uri)
        schemes = {"https", "http"} if options.allow_plain_http else {"https"}
        if parts.scheme not in schemes or not parts.hostname:
            raise ConnectorError("The service account's token_uri must be an https:// URL")
        try:
            self._credentials = service_account.Credentials.from_service_account_info(  # type: ignore[no-untyped-call]
                info, scopes=[SCOPE]
            )
        except (ValueError, TypeError, KeyError, IndexError):
            raise ConnectorError(
                "The source's gcp_service_account secret is not a service-account key file "
                "(its private_key does not load)"
            ) from None
        root = options.api_endpoints.get(self.NAME, DEFAULT_API_ROOT)
        self.endpoint = urljoin(root if root.endswith("/") else root + "/", "drive/v3/")
        self.shared = config.include_shared_drives
        self.drive_id: str | None = None
        self._service: Any = None
        self._local = threading.local()
        self._opened: list[httplib2.Http] = []
        self._lock = threading.Lock()
        cache = options.cache_dir
        self.state_path = Path(cache) / STATE_FILE if cache is not None else None

    # -- calls --------------------------------------------------------------------------------

    def _http(self) -> AuthorizedHttp:
        """This thread's authorized connection (httplib2 is not thread-safe)."""
        http = getattr(self._local, "http", None)
        if http is None:
            inner = httplib2.Http(timeout=self.options.timeout_s)
            with self._lock:
                self._opened.append(inner)
            http = AuthorizedHttp(self._credentials, http=inner)
            self._local.http = http
        return http

    def _build(self) -> Any:
        return build(
            "drive",
            "v3",
            http=self._http(),
            static_discovery=True,
            cache_discovery=False,
            client_options={"api_endpoint": self.endpoint},
        )

    async def _ready(self) -> None:
        if self._service is None:
            await check_url(self.token_uri, allow_private=self.options.allow_private_networks)
            self._service = await self.blocking(self._build)

    async def _retrying(self, attempt: Callable[[], T], subject: Subject) -> T:
        """``attempt`` in a worker thread, again after a 429/5xx/timeout (``Retry-After``
        honoured, else an exponential backoff), at most ``MAX_ATTEMPTS`` times."""
        last: DriveCallError | None = None
        for n in range(MAX_ATTEMPTS):
            wait: float | None = None
            try:
                return await self.blocking(attempt)
            except HttpError as exc:
                failure = http_failure(exc, subject)
                if not failure.retryable:
                    raise failure from exc
                wait, last = retry_after(exc.resp), failure
                last.__cause__ = exc
            except RefreshError as exc:
                raise refresh_failure(exc, subject) from exc
            except (TimeoutError, OSError, httplib2.HttpLib2Error, TransportError) as exc:
                last = DriveCallError(type(exc).__name__, subject=subject, retryable=True)
                last.__cause__ = exc
            if n + 1 < MAX_ATTEMPTS:
                await asyncio.sleep(
                    wait if wait is not None else BACKOFF_S * 2**n * random.uniform(0.5, 1.0)
                )
        assert last is not None
        exhausted = RetriesExhaustedError(
            last.kind, subject=subject, status=last.status, retryable=True
        )
        raise exhausted from last.__cause__

    async def _call(self, request: Callable[[Any], Any], subject: Subject = "source") -> Any:
        """One API call, ``request(service)`` building it; its JSON answer."""
        await self._ready()
        return await self._retrying(
            lambda: request(self._service).execute(http=self._http()), subject
        )

    def _drive_params(self, *, listing: bool) -> dict[str, Any]:
        """What a shared drive needs: ``supportsAllDrives`` and, listing, its items and corpus."""
        if not self.shared:
            return {}
        params: dict[str, Any] = {"supportsAllDrives": True}
        if listing:
            params["includeItemsFromAllDrives"] = True
            if self.drive_id:
                params["driveId"] = self.drive_id
        return params

    # -- listing ------------------------------------------------------------------------------

    async def list_files(self) -> RemoteListing:
        root = await self._call(
            lambda s: s.files().get(
                fileId=self.config.folder_id,
                fields="id,name,mimeType,driveId,trashed",
                supportsAllDrives=True,
            )
        )
        if root.get("mimeType") != FOLDER:
            raise ConnectorError("The folder_id names a file, not a folder")
        if root.get("trashed"):
            raise ConnectorError("The folder is in the trash")
        self.drive_id = root.get("driveId")
        if self.drive_id and not self.shared:
            raise ConnectorError(
                "The folder is in a shared drive: set include_shared_drives to sync it"
            )
        state = None if self.options.full_listing else await self.blocking(self._load)
        if state is not None:
            listing = await self._incremental(state)
            if listing is not None:
                return listing
        return await self._full()

    def _key(self) -> str:
        c = self.config
        identity = [STATE_VERSION, c.folder_id, c.include_shared_drives, c.recursive, self.drive_id]
        return hashlib.sha256(json.dumps(identity).encode()).hexdigest()

    async def _start_token(self) -> str:
        params: dict[str, Any] = {}
        if self.drive_id:
            params = {"driveId": self.drive_id, "supportsAllDrives": True}
        answer = await self._call(lambda s: s.changes().getStartPageToken(**params))
        return str(answer["startPageToken"])

    async def _full(self) -> RemoteListing:
        token = await self._start_token()  # before the walk: a change during it is replayed
        tree = Tree(self.config.folder_id)
        problem = await self._walk(tree, [tree.root])
        tree.prune()
        if problem is None:
            await self.blocking(self._save, token, tree)
        return self._listing(tree, problem)

    async def _walk(self, tree: Tree, start: list[str]) -> str | None:
        """List ``start`` and (``recursive``) every folder below, ``LIST_CONCURRENCY`` at once.
        None when everything was listed, else why the walk stopped."""
        pending = list(start)
        while pending:
            batch, pending = pending[:LIST_CONCURRENCY], pending[LIST_CONCURRENCY:]
            found = await asyncio.gather(*(self._list_folder(f) for f in batch))
            for entries, problem in found:
                for entry in entries:
                    if entry.get("mimeType") == FOLDER:
                        if self.config.recursive and entry["id"] not in tree.folders:
                            tree.folders[entry["id"]] = list(entry.get("parents", []))
                            pending.append(entry["id"])
                    else:
                        tree.files[entry["id"]] = entry
                if problem is not None:
                    return problem
            if len(tree.files) > self.config.max_files:
                return f"stopped at the file limit ({self.config.max_files})"
        return None

    async def _list_folder(self, folder: str) -> tuple[list[dict[str, Any]], str | None]:
        query = parents_query(folder)
        entries: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            params = {
                "q": query,
                "pageSize": PAGE_SIZE,
                "fields": LIST_FIELDS,
                **self._drive_params(listing=True),
            }
            if self.drive_id:
                params["corpora"] = "drive"
            if token:
                params["pageToken"] = token
            try:
                page = await self._call(partial(_files_list, params=params))
            except RetriesExhaustedError as exc:
                return entries, f"a folder's listing failed ({exc.kind})"
            entries += page.get("files", [])
            if page.get("incompleteSearch"):
                return entries, "Drive answered an incomplete search"
            if len(entries) > self.config.max_files:
                return entries, f"stopped at the file limit ({self.config.max_files})"
            token = page.get("nextPageToken")
            if not token:
                return entries, None

    async def _incremental(self, state: dict[str, Any]) -> RemoteListing | None:
        """The stored tree with the changes since its token; None: walk again instead."""
        tree = Tree(state["root"], dict(state["folders"]), dict(state["files"]))
        token = str(state["token"])
        changes: list[dict[str, Any]] = []
        while True:
            params = {
                "pageToken": token,
                "pageSize": PAGE_SIZE,
                "fields": CHANGE_FIELDS,
                "spaces": "drive",
                **self._drive_params(listing=True),
            }
            try:
                page = await self._call(partial(_changes_list, params=params))
            except RetriesExhaustedError as exc:
                note = f"the change feed could not be read to its end ({exc.kind})"
                return self._listing(tree, note)
            except DriveCallError as exc:
                if exc.status in (400, 404, 410):
                    return None  # the stored token is no longer accepted: walk
                raise
            changes += page.get("changes", [])
            if page.get("newStartPageToken"):
                new_token = str(page["newStartPageToken"])
                break
            token = str(page["nextPageToken"])
        before = tree.reachable()
        for change in changes:
            if change.get("changeType", "file") != "file":
                continue
            item, entry = str(change.get("fileId", "")), change.get("file") or {}
            if item == tree.root:
                if change.get("removed") or entry.get("trashed"):
                    return None  # the folder itself went: the walk says how (404, trash)
                continue
            if change.get("removed") or entry.get("trashed"):
                tree.drop(item)
            elif entry.get("mimeType") == FOLDER:
                tree.files.pop(item, None)
                if self.config.recursive:
                    tree.folders[item] = list(entry.get("parents", []))
            else:
                tree.folders.pop(item, None)
                tree.files[item] = entry
        moved_in = sorted(tree.reachable() - before)
        problem = await self._walk(tree, moved_in) if moved_in else None
        tree.prune()
        if problem is None and len(tree.files) > self.config.max_files:
            problem = f"stopped at the file limit ({self.config.max_files})"
        if problem is None:
            await self.blocking(self._save, new_token, tree)
        return self._listing(tree, problem)

    def _listing(self, tree: Tree, problem: str | None) -> RemoteListing:
        tree.prune()
        files = [f for f in (self._remote(e) for e in tree.files.values()) if f is not None]
        if problem is not None:
            return RemoteListing(files, complete=False, note=problem)
        return RemoteListing(files, complete=True)

    def _remote(self, entry: dict[str, Any]) -> RemoteFile | None:
        mime = str(entry.get("mimeType", ""))
        if self.config.mime_types and not _matches(mime, self.config.mime_types):
            return None
        if _matches(mime, self.config.exclude_mime_types):
            return None
        name, item = str(entry.get("name", "")), str(entry["id"])
        modified = str(entry.get("modifiedTime", ""))
        if mime.startswith(GOOGLE_TYPES):
            export = OFFICE_EXPORTS.get(mime)
            if export is None:
                return None  # folders, shortcuts, Forms, Sites: nothing to read
            if self.config.export_format == "pdf":
                export = PDF
            ext, target = export
            label = name if name.lower().endswith(f".{ext}") else f"{name}.{ext}"
            return RemoteFile(
                address=f"gdrive://{item}",
                name=label,
                version=f"{ext}:{modified}",
                key=f"{item} {target}",
            )
        md5 = entry.get("md5Checksum")
        size = str(entry.get("size") or "")
        return RemoteFile(
            address=f"gdrive://{item}",
            name=name,
            size=int(size) if size.isdigit() else None,
            version=f"md5:{md5}" if md5 else f"modified:{modified}",
            key=item,
        )

    # -- the stored tree ----------------------------------------------------------------------

    def _load(self) -> dict[str, Any] | None:
        """Blocking: the tree and token a complete listing of this very configuration kept."""
        if self.state_path is None:
            return None
        try:
            state = json.loads(self.state_path.read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(state, dict) or state.get("key") != self._key():
            return None
        return state

    def _save(self, token: str, tree: Tree) -> None:
        """Blocking: keep the token and the tree, replaced whole (never half-written)."""
        if self.state_path is None:
            return
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        state = {
            "key": self._key(),
            "token": token,
            "root": tree.root,
            "folders": tree.folders,
            "files": tree.files,
        }
        partial = self.state_path.with_suffix(".partial")
        partial.write_text(json.dumps(state))
        os.replace(partial, self.state_path)

    # -- fetching -----------------------------------------------------------------------------

    def _download(self, item: str, export: str, out: Any) -> None:
        """Blocking: one attempt at the file's bytes (an export or ``alt=media``) into ``out``."""
        out.seek(0)
        out.truncate()
        files = self._service.files()
        if export:
            request = files.export_media(fileId=item, mimeType=export)
        else:
            request = files.get_media(fileId=item, **self._drive_params(listing=False))
        request.http = self._http()
        downloader = MediaIoBaseDownload(out, request, chunksize=DOWNLOAD_CHUNK)
        done = False
        while not done:
            _, done = downloader.next_chunk()

    async def _fetch(self, remote: RemoteFile, dest: Path) -> None:
        item, _, export = remote.key.partition(" ")
        await self._ready()
        out = await self.blocking(lambda: open(open_landing(dest), "wb"))  # noqa: SIM115
        try:
            await self._retrying(lambda: self._download(item, export, out), "document")
        finally:
            await self.blocking(out.close)

    async def aclose(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
        for http in opened:
            http.close()
