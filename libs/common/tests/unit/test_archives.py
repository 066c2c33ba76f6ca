"""Archive and office-container checks, on hostile archives generated at test time."""

from __future__ import annotations

import gzip
import io
import stat
import struct
import tarfile
import zipfile
import zlib
from pathlib import Path

import docx
import openpyxl
import pytest
from docproc_common.parsing import (
    ArchiveDuplicate,
    ArchiveEncrypted,
    ArchiveLimits,
    ArchiveLink,
    ArchiveMember,
    ArchiveMemberTooLarge,
    ArchiveNotArchive,
    ArchiveOverlap,
    ArchivePathEscape,
    ArchiveRatio,
    ArchiveRefused,
    ArchiveSpecialFile,
    ArchiveTooLarge,
    ArchiveTooManyEntries,
    ArchiveUnsupported,
    Detected,
    FileType,
    ParseLimits,
    UnsafeDocument,
    check_archive,
    detect,
    iter_archive_members,
    parse,
)
from docproc_testing.archives import (
    BILLION_LAUGHS,
    make_tgz,
    make_zip,
    rewrite_member,
    tar_dir,
    tar_file,
    tar_special,
    zip_info,
)
from odf.opendocument import OpenDocumentText
from odf.text import P

ZIP = Detected("application/zip", FileType.ARCHIVE, "zip")
TGZ = Detected("application/gzip", FileType.ARCHIVE, "tar.gz")
LIMITS = ArchiveLimits()

# --- builders -------------------------------------------------------------------------------


def patch_zip(data: bytes, name: str, **fields: int) -> bytes:
    """Rewrite header fields of ``name`` in its local header and central directory entry.

    ``flags``/``method`` are written in both; ``file_size`` only in the central directory.
    """
    raw = bytearray(data)
    encoded = name.encode()
    central = raw.find(b"PK\x01\x02" + b"")
    while central != -1:
        name_len = struct.unpack_from("<H", raw, central + 28)[0]
        if bytes(raw[central + 46 : central + 46 + name_len]) == encoded:
            local = struct.unpack_from("<I", raw, central + 42)[0]
            if "flags" in fields:
                struct.pack_into("<H", raw, central + 8, fields["flags"])
                struct.pack_into("<H", raw, local + 6, fields["flags"])
            if "method" in fields:
                struct.pack_into("<H", raw, central + 10, fields["method"])
                struct.pack_into("<H", raw, local + 8, fields["method"])
            if "file_size" in fields:
                struct.pack_into("<I", raw, central + 24, fields["file_size"])
        central = raw.find(b"PK\x01\x02", central + 4)
    return bytes(raw)


def _local_header(name: bytes, method: int, crc: int, csize: int, usize: int) -> bytes:
    return (
        struct.pack(
            "<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, method, 0, 0x21, crc, csize, usize, len(name), 0
        )
        + name
    )


def _central_entry(
    name: bytes, method: int, crc: int, csize: int, usize: int, offset: int
) -> bytes:
    return (
        struct.pack(
            "<4sHHHHHHIIIHHHHHII",
            b"PK\x01\x02",
            20,
            20,
            0,
            method,
            0,
            0x21,
            crc,
            csize,
            usize,
            len(name),
            0,
            0,
            0,
            0,
            0,
            offset,
        )
        + name
    )


def _end_record(count: int, size: int, offset: int) -> bytes:
    return struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, count, count, size, offset, 0)


def overlapping_zip(copies: int) -> bytes:
    """Fifield-style bomb: many central entries share one deflated kernel."""
    kernel = b"\x00" * (1 << 20)
    deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = deflater.compress(kernel) + deflater.flush()
    crc = zlib.crc32(kernel)
    name = b"k0000"
    body = _local_header(name, 8, crc, len(packed), len(kernel)) + packed
    directory = b"".join(
        _central_entry(f"k{i:04d}".encode(), 8, crc, len(packed), len(kernel), 0)
        for i in range(copies)
    )
    return body + directory + _end_record(copies, len(directory), len(body))


def quoted_overlap_zip() -> bytes:
    """A member whose stored data contains the next member's whole local record."""
    inner_data = b"inner"
    inner = _local_header(b"b", 0, zlib.crc32(inner_data), 5, 5) + inner_data
    outer = _local_header(b"a", 0, zlib.crc32(inner), len(inner), len(inner)) + inner
    offset_b = len(_local_header(b"a", 0, 0, 0, 0))
    directory = _central_entry(
        b"a", 0, zlib.crc32(inner), len(inner), len(inner), 0
    ) + _central_entry(b"b", 0, zlib.crc32(inner_data), 5, 5, offset_b)
    return outer + directory + _end_record(2, len(directory), len(outer))


# --- happy paths ----------------------------------------------------------------------------


def test_zip_members_measured_and_listed() -> None:
    data = make_zip([("repo/", b""), ("repo/src/app.py", b"print(1)\n"), ("repo/README", b"hi")])
    detected = detect(data, "repo.zip", "application/zip")
    assert detected == ZIP
    assert check_archive(data, detected, LIMITS) == [
        ArchiveMember("repo", 0, True),
        ArchiveMember("repo/src/app.py", 9, False),
        ArchiveMember("repo/README", 2, False),
    ]
    assert parse(data, detected).text == "repo/\nrepo/src/app.py\nrepo/README"
    unpacked = {m.path: body for m, body in iter_archive_members(data, detected, LIMITS)}
    assert unpacked == {"repo": b"", "repo/src/app.py": b"print(1)\n", "repo/README": b"hi"}


@pytest.mark.parametrize("filename", ["repo.tar.gz", "repo.TGZ"])
def test_tar_gz_members(filename: str) -> None:
    data = make_tgz([tar_dir("repo"), tar_file("repo/a.txt", b"alpha"), tar_file("./b", b"")])
    detected = detect(data, filename, "application/gzip")
    assert detected.file_type is FileType.ARCHIVE
    assert detected.extension == filename.lower().split(".", 1)[1]
    members = check_archive(data, detected, LIMITS)
    assert members == [
        ArchiveMember("repo", 0, True),
        ArchiveMember("repo/a.txt", 5, False),
        ArchiveMember("b", 0, False),
    ]
    assert [body for _, body in iter_archive_members(data, detected, LIMITS)] == [
        b"",
        b"alpha",
        b"",
    ]


def test_tar_of_current_directory(tmp_path: Path) -> None:
    """``tar -czf x.tgz -C dir .`` starts with a ``./`` entry: the root itself, skipped."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("print(1)\n")
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tf:
        tf.add(tmp_path, arcname=".")
    members = check_archive(out.getvalue(), TGZ, LIMITS)
    assert members == [ArchiveMember("src", 0, True), ArchiveMember("src/app.py", 9, False)]


def test_file_with_empty_path_is_refused() -> None:
    with pytest.raises(ArchivePathEscape):
        check_archive(make_tgz([tar_file("./", b"x")]), TGZ, LIMITS)


def test_sizes_are_read_not_taken_from_headers() -> None:
    data = patch_zip(make_zip([("a.txt", b"small")]), "a.txt", file_size=0xFFFFFFF0)
    assert check_archive(data, ZIP, LIMITS) == [ArchiveMember("a.txt", 5, False)]


def test_header_understating_size_is_refused() -> None:
    data = patch_zip(make_zip([("a.bin", b"\x00" * 100_000)]), "a.bin", file_size=10)
    with pytest.raises(ArchiveNotArchive):
        check_archive(data, ZIP, LIMITS)


# --- path rules -----------------------------------------------------------------------------

BAD_PATHS = [
    "../evil.txt",
    "a/../../evil.txt",
    "/etc/x",
    "C:/windows/x",
    "c:evil",
    "a\\b.txt",
    "a\x01b.txt",
    "tab\there",
    "del\x7f",
    # components that are ``..`` once trimmed, as the writer trims them
    " ../evil.txt",
    ".. /evil.txt",
    "a/\u00a0../evil.txt",
    "\u3000../evil.txt",
    "a/\u2003..\u3000/b",
]


@pytest.mark.parametrize("name", BAD_PATHS)
def test_zip_path_escape(name: str) -> None:
    data = make_zip([("ok.txt", b"1"), (zipfile.ZipInfo(name), b"x")])
    with pytest.raises(ArchivePathEscape) as refused:
        check_archive(data, ZIP, LIMITS)
    assert refused.value.rule == "archive_path_escape"
    assert refused.value.status_code == 400


@pytest.mark.parametrize("name", BAD_PATHS)
def test_tar_path_escape(name: str) -> None:
    data = make_tgz([tar_file(name, b"x")])
    with pytest.raises(ArchivePathEscape):
        check_archive(data, TGZ, LIMITS)


def test_members_are_listed_as_written() -> None:
    """The check and the writer share one normalisation: the listed path is the trimmed one,
    and two names that trim alike are one path, refused as a duplicate."""
    data = make_zip([(" docs /\u00a0a.txt ", b"1")])
    assert check_archive(data, ZIP, LIMITS) == [ArchiveMember("docs/a.txt", 1, False)]
    with pytest.raises(ArchiveDuplicate):
        check_archive(make_zip([("a.txt", b"1"), ("a.txt ", b"2")]), ZIP, LIMITS)


def test_refusal_names_the_member() -> None:
    data = make_zip([(zipfile.ZipInfo("../../etc/passwd"), b"x")])
    with pytest.raises(ArchivePathEscape, match=r"'\.\./\.\./etc/passwd'"):
        check_archive(data, ZIP, LIMITS)


# --- links and special files ---------------------------------------------------------------


def test_zip_symlink() -> None:
    data = make_zip([(zip_info("link", stat.S_IFLNK | 0o777), b"../../etc/passwd")])
    with pytest.raises(ArchiveLink):
        check_archive(data, ZIP, LIMITS)


@pytest.mark.parametrize("mode", [stat.S_IFCHR, stat.S_IFBLK, stat.S_IFIFO, stat.S_IFSOCK])
def test_zip_special_files(mode: int) -> None:
    data = make_zip([(zip_info("dev", mode | 0o600), b"")])
    with pytest.raises(ArchiveSpecialFile):
        check_archive(data, ZIP, LIMITS)


@pytest.mark.parametrize(
    ("member", "error"),
    [
        (tar_special("evil", tarfile.SYMTYPE, "../../etc/passwd"), ArchiveLink),
        (tar_special("abs", tarfile.SYMTYPE, "/etc/passwd"), ArchiveLink),
        (tar_special("hard", tarfile.LNKTYPE, "/etc/passwd"), ArchiveLink),
        (tar_special("hard2", tarfile.LNKTYPE, "../outside"), ArchiveLink),
        (tar_special("tty", tarfile.CHRTYPE), ArchiveSpecialFile),
        (tar_special("disk", tarfile.BLKTYPE), ArchiveSpecialFile),
        (tar_special("pipe", tarfile.FIFOTYPE), ArchiveSpecialFile),
    ],
)
def test_tar_links_and_devices(
    member: tuple[tarfile.TarInfo, None], error: type[ArchiveRefused]
) -> None:
    data = make_tgz([tar_file("ok.txt", b"fine"), member])
    with pytest.raises(error):
        check_archive(data, TGZ, LIMITS)


def test_tar_symlink_then_write_through_it() -> None:
    """The classic two-step escape: a link to a folder outside, then a file under it."""
    data = make_tgz([tar_special("out", tarfile.SYMTYPE, "/tmp"), tar_file("out/pwned", b"x")])
    with pytest.raises(ArchiveLink):
        check_archive(data, TGZ, LIMITS)


# --- duplicates ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "names",
    [
        ["a.txt", "a.txt"],
        ["a.txt", "./a.txt"],
        ["d/x", "d//x"],
        ["a", "a/b"],
        ["a/b", "a"],
        ["a/", "a"],
        ["a/", "a/"],
    ],
)
def test_zip_duplicates(names: list[str]) -> None:
    data = make_zip([(name, b"" if name.endswith("/") else b"x") for name in names])
    with pytest.raises(ArchiveDuplicate):
        check_archive(data, ZIP, LIMITS)


def test_tar_duplicates() -> None:
    with pytest.raises(ArchiveDuplicate):
        check_archive(make_tgz([tar_file("a", b"1"), tar_file("a", b"2")]), TGZ, LIMITS)
    with pytest.raises(ArchiveDuplicate):
        check_archive(make_tgz([tar_file("a", b"1"), tar_dir("a")]), TGZ, LIMITS)


def test_implied_folder_listed_later_is_fine() -> None:
    data = make_zip([("a/b.txt", b"x"), ("a/", b"")])
    assert [m.path for m in check_archive(data, ZIP, LIMITS)] == ["a/b.txt", "a"]


# --- encryption, wrong bytes, compression ---------------------------------------------------


def test_zip_encrypted_member() -> None:
    data = patch_zip(make_zip([("secret.txt", b"x" * 100)]), "secret.txt", flags=0x1)
    with pytest.raises(ArchiveEncrypted, match="secret.txt"):
        check_archive(data, ZIP, LIMITS)


def test_zip_unsupported_compression() -> None:
    data = patch_zip(make_zip([("a.txt", b"x" * 100)]), "a.txt", method=9)
    with pytest.raises(ArchiveUnsupported):
        check_archive(data, ZIP, LIMITS)


@pytest.mark.parametrize(
    ("data", "filename"),
    [
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, "photo.zip"),
        (b"just text", "notes.tar.gz"),
        (make_zip([("a", b"b")]), "fake.tgz"),
    ],
)
def test_not_the_archive_the_name_says(data: bytes, filename: str) -> None:
    with pytest.raises(ArchiveNotArchive):
        detect(data, filename, None)


@pytest.mark.parametrize(
    ("data", "detected"),
    [
        (gzip.compress(b"this is not a tar file" * 40), TGZ),
        (make_zip([("a.txt", b"hello" * 1000)])[:-30], ZIP),  # truncated end record
        (b"PK\x03\x04" + b"\x00" * 100, ZIP),
        (gzip.compress(b"")[:5], TGZ),
        (make_tgz([tar_file("a", b"x" * 5000)])[:-40], TGZ),  # truncated member
    ],
    # named, not shown: a gzip header holds the time it was made, and xdist's workers must
    # collect the same test ids
    ids=["gzip-not-tar", "zip-truncated-end", "zip-header-only", "gzip-cut", "tgz-cut-member"],
)
def test_corrupt_archives(data: bytes, detected: Detected) -> None:
    with pytest.raises(ArchiveNotArchive):
        check_archive(data, detected, LIMITS)


def test_check_archive_refuses_non_archive_types() -> None:
    with pytest.raises(ArchiveNotArchive):
        check_archive(b"%PDF-1.4", Detected("application/pdf", FileType.PDF, "pdf"), LIMITS)


# --- entries, bytes, ratio, member size ------------------------------------------------------


def test_too_many_entries_counts_files_and_folders() -> None:
    limits = ArchiveLimits(max_entries=10)
    ok = make_zip([(f"f{i}", b"") for i in range(10)])
    assert len(check_archive(ok, ZIP, limits)) == 10
    with pytest.raises(ArchiveTooManyEntries):
        check_archive(make_zip([(f"f{i}", b"") for i in range(11)]), ZIP, limits)
    nested = make_zip([(f"d{i}/f", b"") for i in range(6)])  # 6 files + 6 implied folders
    with pytest.raises(ArchiveTooManyEntries):
        check_archive(nested, ZIP, limits)
    with pytest.raises(ArchiveTooManyEntries):
        check_archive(make_tgz([tar_file(f"f{i}", b"") for i in range(11)]), TGZ, limits)


def test_too_many_entries_default_limit() -> None:
    data = make_zip([(f"f{i}", b"") for i in range(5001)], level=1)
    with pytest.raises(ArchiveTooManyEntries, match="5000"):
        check_archive(data, ZIP, LIMITS)


def test_total_bytes_limit() -> None:
    limits = ArchiveLimits(max_bytes=10_000, max_ratio=10**6)
    members = [(f"f{i}", bytes(range(256)) * 10) for i in range(5)]  # 12,800 bytes
    with pytest.raises(ArchiveTooLarge):
        check_archive(make_zip(members), ZIP, limits)
    with pytest.raises(ArchiveTooLarge):
        check_archive(make_tgz([tar_file(n, d) for n, d in members]), TGZ, limits)


def test_member_size_limit() -> None:
    limits = ArchiveLimits(max_member_bytes=1000, max_ratio=10**6)
    with pytest.raises(ArchiveMemberTooLarge, match="big.bin"):
        check_archive(make_zip([("big.bin", b"y" * 1001)]), ZIP, limits)
    with pytest.raises(ArchiveMemberTooLarge):
        check_archive(make_tgz([tar_file("big.bin", b"y" * 1001)]), TGZ, limits)


def test_deflate_ratio_bomb_zip() -> None:
    data = make_zip([("zeros.bin", b"\x00" * (40 << 20))], level=9)
    assert len(data) < 100_000
    with pytest.raises(ArchiveRatio):
        check_archive(data, ZIP, LIMITS)


def test_deflate_ratio_bomb_tar() -> None:
    data = make_tgz([tar_file("zeros.bin", b"\x00" * (40 << 20))])
    with pytest.raises(ArchiveRatio):
        check_archive(data, TGZ, LIMITS)


def test_overlapping_members_zip_bomb() -> None:
    data = overlapping_zip(copies=200)
    assert len(data) < 20_000
    with pytest.raises(ArchiveOverlap):
        check_archive(data, ZIP, LIMITS)


def test_quoted_overlap_zip_bomb() -> None:
    with pytest.raises(ArchiveOverlap):
        check_archive(quoted_overlap_zip(), ZIP, LIMITS)


def test_forged_pax_header_cannot_buffer_unbounded() -> None:
    info = tarfile.TarInfo("a.txt")
    info.pax_headers = {"comment": "x" * (8 << 20)}
    data = make_tgz([(info, b"payload")])
    with pytest.raises((ArchiveTooLarge, ArchiveRatio)):
        check_archive(data, TGZ, LIMITS)


def test_nothing_is_yielded_before_the_whole_archive_passed() -> None:
    data = make_zip([("good.txt", b"ok"), (zipfile.ZipInfo("../bad"), b"x")])
    members = iter_archive_members(data, ZIP, LIMITS)
    with pytest.raises(ArchivePathEscape):
        next(members)


# --- office zip containers -------------------------------------------------------------------

XXE = '<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'


def _docx(text: str = "Body") -> bytes:
    document = docx.Document()
    document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _with_prolog(prolog: str, encoding: str = "utf-8") -> object:
    def transform(body: bytes) -> bytes:
        xml = body.decode("utf-8")
        xml = xml.split("?>", 1)[1] if xml.startswith("<?xml") else xml
        return (prolog + xml.replace("Body", "&lol9;" if "lol" in prolog else "&xxe;")).encode(
            encoding
        )

    return transform


@pytest.mark.parametrize("prolog", [BILLION_LAUGHS, XXE])
@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_docx_with_entities_is_refused(prolog: str, encoding: str) -> None:
    data = rewrite_member(_docx(), "word/document.xml", _with_prolog(prolog, encoding))
    with pytest.raises(UnsafeDocument, match="word/document.xml"):
        parse(data, detect(data, "x.docx", None))


def test_xlsx_and_odt_with_entities_are_refused() -> None:
    workbook = openpyxl.Workbook()
    workbook.active.append(["Body"])
    out = io.BytesIO()
    workbook.save(out)
    xlsx = rewrite_member(out.getvalue(), "xl/worksheets/sheet1.xml", _with_prolog(XXE))
    with pytest.raises(UnsafeDocument):
        parse(xlsx, detect(xlsx, "x.xlsx", None))
    text = OpenDocumentText()
    text.text.addElement(P(text="Body"))
    out = io.BytesIO()
    text.save(out)
    odt = rewrite_member(out.getvalue(), "content.xml", _with_prolog(BILLION_LAUGHS))
    with pytest.raises(UnsafeDocument):
        parse(odt, detect(odt, "x.odt", None))


def test_docx_zip_bomb_is_refused_before_python_docx_opens_it() -> None:
    data = _docx()
    bomb = io.BytesIO(data)
    with zipfile.ZipFile(bomb, "a", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("word/media/zeros.bin", b"\x00" * (30 << 20))
    data = bomb.getvalue()
    with pytest.raises(ArchiveRatio):
        parse(data, detect(data, "x.docx", None))


def test_docx_container_limits_come_from_parse_limits() -> None:
    data = _docx("x" * 5000)
    limits = ParseLimits(archive=ArchiveLimits(max_member_bytes=1000, max_ratio=10**6))
    with pytest.raises(ArchiveMemberTooLarge):
        parse(data, detect(data, "x.docx", None), limits)


def test_docx_overlapping_members_refused() -> None:
    data = bytearray(_docx())
    # point the last central-directory entry at the first local header
    last = data.rfind(b"PK\x01\x02")
    struct.pack_into("<I", data, last + 42, 0)
    with pytest.raises(ArchiveRefused):
        parse(bytes(data), detect(bytes(data), "x.docx", None))


def test_xml_libraries_never_expand_entities() -> None:
    """Defence in depth behind the DTD pre-scan: the libraries' own parsers are safe too."""
    from docx.oxml.parser import parse_xml as docx_parse_xml
    from lxml import etree
    from pptx.oxml import parse_xml as pptx_parse_xml

    assert openpyxl.DEFUSEDXML is True
    xml = (
        b'<!DOCTYPE x [<!ENTITY e "EXPANDED"><!ENTITY f SYSTEM "file:///etc/hostname">]>'
        b"<a>&e;&f;</a>"
    )
    for parse_xml in (docx_parse_xml, pptx_parse_xml):
        element = parse_xml(xml)
        assert b"EXPANDED" not in etree.tostring(element)
        assert element.text is None
