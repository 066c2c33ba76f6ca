"""OLE2 compound files (``.doc``, ``.xls``, ``.msg``), opened only after a bounded header check.

olefile follows the header's counts and the DIFAT chain as written: a DIFAT sector
that names itself as the next one, under a header claiming 2**31 FAT sectors, keeps
it reading that sector for hours, and nothing can stop a thread. Detection runs in
the API process, so :func:`open_ole` first walks what the header declares with
limits taken from the file's own size, and refuses before olefile is called:

- a sector size other than 512 or 4096 bytes;
- more FAT sectors than it takes to map twice the sectors of the file (a writer maps
  exactly its sectors; the slack is for a file cut short after its last used one);
- more DIFAT sectors than those FAT sectors need, or a DIFAT chain that leaves the
  file or comes back to a sector it has already visited.

Past that, everything olefile reads when it opens a file and lists its streams is
bounded by the file's size.
"""

from __future__ import annotations

import struct
from typing import Any

import olefile

MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_HEADER = struct.Struct("<8s16sHHHHH6sIIIIIIIII")  # [MS-CFB] 2.2, up to the DIFAT array
_HEADER_DIFAT = 109
_SECTOR_SHIFTS = frozenset({9, 12})


class OleRefused(ValueError):
    """The header declares more than the file can hold; olefile is never called on it."""


def check_header(data: bytes) -> None:
    """Refuse a compound file whose header would send olefile past the file's own size."""
    if len(data) < 512 or not data.startswith(MAGIC):
        raise OleRefused("not an OLE2 compound file")
    fields = _HEADER.unpack_from(data)
    shift, fat_sectors, difat_start, difat_sectors = fields[5], fields[9], fields[15], fields[16]
    if shift not in _SECTOR_SHIFTS:
        raise OleRefused(f"a sector size of 2**{shift} bytes")
    size = 1 << shift
    sectors = (len(data) + size - 1) // size - 1  # after the header sector, as olefile counts
    per_sector = size // 4
    if fat_sectors > 2 * -(-sectors // per_sector) + 1:
        raise OleRefused(f"{fat_sectors} FAT sectors for a file of {sectors} sectors")
    if difat_sectors > -(-max(0, fat_sectors - _HEADER_DIFAT) // (per_sector - 1)):
        raise OleRefused(f"{difat_sectors} DIFAT sectors for {fat_sectors} FAT sectors")
    seen: set[int] = set()
    sector = difat_start
    for _ in range(difat_sectors):
        if sector >= sectors or sector in seen:
            raise OleRefused("a DIFAT chain that leaves the file or loops")
        seen.add(sector)
        end = (sector + 2) * size  # the sector's last entry names the next DIFAT sector
        if end > len(data):
            raise OleRefused("a DIFAT chain that leaves the file or loops")
        (sector,) = struct.unpack_from("<I", data, end - 4)


def open_ole(data: bytes) -> Any:
    """``olefile.OleFileIO`` over ``data``, once :func:`check_header` has passed it."""
    check_header(data)
    return olefile.OleFileIO(data)
