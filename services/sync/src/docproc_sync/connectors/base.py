"""The connectors' running side: ``list_files`` + ``_fetch`` on a spec
(``docproc_common.connectors.base.ConnectorSpec``: a pydantic ``CONFIG_MODEL`` + ``SECRET_KIND``).

A connector says what a source holds and fetches one file to a path it is
*given*. Where that path is (``fetch``) is ``BaseSyncConnector``'s answer, never
a connector's, so a connector added later inherits the refusal of hostile names
instead of having to remember it.

``config`` says how to *find* the documents; what authenticates is a vault
secret the source names in ``secret_id``, opened by the worker for the source's
own organization and handed to the connector as ``secret``. A connector cannot
reach the vault and has no deployment-wide fallback: without its secret it
refuses to run.
"""

from __future__ import annotations

import asyncio
import shutil
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from docproc_common.connectors.base import ConnectorOptions, ConnectorSpec
from docproc_common.connectors.errors import ConnectorError
from pydantic import BaseModel

from docproc_sync.connectors.landing import confirm_landed, landing_path, open_landing

C = TypeVar("C", bound=BaseModel)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RemoteFile:
    """One file a source lists.

    ``address`` is what the tracking row's ``source_path`` records
    (``s3://bucket/key``, a URL, an absolute path); ``name`` is the remote's own
    name for it, a label that may contain separators; ``version`` is the cheap
    change signal read *before* downloading (ETag, blob id, mtime), or None when
    the remote offers none; ``key`` is the connector's own handle.
    """

    address: str
    name: str
    size: int | None = None
    version: str | None = None
    key: str = ""


@dataclass(frozen=True, slots=True)
class RemoteListing:
    """What ``list_files`` found. ``complete`` says whether it names everything the source holds.

    A listing that ends (or raises) is complete by construction; one that can stop
    half-way (a crawler at its page limit, after a page that timed out) says
    ``complete=False``, and that run deletes nothing.
    """

    files: list[RemoteFile]
    complete: bool
    note: str | None = None
    signal: str | None = None  # a whole-source change signal (a commit sha), for the log


class BaseSyncConnector(ConnectorSpec, ABC, Generic[C]):
    def __init__(
        self, config: C, secret: Mapping[str, Any] | None, options: ConnectorOptions
    ) -> None:
        if self.SECRET_KIND and self.SECRET_REQUIRED and not secret:
            raise ConnectorError(
                f"The {self.NAME} connector authenticates with a {self.SECRET_KIND} secret "
                "from the vault, and the source has none it can open"
            )
        self.config = config
        self.secret: Mapping[str, Any] = secret or {}
        self.options = options

    @abstractmethod
    async def list_files(self) -> RemoteListing:
        """Everything the source holds under this config (``complete`` says if it is everything)."""

    @abstractmethod
    async def _fetch(self, remote: RemoteFile, dest: Path) -> None:
        """Write the bytes of ``remote`` to ``dest``, a new file the base chose. Nowhere else."""

    async def fetch(self, remote: RemoteFile, sync_dir: Path) -> Path:
        """Fetch ``remote`` into ``sync_dir`` and return where it landed (the base decides where)."""
        dest = landing_path(sync_dir, remote.name)
        await self._fetch(remote, dest)
        confirm_landed(sync_dir, dest)
        return dest

    async def aclose(self) -> None:
        """Release what the connector holds (clients, temporary files)."""

    async def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a blocking SDK call in a worker thread (the deployment's blocking pool when given)."""
        if self.options.pool is not None:
            return await self.options.pool.run(fn, *args)
        return await asyncio.to_thread(fn, *args)


def copy_into(source: Path, dest: Path) -> int:
    """Blocking: copy an open-able local file into a landing path; returns the bytes copied."""
    fd = open_landing(dest)
    with open(fd, "wb") as out, source.open("rb") as src:
        shutil.copyfileobj(src, out, 1 << 20)
        return out.tell()


def write_into(dest: Path, data: bytes) -> int:
    """Blocking: write ``data`` to a landing path (created new, never through a link)."""
    fd = open_landing(dest)
    with open(fd, "wb") as out:
        out.write(data)
    return len(data)
