"""How the chat runner fetches what a render wrote: short-lived links bound to the caller.

A workspace is the agent's (a ``state`` workspace, a sandbox), not docproc's. A render
writes the turn's files into docproc's copy of it (``workspaces/{user}/{agent}/
{conversation}/`` of the file store) and names, for each file, where it was written
(``workspace_path``) and how to fetch it (``fetch``): a link per written file (the
original, its extracted text), or for an unpacked archive one link to the listing of its
members, each member with its own link. The runner copies them into its sandbox at those
paths (docs/chat-uploads.md, "The runner's loop").

A link (``docproc_upload.downloads``) is signed, expires with the render's
``workspace_link_ttl_s`` and is bound to the caller that rendered: another person,
another organisation, a tampered or expired link all read like no file (404). It names
the agent, the conversation and a path under ``uploads/``; the storage key is rebuilt
from the *presenting* caller's own workspace, so even a genuine link can reach nothing
outside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from docproc_common.auth import Principal
from docproc_common.errors import NotFound

from docproc_upload.chat.attachments import UPLOADS, FileOutcome, Mode
from docproc_upload.downloads import LINK_REFUSED, Link, open_link, sign_link

FILE = "workspace-file"
LISTING = "workspace-listing"
FILES_ROUTE = "/api/v1/workspace/files/"
LISTINGS_ROUTE = "/api/v1/workspace/listings/"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@dataclass(frozen=True, slots=True)
class Entry:
    """One file to copy: its path in the workspace (``/uploads/...``), size and link."""

    path: str
    size: int
    url: str


@dataclass(frozen=True, slots=True)
class Fetch:
    """How to fetch one rendered file: its ``entries``, or (an archive) ``listing_url``."""

    expires_at: datetime
    entries: list[Entry]
    listing_url: str | None = None


@dataclass(frozen=True, slots=True)
class Target:
    """What an opened link names, in the presenting caller's workspace."""

    agent_id: str
    conversation_id: str
    path: str
    link: Link

    def key(self, root: str) -> str:
        """The storage key below ``root``, the caller's workspace of this agent and chat."""
        return f"{root}/{self.path}"


class WorkspaceLinks:
    """Mints the links of one workspace for one caller, all expiring at ``expires_at``."""

    def __init__(
        self,
        key: bytes,
        caller: Principal,
        agent_id: str,
        conversation_id: str,
        expires_at: int,
    ) -> None:
        self._key = key
        self._caller = caller
        self._agent = agent_id
        self._conversation = conversation_id
        self.expires_at = expires_at

    def _sign(self, purpose: str, path: str) -> str:
        return sign_link(
            self._key,
            Link(
                purpose=purpose,
                user_id=self._caller.user_id,
                organization_id=self._caller.organization_id,
                target=(self._agent, self._conversation, path),
                expires_at=self.expires_at,
            ),
        )

    def entry(self, path: str, size: int) -> Entry:
        """``path`` relative to the workspace (``uploads/...``)."""
        return Entry("/" + path, size, FILES_ROUTE + self._sign(FILE, path))

    def listing_url(self, folder: str) -> str:
        return LISTINGS_ROUTE + self._sign(LISTING, folder.rstrip("/"))

    def fetch(self, outcome: FileOutcome, size: int, text: str | None) -> Fetch | None:
        """How to fetch what the render wrote for one file; None when it wrote nothing there
        (inline, not opened, not written, skipped).

        ``size`` is the original's, ``text`` the extracted text a sibling holds."""
        if outcome.mode is not Mode.WORKSPACE or not outcome.workspace_path:
            return None
        expires = datetime.fromtimestamp(self.expires_at, UTC)
        if outcome.workspace_path.endswith("/"):  # an unpacked archive: its members listed
            return Fetch(expires, [], self.listing_url(outcome.workspace_path))
        entries = [self.entry(outcome.workspace_path, size)]
        if outcome.sibling_path:
            entries.append(self.entry(outcome.sibling_path, len((text or "").encode("utf-8"))))
        return Fetch(expires, entries)


def open_target(key: bytes, token: str, *, purpose: str, caller: Principal, now: float) -> Target:
    """The link's target, or ``NotFound`` (see ``downloads.open_link``). A target outside
    ``uploads/`` is refused as well, though only a link docproc signed gets this far."""
    link = open_link(key, token, purpose=purpose, caller=caller, now=now)
    if len(link.target) != 3:
        raise NotFound(LINK_REFUSED)
    agent_id, conversation_id, path = link.target
    parts = path.split("/")
    if (
        not _ID.fullmatch(agent_id)
        or not _ID.fullmatch(conversation_id)
        or parts[0] != UPLOADS
        or len(parts) < 2
        or any(p in {"", ".", ".."} for p in parts)
    ):
        raise NotFound(LINK_REFUSED)
    return Target(agent_id, conversation_id, path, link)


def listed(links: WorkspaceLinks, root: str, objects: list[tuple[str, int]]) -> list[Entry]:
    """A folder's stored objects (keys under ``root``) as entries, each with its own link."""
    cut = len(root) + 1
    return [links.entry(key[cut:], size) for key, size in objects if key.startswith(root + "/")]
