"""``local``: a directory of the *server*. App admins only: no tenant owns the server's disk."""

from __future__ import annotations

import os
from pathlib import Path

from docproc_common.connectors.errors import ConnectorError
from docproc_common.connectors.specs.local import (
    LocalConfig,
    LocalSpec,
    never_synced,
)

from docproc_sync.connectors.base import BaseSyncConnector, RemoteFile, RemoteListing
from docproc_sync.connectors.landing import open_landing


def _walk(root: Path) -> list[RemoteFile]:
    """Every regular file under ``root``, never entering a ``never_synced`` directory (the
    path was checked, but a folder above docproc's home holds it)."""
    skip = never_synced()
    files: list[RemoteFile] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if Path(dirpath, d).resolve() not in skip)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            try:
                st = path.lstat()
            except OSError:
                continue
            if path.is_symlink() or not path.is_file():
                continue
            files.append(
                RemoteFile(
                    address=str(path),
                    name=str(path.relative_to(root)),
                    size=st.st_size,
                    version=f"{st.st_mtime_ns}-{st.st_size}",
                    key=str(path),
                )
            )
    return files


def _copy(root: Path, source: Path, dest: Path) -> None:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        src_fd = os.open(source, flags)
    except OSError as exc:
        raise ConnectorError(f"The file {source} could not be read ({exc.strerror})") from exc
    with open(src_fd, "rb") as src:
        # the file was swapped for one outside the directory since the listing
        if not Path(os.path.realpath(source)).is_relative_to(root):
            raise ConnectorError(f"The file {source} is no longer inside {root}")
        with open(open_landing(dest), "wb") as out:
            while chunk := src.read(1 << 20):
                out.write(chunk)


class LocalConnector(LocalSpec, BaseSyncConnector[LocalConfig]):
    """Every regular file under ``path`` (symbolic links are skipped, never followed).

    Change signal: the file's mtime and size, read by the listing, before any byte.
    """

    @property
    def root(self) -> Path:
        return Path(self.config.path).resolve()

    async def list_files(self) -> RemoteListing:
        root = self.root
        if not root.is_dir():
            raise ConnectorError(f"The directory {self.config.path} does not exist")
        return RemoteListing(await self.blocking(_walk, root), complete=True)

    async def _fetch(self, remote: RemoteFile, dest: Path) -> None:
        await self.blocking(_copy, self.root, Path(remote.key), dest)
