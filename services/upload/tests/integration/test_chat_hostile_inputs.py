"""Hostile uploads through the HTTP API, generated at test time, on both file stores.

Every refusal answers 400 with the refusing rule in ``details.rule`` and a message that
names the problem, and leaves nothing behind: no row, no stored file, no event. The
inputs that are accepted (a sheet declaring a huge range, pathological PDFs, hostile
file names) are accepted within bounded time and stored under a safe path.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import stat
import tarfile
import time
import uuid
import zipfile
from collections.abc import Callable
from functools import cache

import chat_inputs as gen
import pytest
from chat_support import ChatApi, LocalApi, auth, raw_multipart

pytestmark = pytest.mark.integration

MiB = 1024 * 1024


@cache
def _too_large_total() -> bytes:
    """Five 41 MiB members (each under the 50 MiB member cap) plus incompressible padding
    that keeps the ratio under 100: 205 MiB unpacked, over the 200 MiB total."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("pad.bin", os.urandom(2_300_000), compress_type=zipfile.ZIP_STORED)
        for i in range(5):
            zf.writestr(f"z{i}.bin", b"\x00" * (41 * MiB), compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


@cache
def _member_too_large() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("pad.bin", os.urandom(700_000), compress_type=zipfile.ZIP_STORED)
        zf.writestr("big.bin", b"\x00" * (51 * MiB), compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


@cache
def _too_many_entries() -> bytes:
    return bytes(gen.make_zip([(f"f{i}.txt", b"") for i in range(5001)]))


@cache
def _bomb_zip() -> bytes:
    return bytes(gen.deflate_bomb_zip(64))


@cache
def _bomb_tgz() -> bytes:
    return bytes(gen.deflate_bomb_tgz(64))


@cache
def _docx_bomb() -> bytes:
    data = gen.make_docx(["cover"])
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            target.writestr(info, source.read(info))
        target.writestr("word/media/zeros.bin", b"\x00" * (40 * MiB), zipfile.ZIP_DEFLATED)
    return out.getvalue()


_ZIP = "application/zip"
_TGZ = "application/gzip"
_DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

# id, file name, bytes, declared type, rule, a fragment of the message
REFUSED: list[tuple[str, str, Callable[[], bytes], str, str, str]] = [
    # archive paths
    (
        "zip-dotdot",
        "a.zip",
        lambda: gen.make_zip([("../evil.txt", b"x")]),
        _ZIP,
        "archive_path_escape",
        "outside the archive",
    ),
    (  # ``..`` once trimmed: was accepted (201) and its members silently not unpacked
        "zip-dotdot-trimmed",
        "a.zip",
        lambda: gen.make_zip([("ok.txt", b"x"), (" ../evil.txt", b"x")]),
        _ZIP,
        "archive_path_escape",
        "outside the archive",
    ),
    (
        "tar-dotdot-ideographic-space",
        "a.tar.gz",
        lambda: gen.make_tgz([gen.tar_file("a/\u3000../x", b"x")]),
        _TGZ,
        "archive_path_escape",
        "outside the archive",
    ),
    (
        "zip-absolute",
        "a.zip",
        lambda: gen.make_zip([("/etc/cron.d/x", b"x")]),
        _ZIP,
        "archive_path_escape",
        "absolute path",
    ),
    (
        "zip-drive",
        "a.zip",
        lambda: gen.make_zip([("C:/Windows/x", b"x")]),
        _ZIP,
        "archive_path_escape",
        "drive letter",
    ),
    (
        "zip-backslash",
        "a.zip",
        lambda: gen.make_zip([("a\\..\\..\\x", b"x")]),
        _ZIP,
        "archive_path_escape",
        "backslash",
    ),
    (
        "zip-control",
        "a.zip",
        lambda: gen.make_zip([("a\x01b.txt", b"x")]),
        _ZIP,
        "archive_path_escape",
        "control character",
    ),
    (
        "tar-dotdot",
        "a.tar.gz",
        lambda: gen.make_tgz([gen.tar_file("../../x", b"x")]),
        _TGZ,
        "archive_path_escape",
        "outside the archive",
    ),
    (
        "tar-absolute",
        "a.tgz",
        lambda: gen.make_tgz([gen.tar_file("/etc/passwd", b"x")]),
        _TGZ,
        "archive_path_escape",
        "absolute path",
    ),
    # links and special files
    (
        "zip-symlink",
        "a.zip",
        lambda: gen.make_zip([(gen.zip_info("l", stat.S_IFLNK | 0o777), b"/etc/passwd")]),
        _ZIP,
        "archive_link",
        "symbolic link",
    ),
    (
        "zip-fifo",
        "a.zip",
        lambda: gen.make_zip([(gen.zip_info("p", stat.S_IFIFO | 0o644), b"")]),
        _ZIP,
        "archive_special_file",
        "FIFO",
    ),
    (
        "zip-device",
        "a.zip",
        lambda: gen.make_zip([(gen.zip_info("d", stat.S_IFCHR | 0o644), b"")]),
        _ZIP,
        "archive_special_file",
        "device",
    ),
    (
        "tar-symlink-escape",
        "a.tar.gz",
        lambda: gen.make_tgz([gen.tar_special("etc", tarfile.SYMTYPE, "/etc")]),
        _TGZ,
        "archive_link",
        "symbolic link",
    ),
    (
        "tar-symlink-then-write-through",
        "a.tar.gz",
        lambda: gen.make_tgz(
            [gen.tar_special("d", tarfile.SYMTYPE, "/tmp"), gen.tar_file("d/x", b"x")]
        ),
        _TGZ,
        "archive_link",
        "symbolic link",
    ),
    (
        "tar-hardlink-escape",
        "a.tar.gz",
        lambda: gen.make_tgz([gen.tar_special("h", tarfile.LNKTYPE, "../../etc/shadow")]),
        _TGZ,
        "archive_link",
        "hard link",
    ),
    (
        "tar-device",
        "a.tar.gz",
        lambda: gen.make_tgz([gen.tar_special("null", tarfile.CHRTYPE)]),
        _TGZ,
        "archive_special_file",
        "device",
    ),
    (
        "tar-fifo",
        "a.tar.gz",
        lambda: gen.make_tgz([gen.tar_special("fifo", tarfile.FIFOTYPE)]),
        _TGZ,
        "archive_special_file",
        "FIFO",
    ),
    # duplicates
    (
        "zip-duplicate",
        "a.zip",
        lambda: gen.make_zip([("x.txt", b"1"), ("x.txt", b"2")]),
        _ZIP,
        "archive_duplicate",
        "appears twice",
    ),
    (
        "zip-file-and-folder",
        "a.zip",
        lambda: gen.make_zip([("a", b"1"), ("a/b", b"2")]),
        _ZIP,
        "archive_duplicate",
        "both a file and a folder",
    ),
    (
        "tar-duplicate",
        "a.tgz",
        lambda: gen.make_tgz([gen.tar_file("x", b"1"), gen.tar_file("x", b"2")]),
        _TGZ,
        "archive_duplicate",
        "appears twice",
    ),
    # encrypted, or not the archive the name says
    ("zip-encrypted", "a.zip", gen.encrypted_zip, _ZIP, "archive_encrypted", "encrypted"),
    (
        "zip-not-a-zip",
        "a.zip",
        lambda: b"just some text",
        _ZIP,
        "archive_not_archive",
        "not a valid zip",
    ),
    (
        "tgz-is-a-zip",
        "a.tar.gz",
        lambda: gen.make_zip([("x", b"x")]),
        _TGZ,
        "archive_not_archive",
        "not a valid gzip",
    ),
    (
        "tgz-gzip-of-garbage",
        "a.tar.gz",
        lambda: __import__("gzip").compress(b"not a tar" * 100),
        _TGZ,
        "archive_not_archive",
        "tar",
    ),
    # sizes
    (
        "zip-too-many-entries",
        "a.zip",
        _too_many_entries,
        _ZIP,
        "archive_too_many_entries",
        "more than 5000",
    ),
    (
        "zip-too-large",
        "a.zip",
        _too_large_total,
        _ZIP,
        "archive_too_large",
        "more than 209715200 bytes",
    ),
    (
        "zip-member-too-large",
        "a.zip",
        _member_too_large,
        _ZIP,
        "archive_member_too_large",
        "big.bin",
    ),
    ("zip-deflate-ratio-bomb", "a.zip", _bomb_zip, _ZIP, "archive_ratio", "decompression bomb"),
    ("tgz-deflate-ratio-bomb", "a.tar.gz", _bomb_tgz, _TGZ, "archive_ratio", "decompression bomb"),
    (
        "zip-overlapping-members",
        "a.zip",
        lambda: gen.overlapping_zip(200),
        _ZIP,
        "archive_overlap",
        "overlap",
    ),
    ("zip-quoted-overlap", "a.zip", gen.quoted_overlap_zip, _ZIP, "archive_overlap", "overlap"),
    # office containers
    (
        "docx-external-entity",
        "a.docx",
        lambda: gen.docx_with_prolog(gen.EXTERNAL_ENTITY),
        _DOCX,
        "unsafe_document",
        "DTD or XML entities",
    ),
    (
        "docx-billion-laughs",
        "a.docx",
        lambda: gen.docx_with_prolog(gen.BILLION_LAUGHS),
        _DOCX,
        "unsafe_document",
        "DTD or XML entities",
    ),
    (
        "xlsx-external-entity",
        "a.xlsx",
        lambda: gen.xlsx_with_prolog(gen.EXTERNAL_ENTITY),
        _XLSX,
        "unsafe_document",
        "DTD or XML entities",
    ),
    ("docx-zip-bomb", "a.docx", _docx_bomb, _DOCX, "archive_ratio", "Word document"),
    # pages above the pixel limit, refused from their headers before anything is decoded
    (
        "tiff-30000-square",
        "fax.tiff",
        lambda: gen.tiff_declaring([(30000, 30000)]),
        "image/tiff",
        "image_too_large",
        "TIFF page 1 is above the 67108864 pixel limit",
    ),
    (
        "tiff-second-page-too-large",
        "fax.tif",
        lambda: gen.tiff_declaring([(10, 10), (9000, 9000)]),
        "image/tiff",
        "image_too_large",
        "TIFF page 2 is 9000x9000 pixels",
    ),
    (
        "png-30000-square",
        "photo.png",
        lambda: gen.image_declaring("PNG", 30000, 30000),
        "image/png",
        "image_too_large",
        "The image is above the 67108864 pixel limit",
    ),
    (
        "gif-9000-square",
        "anim.gif",
        lambda: gen.image_declaring("GIF", 9000, 9000),
        "image/gif",
        "image_too_large",
        "The image is 9000x9000 pixels",
    ),
    (
        "jpeg-30000-square",
        "photo.jpg",
        lambda: gen.image_declaring("JPEG", 30000, 30000),
        "image/jpeg",
        "image_too_large",
        "The image is above",
    ),
    (
        "webp-30000-square",
        "photo.webp",
        lambda: gen.image_declaring("WEBP", 30000, 30000),
        "image/webp",
        "image_too_large",
        "The image is above",
    ),
    # spoofed types
    (
        "png-named-pdf",
        "photo.pdf",
        lambda: gen.make_image("PNG"),
        "application/pdf",
        "content_mismatch",
        "not a valid PDF",
    ),
    (
        "text-named-png",
        "photo.png",
        lambda: b"hello",
        "image/png",
        "content_mismatch",
        "not a valid PNG",
    ),
    (
        "binary-named-txt",
        "notes.txt",
        lambda: b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)),
        "text/plain",
        "content_mismatch",
        "binary data",
    ),
    (
        "declared-pdf-for-txt",
        "notes.txt",
        lambda: b"hello",
        "application/pdf",
        "content_mismatch",
        "does not match",
    ),
    (
        "zip-named-docx",
        "letter.docx",
        lambda: gen.make_zip([("a.txt", b"x")]),
        _DOCX,
        "content_mismatch",
        "not a valid Word",
    ),
    (
        "docx-named-pdf",
        "report.pdf",
        lambda: gen.make_docx(["x"]),
        "application/pdf",
        "content_mismatch",
        "not a valid PDF",
    ),
    (
        "exe",
        "setup.exe",
        lambda: b"MZ\x90\x00",
        "application/octet-stream",
        "unsupported_type",
        ".exe",
    ),
    (
        "declared-exe",
        "setup",
        lambda: b"MZ\x90\x00",
        "application/x-msdownload",
        "unsupported_type",
        "application/x-msdownload",
    ),
    (
        "rtl-override-exe",
        "invoice\u202efdp.exe",
        lambda: b"MZ\x90\x00",
        "application/pdf",
        "unsupported_type",
        ".exe",
    ),
    (
        "no-extension-no-type",
        "README",
        lambda: b"hello",
        "application/octet-stream",
        "unsupported_type",
        "no extension",
    ),
]


@pytest.mark.parametrize(
    ("filename", "make", "declared", "rule", "fragment"),
    [pytest.param(*case[1:], id=case[0]) for case in REFUSED],
)
async def test_refused_with_400_and_nothing_left_behind(
    api: ChatApi,
    user: str,
    filename: str,
    make: Callable[[], bytes],
    declared: str,
    rule: str,
    fragment: str,
) -> None:
    data = make()
    events = await api.events()
    started = time.monotonic()
    response = await api.upload(user, filename, data, declared)
    elapsed = time.monotonic() - started
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_INPUT"
    assert error["details"]["rule"] == rule
    assert fragment in error["message"]
    assert await api.rows(user) == 0
    assert api.stored(user) == []
    assert await api.events() == events
    assert elapsed < 60


async def test_ten_ole_files_whose_difat_names_itself_are_refused_and_health_answers(
    api: ChatApi, user: str
) -> None:
    """Detection reads OLE headers in the API process: ten at once get a refusal in bounded
    time, and /healthz answers while they are in flight (olefile alone never returned)."""
    data = gen.hostile_ole()
    names = [f"mail{i}.msg" for i in range(4)] + [f"letter{i}.doc" for i in range(3)]
    names += [f"book{i}.xls" for i in range(3)]
    uploads = [asyncio.ensure_future(api.upload(user, name, data)) for name in names]
    health = await asyncio.wait_for(api.client.get("/healthz"), 5)
    assert health.status_code == 200
    responses = await asyncio.wait_for(asyncio.gather(*uploads), 30)
    for name, response in zip(names, responses, strict=True):
        assert response.status_code == 400, (name, response.text)
        error = response.json()["error"]
        assert error["details"]["rule"] == "content_mismatch"
        assert "The file content is not a valid" in error["message"]
    assert (await api.client.get("/healthz")).status_code == 200
    assert await api.rows(user) == 0
    assert api.stored(user) == []


async def test_a_sheet_declaring_a_huge_dimension_costs_nothing(api: ChatApi, user: str) -> None:
    started = time.monotonic()
    response = await api.upload(user, "huge.xlsx", gen.xlsx_huge_dimension(), _XLSX)
    assert response.status_code == 201, response.text
    assert time.monotonic() - started < 10
    assert "month\ttotal" in response.json()["preview"]


@pytest.mark.parametrize(
    ("make", "check"),
    [
        pytest.param(gen.pdf_cyclic_page_tree, None, id="cyclic-page-tree"),
        pytest.param(lambda: gen.pdf_flate_bomb(200), None, id="flate-bomb-content"),
        pytest.param(lambda: gen.pdf_many_pages(2100), "page limit of 2000", id="many-pages"),
    ],
)
async def test_pathological_pdfs_are_bounded(
    api: ChatApi, user: str, make: Callable[[], bytes], check: str | None
) -> None:
    started = time.monotonic()
    response = await api.upload(user, "bad.pdf", make(), "application/pdf")
    assert time.monotonic() - started < 60
    assert response.status_code == 201, response.text
    (row,) = await api.fetch(
        "SELECT parsed_content FROM chat_files WHERE id=$1", uuid.UUID(response.json()["id"])
    )
    if check:
        assert check in row["parsed_content"]
    assert row["parsed_content"] is None or len(row["parsed_content"]) <= 500_200


async def test_a_parse_past_its_deadline_is_killed(local_api: LocalApi, user: str) -> None:
    slow = gen.pdf_many_pages(1500)
    async with local_api(chat_parse_timeout_s=0.0005) as strict:
        started = time.monotonic()
        pdf = await strict.upload(user, "slow.pdf", slow, "application/pdf")
        assert time.monotonic() - started < 10
        assert pdf.status_code == 201 and pdf.json()["preview"] is None
        # a check that takes its while (4,900 members, under the entry limit): a one-member
        # zip can be checked inside the deadline's 1.5 ms on a fast idle core
        members = [(f"f{i}.txt", b"a") for i in range(4900)]
        archive = await strict.upload(user, "ok.zip", gen.make_zip(members), _ZIP)
        assert archive.status_code == 400
        assert archive.json()["error"]["details"]["rule"] == "archive_refused"
        assert "could not be checked" in archive.json()["error"]["message"]
        assert await strict.rows(user) == 1


# --- hostile file names ----------------------------------------------------------------------

NAMES = [
    pytest.param(b"nul\x00byte.txt", "nulbyte.txt", id="nul"),
    pytest.param(b"../../etc/passwd.txt", "../../etc/passwd.txt", id="dotdot"),
    pytest.param(b"..", "..", id="only-dotdot"),
    pytest.param("report\u202etxt.md".encode(), "reporttxt.md", id="rtl-override"),
    pytest.param(b"CON.txt", "CON.txt", id="windows-con"),
    pytest.param(b"nul.txt", "nul.txt", id="windows-nul"),
    pytest.param(b"LPT1", "LPT1", id="windows-lpt1"),
    pytest.param(b"a" * 300 + b".txt", "a" * 251 + ".txt", id="300-bytes"),
    pytest.param("é".encode() * 150 + b".txt", "é" * 150 + ".txt", id="300-bytes-utf8"),
]


@pytest.mark.parametrize(("raw", "shown"), NAMES)
async def test_hostile_file_names_are_labels_never_paths(
    api: ChatApi, user: str, raw: bytes, shown: str
) -> None:
    body, content_type = raw_multipart(raw, b"plain text", "text/plain")
    response = await api.client.post(
        "/api/v1/files/upload", content=body, headers={**auth(user), "content-type": content_type}
    )
    assert response.status_code == 201, response.text
    assert response.json()["filename"] == shown
    (row,) = await api.fetch(
        "SELECT filename, storage_path FROM chat_files WHERE id=$1",
        uuid.UUID(response.json()["id"]),
    )
    assert row["filename"] == shown
    path = row["storage_path"]
    owner, _, leaf = path.partition("/")
    assert owner == user and "/" not in leaf and "\\" not in leaf
    assert re.fullmatch(r"[0-9a-f]{32}_[\w.\- ]+", leaf), leaf
    assert not any(part in {"", ".", ".."} for part in path.split("/"))
    assert len(leaf.encode()) <= 33 + 150
    assert api.stored(user) == [path]
    assert not re.match(r"(?i)^[0-9a-f]{32}_(con|prn|aux|nul|com\d|lpt\d)(\.|$)", leaf)


async def test_a_nul_in_the_unit_is_a_400_naming_it(api: ChatApi, user: str) -> None:
    response = await api.upload(user, "a.txt", b"plain text", "text/plain", unit="Sales\x00EU")
    assert response.status_code == 400, response.text
    assert response.json()["error"]["details"]["fields"] == [
        {"field": "organizational_unit", "message": "contains a NUL character"}
    ]
    assert await api.rows(user) == 0
    assert api.stored(user) == []
