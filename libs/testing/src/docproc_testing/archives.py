"""Zip and tar.gz archives for tests, built in memory: the members exactly as given, even
duplicates, links and special files an archive checker must refuse."""

from __future__ import annotations

import io
import tarfile
import warnings
import zipfile
from collections.abc import Callable, Sequence


def make_zip(members: Sequence[tuple[str | zipfile.ZipInfo, bytes]], level: int = 6) -> bytes:
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicates we write on purpose
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as zf:
            for name, data in members:
                zf.writestr(name, data)
    return out.getvalue()


def zip_info(name: str, mode: int) -> zipfile.ZipInfo:
    """A member ``name`` with Unix ``mode`` (file type and permission bits)."""
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = mode << 16
    return info


def make_tgz(members: Sequence[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", format=tarfile.PAX_FORMAT) as tf:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return out.getvalue()


def tar_file(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def tar_special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info, None


def tar_dir(name: str) -> tuple[tarfile.TarInfo, None]:
    return tar_special(name, tarfile.DIRTYPE)


def rewrite_member(data: bytes, name: str, body: bytes | Callable[[bytes], bytes]) -> bytes:
    """The zip ``data`` (an Office file, say) with member ``name``'s bytes replaced by ``body``
    (or by ``body(old bytes)``)."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            old = source.read(info)
            if info.filename == name:
                old = body(old) if callable(body) else body
            target.writestr(info.filename, old)
    return out.getvalue()


#: An XML prolog whose entities expand tenfold nine times over (a billion "lol"s).
BILLION_LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'
        for i in range(1, 10)
    )
    + "]>\n"
)
