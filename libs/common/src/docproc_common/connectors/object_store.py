"""``ObjectStoreConnector``: S3, Azure Blob and GCS are one connector with three clients.

The shared class holds the listing loop, the ``<scheme>://<container>/<key>``
address and the skipping of directory markers; a subclass brings a client, a
``SCHEME`` and the ``CONFIG_MODEL`` field that names the container (``bucket``
for S3 and GCS, ``container`` for Azure). Its two hooks are blocking on purpose,
because the three SDKs are, and the shared class runs them in a worker thread.

Change signal: the object's ETag, read by the listing before any byte is fetched.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, TypeVar

from pydantic import BaseModel

from docproc_common.connectors.base import BaseSyncConnector, RemoteFile, RemoteListing

C = TypeVar("C", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class StoredObject:
    key: str
    size: int
    etag: str | None


def is_directory_marker(obj: StoredObject) -> bool:
    """A console-made "folder": a key ending in ``/`` (or the old ``_$folder$`` convention)."""
    return obj.key.endswith("/") or obj.key.endswith("_$folder$")


class ObjectStoreConnector(BaseSyncConnector[C]):
    SCHEME: ClassVar[str]
    CONTAINER_FIELD: ClassVar[str] = "bucket"
    CHANGE_SIGNAL = "ETag"

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

    async def list_files(self) -> RemoteListing:
        files: list[RemoteFile] = []
        token: str | None = None
        while True:
            objects, token = await self.blocking(self._list_page, token)
            for obj in objects:
                if is_directory_marker(obj):
                    continue
                files.append(
                    RemoteFile(
                        address=self.address(obj.key),
                        name=obj.key,
                        size=obj.size,
                        version=obj.etag,
                        key=obj.key,
                    )
                )
            if token is None:
                return RemoteListing(files, complete=True)

    async def _fetch(self, remote: RemoteFile, dest: Path) -> None:
        await self.blocking(self._download, remote.key, dest)
