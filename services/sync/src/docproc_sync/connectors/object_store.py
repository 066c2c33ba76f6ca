"""``ObjectStoreConnector``: S3, Azure Blob and GCS are one connector with three clients.

The shared class holds the listing loop, the ``<scheme>://<container>/<key>``
address, the skipping of directory markers and the retrying of a store that asks
to be left alone; a subclass brings a client, a ``SCHEME`` and the
``CONFIG_MODEL`` field that names the container (``bucket`` for S3 and GCS,
``container`` for Azure). Its two hooks are blocking on purpose, because the
three SDKs are, and the shared class runs them in a worker thread.

Change signal: the object's version as the listing reports it (the ETag; for GCS
its ``md5Hash``, or its ``generation``), read before any byte is fetched.

A store that answers 429 or 503 (or another 5xx, or times out) is retried by the
shared class, not the SDK: a subclass raises :class:`TransientError` with the
``Retry-After`` the store sent, and the call is tried again after that long or an
exponential backoff, whichever is longer, ``ATTEMPTS`` times in all, waiting on the
event loop (no thread is held while waiting). A listing whose later page still fails
after that is **incomplete**: the files of the pages read are synced and nothing is
deleted. A first page that fails, or a refusal (403, a missing container), fails the
run.
"""

from __future__ import annotations

import asyncio
import random
import re
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, TypeVar

from docproc_common.connectors.errors import ClientFailedError, Subject
from docproc_common.connectors.specs.object_store import ObjectStoreSpec
from pydantic import BaseModel

from docproc_sync.connectors.base import BaseSyncConnector, RemoteFile, RemoteListing

C = TypeVar("C", bound=BaseModel)
T = TypeVar("T")

#: HTTP statuses a store may answer differently next time.
TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_SYMBOL = re.compile(r"^[A-Za-z0-9.]{1,64}$")


@dataclass(frozen=True, slots=True)
class StoredObject:
    key: str
    size: int
    version: str | None  # the change signal the listing reports (ETag, md5Hash, generation)


class TransientError(ClientFailedError):
    """A call the store may answer next time (429, 5xx, a timeout, a dropped connection).

    ``retry_after``: the seconds the store asked for (its ``Retry-After``), if it said.
    """

    def __init__(self, kind: str, *, subject: Subject, retry_after: float | None = None) -> None:
        super().__init__(kind, subject=subject)
        self.retry_after = retry_after


def failure_kind(code: object, exc: BaseException) -> str:
    """What a failed call says in a sync log: the store's error code (``AuthenticationFailed``,
    ``ContainerNotFound``) when it is a plain symbol, else the exception's class; never its
    message, which quotes the endpoint, the container and the request's query string."""
    text = str(getattr(code, "value", code) or "")
    return text if _SYMBOL.fullmatch(text) else type(exc).__name__


def is_directory_marker(obj: StoredObject) -> bool:
    """A console-made "folder": a key ending in ``/`` (or the old ``_$folder$`` convention)."""
    return obj.key.endswith("/") or obj.key.endswith("_$folder$")


class ObjectStoreConnector(ObjectStoreSpec, BaseSyncConnector[C]):
    SCHEME: ClassVar[str]
    CONTAINER_FIELD: ClassVar[str] = "bucket"
    #: Objects asked for per listing request.
    PAGE_SIZE: ClassVar[int] = 1000
    #: Tries of one call the store answers with a transient failure, the first included.
    ATTEMPTS: ClassVar[int] = 5
    #: The first backoff, doubled at each further try (with jitter).
    BACKOFF_S: ClassVar[float] = 0.5
    #: The longest wait between two tries, whatever ``Retry-After`` asks for.
    MAX_WAIT_S: ClassVar[float] = 30.0

    @property
    def container(self) -> str:
        return str(getattr(self.config, self.CONTAINER_FIELD))

    @property
    def prefix(self) -> str:
        return str(getattr(self.config, "prefix", "") or "")

    def address(self, key: str) -> str:
        return f"{self.SCHEME}://{self.container}/{key}"

    @abstractmethod
    def _list_page(self, token: str | None) -> tuple[list[StoredObject], str | None]:
        """Blocking: one page of objects under the prefix and the token of the next (None: last)."""

    @abstractmethod
    def _download(self, key: str, dest: Path) -> int:
        """Blocking: write the object's bytes to ``dest`` (via ``open_landing``); the bytes written."""

    def _wait(self, attempt: int, asked: float | None) -> float:
        backoff = self.BACKOFF_S * 2.0 ** (attempt - 1) * random.uniform(0.5, 1.0)  # noqa: S311
        return min(self.MAX_WAIT_S, max(asked or 0.0, backoff))

    async def _call(
        self, fn: Callable[..., T], *args: object, undo: Callable[[], None] | None = None
    ) -> T:
        """``fn`` in a worker thread, tried again on a ``TransientError`` (``undo`` in between)."""
        attempt = 1
        while True:
            try:
                return await self.blocking(fn, *args)
            except TransientError as exc:
                if attempt >= self.ATTEMPTS:
                    raise
                if undo is not None:
                    await self.blocking(undo)
                await asyncio.sleep(self._wait(attempt, exc.retry_after))
                attempt += 1

    async def list_files(self) -> RemoteListing:
        files: list[RemoteFile] = []
        token: str | None = None
        pages = 0
        while True:
            try:
                objects, token = await self._call(self._list_page, token)
            except TransientError as exc:
                if pages == 0:
                    raise
                note = (
                    f"the store stopped answering after {pages} pages of the listing "
                    f"({exc.kind}, {self.ATTEMPTS} tries); the next run lists again"
                )
                return RemoteListing(files, complete=False, note=note)
            pages += 1
            for obj in objects:
                if is_directory_marker(obj):
                    continue
                files.append(
                    RemoteFile(
                        address=self.address(obj.key),
                        name=obj.key,
                        size=obj.size,
                        version=obj.version,
                        key=obj.key,
                    )
                )
            if token is None:
                return RemoteListing(files, complete=True)

    async def _fetch(self, remote: RemoteFile, dest: Path) -> None:
        # a try cut short leaves part of the file: the next one starts from no file
        await self._call(
            self._download, remote.key, dest, undo=lambda: dest.unlink(missing_ok=True)
        )
