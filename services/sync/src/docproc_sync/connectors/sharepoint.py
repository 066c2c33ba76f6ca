"""``sharepoint``: a document library of a SharePoint site, or a user's OneDrive, through Graph.

The source names a site (``hostname`` + ``site_path``, or ``site_id``) and optionally
one of its libraries (``drive``: a name or a drive id; default the site's default
library, "Documents"), or a user's OneDrive (``user_id``), and optionally a
``folder_path`` inside it. It authenticates as an Entra app registration (the
``ms_graph_app`` secret: tenant id, client id, client secret; client credentials,
app-only) and talks to Microsoft Graph v1.0 through ``GraphClient``: at
``api_endpoints["sharepoint"]`` and ``["sharepoint_login"]`` when the deployment names
them (a national cloud, a stand-in), else the public Graph and Entra.

Change signal: the drive's **delta** query, then each item's ``cTag``. The first run
enumerates the drive with ``/drives/{id}/root/delta`` (Graph answers delta on the
root only for SharePoint and OneDrive for Business, so the folder is a filter over
the tree), follows ``@odata.nextLink`` to the ``@odata.deltaLink`` and keeps that link
with the tree it describes (item id -> name, parent, version) in the source's cache
directory. A later run follows the kept link and receives only what changed since;
renames, moves and deletions are applied to the tree by item id (delta carries no
paths). The listing is the tree, every file with its version — the ``cTag``, which
changes only when the content does (else the content's ``quickXorHash``, else the
``eTag``) — and the run fetches exactly the files whose version differs from the one
its claim recorded: an unchanged file is never downloaded.

A delta cut short (a 429/503 storm or a timeout past the retries: a ``nextLink``
but no ``deltaLink`` reached) is an incomplete listing: nothing is deleted and the
kept link stays the old one. A ``410 Gone`` on the kept link (``resyncRequired``)
starts a fresh enumeration; so does a ``full`` run. The kept link is an optimisation
of the listing, never of the decision: losing it costs one enumeration, not one
download.

Addresses are ``sharepoint://<drive-id>/<path in the drive>`` (a ``/`` or ``%`` in an
item's name is percent-encoded, so two items never share one); a moved or renamed
file is a new address whose bytes match the document it was, claimed without being
embedded again.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.errors import ClientFailedError, ConnectorError
from docproc_common.connectors.specs.sharepoint import (
    DRIVE_ID,
    SharePointConfig,
    SharePointSpec,
)
from docproc_common.vault import MsGraphAppValue
from pydantic import ValidationError

from docproc_sync.connectors.base import BaseSyncConnector, RemoteFile, RemoteListing
from docproc_sync.connectors.landing import open_landing
from docproc_sync.connectors.msgraph import (
    GRAPH_URL,
    LOGIN_URL,
    DeltaGoneError,
    GraphClient,
    GraphUnavailableError,
)

log = logging.getLogger(__name__)

STATE_FILE = "graph-delta.json"
STATE_FORMAT = 1
MAX_DEPTH = 400


@dataclass(frozen=True, slots=True)
class Node:
    """One item of the drive's tree as delta described it (``parent`` None: the drive root)."""

    name: str
    parent: str | None
    folder: bool
    size: int | None = None
    version: str | None = None


def item_version(item: Mapping[str, Any]) -> str | None:
    """The content's version: ``cTag`` (content only), else ``quickXorHash``, else ``eTag``."""
    ctag = item.get("cTag")
    if isinstance(ctag, str) and ctag:
        return ctag
    hashes = (item.get("file") or {}).get("hashes") or {}
    quick = hashes.get("quickXorHash") if isinstance(hashes, dict) else None
    if isinstance(quick, str) and quick:
        return f"quickXorHash:{quick}"
    etag = item.get("eTag")
    return etag if isinstance(etag, str) and etag else None


def apply_delta(nodes: dict[str, Node], items: list[Any]) -> None:
    """Apply one delta page to the tree: the latest state of each item, by id."""
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        item_id = item["id"]
        if "deleted" in item or not ("file" in item or "folder" in item or "root" in item):
            nodes.pop(item_id, None)  # gone, or neither file nor folder (a package)
            continue
        parent = (item.get("parentReference") or {}).get("id")
        size = item.get("size")
        nodes[item_id] = Node(
            name=str(item.get("name") or ""),
            parent=None if "root" in item or not isinstance(parent, str) else parent,
            folder="file" not in item,
            size=size if isinstance(size, int) and size >= 0 else None,
            version=item_version(item) if "file" in item else None,
        )


def _escape(name: str) -> str:
    return name.replace("%", "%25").replace("/", "%2F").replace("\\", "%5C")


class Tree:
    """Paths and scope over a delta tree (every walk bounded: a cycle is no path)."""

    def __init__(self, nodes: Mapping[str, Node], scope: str) -> None:
        self.nodes = nodes
        self.scope = scope
        self._paths: dict[str, tuple[tuple[str, ...], bool] | None] = {}

    def place(self, item_id: str) -> tuple[tuple[str, ...], bool] | None:
        """The item's names from the drive root, and whether it lies under the scope folder;
        None for an item whose chain of parents is broken (an orphan of a deleted folder)."""
        chain: list[str] = []
        here: str | None = item_id
        while here is not None and here not in self._paths:
            node = self.nodes.get(here)
            if node is None or len(chain) > MAX_DEPTH or here in chain:
                for seen in chain:
                    self._paths[seen] = None
                self._paths[here] = None
                return None
            chain.append(here)
            here = node.parent
        known = ((), False) if here is None else self._paths[here]
        for seen in reversed(chain):
            if known is not None:
                node = self.nodes[seen]
                names = known[0] if node.parent is None else (*known[0], node.name)
                known = (names, known[1] or seen == self.scope)
            self._paths[seen] = known
        return self._paths[item_id]

    def files(self, drive_id: str) -> list[RemoteFile]:
        found: list[RemoteFile] = []
        for item_id, node in self.nodes.items():
            if node.folder:
                continue
            place = self.place(item_id)
            if place is None or not place[1]:
                continue
            path = "/".join(_escape(n) for n in place[0])
            found.append(
                RemoteFile(
                    address=f"sharepoint://{drive_id}/{path}",
                    name=node.name,
                    size=node.size,
                    version=node.version,
                    key=item_id,
                )
            )
        return found


@dataclass(frozen=True, slots=True)
class DeltaState:
    """What a complete listing keeps for the next run: the delta link and the tree it describes."""

    drive_id: str
    delta_link: str
    nodes: dict[str, Node]


class SharePointConnector(SharePointSpec, BaseSyncConnector[SharePointConfig]):
    """A SharePoint document library or a OneDrive through Microsoft Graph (see the module)."""

    def __init__(
        self, config: SharePointConfig, secret: Mapping[str, Any] | None, options: ConnectorOptions
    ) -> None:
        super().__init__(config, secret, options)
        try:
            app = MsGraphAppValue.model_validate(dict(self.secret))
        except ValidationError as exc:
            raise ConnectorError(
                "The source's ms_graph_app secret lacks a tenant_id, client_id or client_secret "
                "of the expected shape"
            ) from exc
        endpoints = options.api_endpoints
        self.graph = GraphClient(
            app,
            options,
            base=endpoints.get(self.NAME, GRAPH_URL),
            login=endpoints.get(f"{self.NAME}_login", LOGIN_URL),
        )
        self.drive_id: str | None = None

    # -- resolving the config to a drive and a folder ------------------------------------------

    async def _found(self, url: str, what: str, field: str) -> dict[str, Any]:
        try:
            return await self.graph.get(url)
        except ClientFailedError as exc:
            if exc.kind == "Microsoft Graph: itemNotFound":
                raise ConnectorError(
                    f"Microsoft Graph found no {what} (itemNotFound): check config.{field}"
                ) from exc
            raise

    async def _resolve_drive(self) -> str:
        c, g = self.config, self.graph
        if c.user_id is not None:
            drive = await self._found(g.url("users", c.user_id, "drive"), "such user", "user_id")
            return str(drive["id"])
        if c.site_id is not None:
            site_id = c.site_id
        else:
            assert c.hostname is not None
            path = c.site_path.strip("/")
            url = g.url("sites", c.hostname) + (":/" + _quote_path(path) if path else "")
            site_id = str((await self._found(url, "such site", "site_path"))["id"])
        if c.drive is None:
            drive = await self._found(g.url("sites", site_id, "drive"), "default library", "drive")
            return str(drive["id"])
        if DRIVE_ID.fullmatch(c.drive):
            drive = await self._found(g.url("sites", site_id, "drives", c.drive), "drive", "drive")
            return str(drive["id"])
        link: str | None = g.url("sites", site_id, "drives")
        while link:
            page = await g.get(link)
            for drive in page.get("value") or []:
                if str(drive.get("name", "")).casefold() == c.drive.casefold():
                    return str(drive["id"])
            link = page.get("@odata.nextLink")
        raise ConnectorError("The site has no document library of that name: check config.drive")

    async def _resolve_scope(self, drive_id: str) -> str:
        path = self.config.folder_path.strip("/")
        if not path:
            return str((await self.graph.get(self.graph.url("drives", drive_id, "root")))["id"])
        url = self.graph.url("drives", drive_id, "root") + ":/" + _quote_path(path)
        item = await self._found(url, "such folder", "folder_path")
        if "folder" not in item:
            raise ConnectorError("The folder_path names a file, not a folder")
        return str(item["id"])

    # -- the listing ---------------------------------------------------------------------------

    async def list_files(self) -> RemoteListing:
        try:
            drive_id = await self._resolve_drive()
            scope = await self._resolve_scope(drive_id)
        except GraphUnavailableError as exc:
            return RemoteListing([], complete=False, note=f"Microsoft Graph {exc.kind}")
        self.drive_id = drive_id
        kept = None if self.options.full_listing else await self.blocking(self._load, drive_id)
        nodes: dict[str, Node] = dict(kept.nodes) if kept else {}
        start = self.graph.url("drives", drive_id, "root", "delta")
        link, resynced = (kept.delta_link if kept else start), kept is None
        try:
            while True:
                try:
                    page = await self.graph.get(link)
                except DeltaGoneError:
                    if resynced:
                        raise
                    log.info(
                        "Graph answered 410 on drive %s's delta link: enumerating afresh", drive_id
                    )
                    nodes, link, resynced = {}, start, True
                    continue
                apply_delta(nodes, list(page.get("value") or []))
                if isinstance(page.get("@odata.nextLink"), str):
                    link = page["@odata.nextLink"]
                elif isinstance(page.get("@odata.deltaLink"), str):
                    delta_link = page["@odata.deltaLink"]
                    break
                else:
                    raise ClientFailedError(
                        "Microsoft Graph: a delta page with neither link", subject="source"
                    )
        except GraphUnavailableError as exc:
            files = Tree(nodes, scope).files(drive_id)
            return RemoteListing(
                files,
                complete=False,
                note=f"the delta listing was cut short (Microsoft Graph {exc.kind}); "
                "the last delta link is kept",
            )
        tree = Tree(nodes, scope)
        files = tree.files(drive_id)
        connected = {i: n for i, n in nodes.items() if tree.place(i) is not None}
        await self.blocking(self._save, DeltaState(drive_id, delta_link, connected))
        return RemoteListing(files, complete=True)

    def _state_path(self) -> Path | None:
        return None if self.options.cache_dir is None else Path(self.options.cache_dir) / STATE_FILE

    def _load(self, drive_id: str) -> DeltaState | None:
        """Blocking: the kept delta link and tree, if they are this drive's and readable."""
        path = self._state_path()
        if path is None or not path.is_file():
            return None
        try:
            doc = json.loads(path.read_text())
            if doc.get("format") != STATE_FORMAT or doc.get("drive_id") != drive_id:
                return None
            link = str(doc["delta_link"])
            nodes = {str(k): Node(*v) for k, v in doc["nodes"].items()}
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return DeltaState(drive_id, link, nodes) if self.graph.inside(link) else None

    def _save(self, state: DeltaState) -> None:
        """Blocking: keep the delta link and its tree (written aside, then renamed over)."""
        path = self._state_path()
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = {
            "format": STATE_FORMAT,
            "drive_id": state.drive_id,
            "delta_link": state.delta_link,
            "nodes": {
                k: [n.name, n.parent, n.folder, n.size, n.version] for k, n in state.nodes.items()
            },
        }
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc, separators=(",", ":")))
        os.replace(tmp, path)

    # -- the content ---------------------------------------------------------------------------

    async def _fetch(self, remote: RemoteFile, dest: Path) -> None:
        if self.drive_id is None:
            raise ConnectorError("The drive was not listed in this run")
        url = self.graph.url("drives", self.drive_id, "items", remote.key, "content")
        out = open(open_landing(dest), "wb")  # noqa: SIM115 - closed below, written in threads
        try:

            async def write(chunk: bytes) -> None:
                await self.blocking(out.write, chunk)

            await self.graph.download(url, write)
        finally:
            await self.blocking(out.close)

    async def aclose(self) -> None:
        await self.graph.aclose()


def _quote_path(path: str) -> str:
    return "/".join(quote(segment, safe="") for segment in path.split("/"))
