"""``docproc ingest`` finishes what it starts: it waits out a busy server, and a second run
uploads only what the knowledge base does not already hold.

* **Busy.** While the pipeline is at its bound, the upload intake answers 503
  ``UNAVAILABLE`` with ``Retry-After`` (docs/operations.md, "Backpressure") and keeps
  nothing of the refused upload. The same file is sent again after that wait (capped at
  ``MAX_RETRY_AFTER_S``; ``DEFAULT_WAIT_S`` when the header is missing or unreadable), so
  a folder larger than the bound is ingested whole. Only after ``max_wait_s`` of waiting
  on one file does the command give up (``StayedBusy``). Any other error, a 503 without
  the project's envelope (a proxy's) included, is not retried. The listing of what the
  base holds and the indexing poll wait out a busy answer the same way (``patiently``).
* **Resume.** A local file whose name (as the server cleans it) and sha256 match a
  document the base lists is already there and is not sent again. A document that
  failed (``error``) does not count: its file is uploaded again, a new document beside
  the failed one (which stays until it is deleted or retried). A changed file (same
  name, other bytes) is a new document beside the old version; nothing is replaced,
  since one folder may hold several files of one name. Documents uploaded before uploads
  recorded their hash have none and never match.
"""

from __future__ import annotations

import email.utils
import functools
import hashlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from docproc_common.errors import Unavailable
from docproc_common.storage import clean_filename

#: The wait when a busy answer names none (or one that cannot be read).
DEFAULT_WAIT_S = 5.0
#: The longest single wait: a server that asks for more is asked again sooner.
MAX_RETRY_AFTER_S = 60.0
#: The shortest: a ``Retry-After`` of 0 or a date already past does not spin.
MIN_RETRY_AFTER_S = 1.0
#: ``--max-wait``'s default: how long one file may wait on a busy server in all.
DEFAULT_MAX_WAIT_S = 1800
#: The listing's largest page (``GET /kb/{id}/documents?limit=``).
PAGE_SIZE = 500

#: A document as a local file is compared with it: (file name, sha256 hex).
Key = tuple[str, str]


class StayedBusyError(Exception):
    """The server kept answering "busy" for one file longer than the caller would wait."""

    def __init__(self, response: httpx.Response, waited_s: float) -> None:
        super().__init__(f"busy after {waited_s:.0f} s")
        self.response = response
        self.waited_s = waited_s


def retry_after_s(header: str | None, *, now: datetime | None = None) -> float:
    """The wait a ``Retry-After`` asks for (RFC 9110: delay-seconds or an HTTP-date),
    between ``MIN_RETRY_AFTER_S`` and ``MAX_RETRY_AFTER_S``."""
    value = (header or "").strip()
    if value.isdigit():
        seconds = float(value)
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return DEFAULT_WAIT_S
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return min(max(seconds, MIN_RETRY_AFTER_S), MAX_RETRY_AFTER_S)


def busy_wait_s(response: httpx.Response, *, now: datetime | None = None) -> float | None:
    """How long to wait before sending the same upload again, or None when the answer is
    not the server's "busy" (503 in the project's error envelope, code ``UNAVAILABLE``)."""
    if response.status_code != Unavailable.status_code:
        return None
    try:
        code = response.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None
    if code != Unavailable.code:
        return None
    return retry_after_s(response.headers.get("Retry-After"), now=now)


Waiting = Callable[[float], None]
"""Told how many seconds to wait on a busy server; it sleeps them (and may show it)."""


def patiently(
    ask: Callable[[], httpx.Response], *, max_wait_s: float, waiting: Waiting
) -> httpx.Response:
    """``ask()``'s first answer that is not "busy": while the server is busy,
    ``waiting(seconds)``, then ask again; past ``max_wait_s`` of waiting in all,
    ``StayedBusyError``."""
    waited_s = 0.0
    while True:
        response = ask()
        wait_s = busy_wait_s(response)
        if wait_s is None:
            return response
        if waited_s + wait_s > max_wait_s:
            raise StayedBusyError(response, waited_s)
        waiting(wait_s)
        waited_s += wait_s


def send(
    client: httpx.Client, kb_id: str, path: Path, *, max_wait_s: float, waiting: Waiting
) -> httpx.Response:
    """Upload ``path``, sent again from its first byte after each busy answer
    (``patiently``)."""

    def post() -> httpx.Response:
        with path.open("rb") as fh:
            return client.post(f"/kb/{kb_id}/documents", files={"file": (path.name, fh)})

    return patiently(post, max_wait_s=max_wait_s, waiting=waiting)


def held(
    client: httpx.Client,
    kb_id: str,
    check: Callable[[httpx.Response], Any],
    *,
    max_wait_s: float,
    waiting: Waiting,
) -> set[Key]:
    """What the base holds that a file need not be sent again for: each listed document
    with a content hash that did not fail, every page of the listing (each page asked
    ``patiently``)."""
    keys: set[Key] = set()
    cursor: str | None = None
    while True:
        params: dict[str, str | int] = {"limit": PAGE_SIZE}
        if cursor:
            params["cursor"] = cursor
        page = check(
            patiently(
                functools.partial(client.get, f"/kb/{kb_id}/documents", params=params),
                max_wait_s=max_wait_s,
                waiting=waiting,
            )
        )
        keys |= {
            (doc["filename"], doc["content_hash"])
            for doc in page["items"]
            if doc.get("content_hash") and doc["status"] != "error"
        }
        cursor = page.get("next_cursor")
        if not cursor:
            return keys


def key(path: Path) -> Key:
    """The file as the base would list it: its name as the server cleans it, its sha256."""
    with path.open("rb") as fh:
        return clean_filename(path.name), hashlib.file_digest(fh, "sha256").hexdigest()
