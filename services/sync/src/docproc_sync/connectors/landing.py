"""Where a remote file's bytes land: the one answer, given by ``BaseSyncConnector``
(``docproc_sync.connectors.base``).

A remote name is a label chosen by whoever could drop a file in the source
(``../../../../home/app/.ssh/authorized_keys`` is a legal name in Drive and a
legal S3 key). It is reduced to its last component, and the result is resolved
and confirmed to be a direct child of the sync directory, so ``..``, its
encodings, its look-alikes and a symbolic link already present in the directory
are one question rather than a list of spellings to keep up to date. A name that
is no component at all (``..``, ``.``, ``/``) is refused; anything else lands
inside as a file, under its own literal spelling (nothing is ever URL-decoded).
"""

from __future__ import annotations

import os
from pathlib import Path

from docproc_common.connectors.errors import RemoteNameRefusedError
from docproc_common.connectors.remote_names import last_component


def landing_path(sync_dir: Path, name: str) -> Path:
    """The path inside ``sync_dir`` where the file called ``name`` may be written.

    The result does not exist yet and resolves to a direct child of ``sync_dir``:
    a pre-existing entry (a symbolic link above all) is refused, not followed.
    """
    root = sync_dir.resolve(strict=True)
    dest = root / last_component(name)
    if dest.is_symlink() or dest.exists():
        raise RemoteNameRefusedError(
            f"The remote name {last_component(name)!r} is already present in the sync directory"
        )
    if dest.resolve().parent != root or dest.parent != root:
        raise RemoteNameRefusedError(
            f"The remote name {name[:200]!r} resolves outside the sync directory"
        )
    return dest


def confirm_landed(sync_dir: Path, dest: Path) -> None:
    """After ``_fetch``: the file is a regular file, not a link, directly inside ``sync_dir``."""
    root = sync_dir.resolve(strict=True)
    if dest.is_symlink() or not dest.is_file() or dest.resolve().parent != root:
        raise RemoteNameRefusedError("The fetched file did not land inside the sync directory")


def open_landing(dest: Path) -> int:
    """A new file at ``dest`` for writing: never follows a link, never reuses an existing entry."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    return os.open(dest, flags, 0o600)
