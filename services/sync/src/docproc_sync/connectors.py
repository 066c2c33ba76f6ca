"""Where a sync run reads files from. This slice ships the ``local`` (server directory) connector.

A remote name is a label, never a path: bytes land only where
``docproc_common.storage`` derives, and the walk never follows a symbolic link
out of the configured directory.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class RemoteFile:
    address: str  # what the tracking row's source_path records
    name: str
    size: int


@dataclass(frozen=True, slots=True)
class RemoteListing:
    files: list[RemoteFile]
    complete: bool


def list_local(root: Path) -> RemoteListing:
    """Blocking: every regular file under ``root`` (symlinks skipped), sorted for a stable order."""
    root = root.resolve()
    files: list[RemoteFile] = []

    def walk() -> Iterator[Path]:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames.sort()
            for name in sorted(filenames):
                yield Path(dirpath) / name

    for path in walk():
        if path.is_symlink() or not path.is_file():
            continue
        if not path.resolve().is_relative_to(root):
            continue
        files.append(RemoteFile(str(path), path.name, path.stat().st_size))
    return RemoteListing(files, complete=True)


def read_local(address: str) -> tuple[bytes, str]:
    """Blocking: the file's bytes and their sha256."""
    data = Path(address).read_bytes()
    return data, hashlib.sha256(data).hexdigest()
