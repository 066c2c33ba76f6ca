"""What a remote name may become on this side: its last component (``last_component``).

A remote name is a label chosen by whoever could drop a file in the source
(``../../../../home/app/.ssh/authorized_keys`` is a legal name in Drive and a
legal S3 key). It is reduced to its last component; a name that is no component at
all (``..``, ``.``, ``/``) is refused. Where the bytes then land is sync's
(``docproc_sync.connectors.landing``).
"""

from __future__ import annotations

import re
import unicodedata

from docproc_common.connectors.errors import RemoteNameRefusedError

MAX_COMPONENT_BYTES = 255
_SEPARATORS = re.compile(r"[/\\]")


def last_component(name: str) -> str:
    """The last path component of a remote name, refused when it names no file."""
    shown = name if len(name) <= 200 else name[:200] + "…"
    last = _SEPARATORS.split(unicodedata.normalize("NFC", name))[-1]
    if last in {"", ".", ".."}:
        raise RemoteNameRefusedError(f"The remote name {shown!r} does not name a file")
    if "\x00" in last:
        raise RemoteNameRefusedError(f"The remote name {shown!r} contains a NUL byte")
    encoded = last.encode()
    if len(encoded) > MAX_COMPONENT_BYTES:
        stem, dot, ext = last.rpartition(".")
        keep = f"{dot}{ext}" if dot and len(ext.encode()) <= 16 else ""
        budget = MAX_COMPONENT_BYTES - len(keep.encode())
        last = (stem if keep else last).encode()[:budget].decode(errors="ignore") + keep
    return last
