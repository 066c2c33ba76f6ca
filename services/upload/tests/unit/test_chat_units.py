"""The chat-attachment pieces on their own: names, routing, multipart, agents, isolation."""

from __future__ import annotations

import asyncio
import errno
import uuid
from collections.abc import AsyncIterator
from typing import Any

import chat_inputs as gen
import pytest
from botocore.exceptions import ClientError
from docproc_common.blocking import BlockingPool
from docproc_common.errors import InvalidInput, PayloadTooLarge, Unavailable
from docproc_common.parsing import ArchiveRatio, ParseLimits, detect
from docproc_common.storage import clean_filename
from docproc_upload.chat.attachments import (
    WORKSPACE_UNAVAILABLE,
    Agent,
    AttachmentFile,
    BinaryPart,
    Mode,
    RenderLimits,
    StorageWorkspace,
    TextPart,
    WorkspaceFull,
    WorkspaceRefused,
    archive_folder,
    first_lines,
    human_size,
    member_path,
    render_attachments,
    upload_path,
    workspace_name,
)
from docproc_upload.chat.isolation import IsolatedParser
from docproc_upload.chat.schemas import AgentIn
from docproc_upload.chat.service import (
    Download,
    clean_unit,
    owner_segment,
    storable,
)
from docproc_upload.multipart import read_upload_form
from pydantic import ValidationError

CHAT_FIELDS = frozenset({"organizational_unit"})
FILE_ID = uuid.UUID("3f2a1b9c-0000-4000-8000-000000000000")


# --- names -------------------------------------------------------------------------------


class TestNames:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            ("raport.csv", "raport.csv"),
            ("../../etc/passwd", "etc_passwd"),
            ("a\x00b.txt", "ab.txt"),
            ("report\u202etxt.pdf", "reporttxt.pdf"),
            ("CON.txt", "_CON.txt"),
            ("..", "file"),
        ],
    )
    def test_workspace_name(self, raw: str, expected: str) -> None:
        assert workspace_name(raw) == expected

    def test_a_long_name_keeps_its_extension(self) -> None:
        name = workspace_name("a" * 300 + ".xlsx")
        assert name.endswith(".xlsx") and len(name.encode()) <= 150

    def test_upload_paths_derive_from_the_id(self) -> None:
        assert upload_path(FILE_ID, "raport.csv") == "uploads/3f2a1b9c-raport.csv"
        other = uuid.UUID("00000000-0000-4000-8000-000000000000")
        assert upload_path(other, "raport.csv") != upload_path(FILE_ID, "raport.csv")

    @pytest.mark.parametrize(
        ("name", "folder"),
        [("repo.zip", "repo"), ("repo.tar.gz", "repo"), ("x.tgz", "x"), (".zip", "zip")],
    )
    def test_archive_folder(self, name: str, folder: str) -> None:
        assert archive_folder(FILE_ID, name) == f"uploads/3f2a1b9c-{folder}"

    def test_member_paths_keep_folders_and_defuse_the_rest(self) -> None:
        assert member_path("repo/src/app.py") == "repo/src/app.py"
        assert member_path("node_modules/@types/x.d.ts") == "node_modules/@types/x.d.ts"
        assert member_path("a/\u202eb/c") == "a/_b/c"
        assert len(member_path("d/" + "x" * 400).split("/")[1].encode()) <= 200
        # the archive check refuses a component that trims to ``..``; a cut that leaves one
        # (``..`` then spaces past the byte cap) is a name, never a step up
        assert member_path("d/.." + " " * 400 + "x") == "d/_"
        assert member_path(" a /\u00a0b.txt") == "a/b.txt"

    def test_sizes_and_lines(self) -> None:
        assert human_size(10) == "10 bytes"
        assert human_size(2_516_582) == "2.4 MB"
        text = "\n".join(f"line {i}" for i in range(30))
        assert first_lines(text) == [f"line {i}" for i in range(20)]
        assert first_lines("x" * 1000)[0].endswith("…")
        assert first_lines(None) == []

    def test_display_names(self) -> None:
        assert clean_filename("nul\x00.txt") == "nul.txt"
        assert clean_filename(None) == "file"
        long = clean_filename("b" * 400 + ".pdf")
        assert long.endswith(".pdf") and len(long) == 255
        assert clean_unit("  Sales   EU ") == "Sales EU"
        assert clean_unit("   ") is None
        with pytest.raises(InvalidInput):
            clean_unit("x" * 201)

    def test_owner_segments_are_never_paths(self) -> None:
        assert owner_segment("alice") == "alice"
        for hostile in ("..", "a/b", "../x", "", "a\x00"):
            segment = owner_segment(hostile)
            assert segment.startswith("u-") and "/" not in segment

    def test_storable_text(self) -> None:
        assert storable("a\x00b\ud800") == "ab?"
        assert storable(None) is None

    def test_only_web_images_are_inline(self) -> None:
        assert Download("a.png", "image/png", b"").inline
        assert not Download("a.tiff", "image/tiff", b"").inline


# --- routing, with an in-memory workspace ------------------------------------------------------


class MemoryWorkspace:
    def __init__(
        self, quota: int = 10**9, fail_after: int | None = None, refuse: bool = False
    ) -> None:
        self.files: dict[str, bytes] = {}
        self.quota = quota
        self.fail_after = fail_after
        self.refuse = refuse
        self.writes = 0

    def room(self) -> int:
        return self.quota - sum(len(v) for v in self.files.values())

    async def exists(self, path: str) -> bool:
        return path in self.files

    async def write(self, path: str, data: bytes, content_type: str | None = None) -> None:
        self.writes += 1
        if self.refuse or (self.fail_after is not None and self.writes > self.fail_after):
            raise WorkspaceRefused("read-only file system")
        if len(data) > self.room():
            raise WorkspaceFull("no room")
        self.files[path] = data

    async def remove_tree(self, path: str) -> None:
        for key in [k for k in self.files if k.startswith(path + "/")]:
            del self.files[key]


def attachment(
    name: str, data: bytes, mime: str, file_type: str, text: str | None
) -> tuple[AttachmentFile, bytes]:
    f = AttachmentFile(uuid.uuid4(), name, mime, len(data), file_type, text, f"u/{name}")
    return f, data


@pytest.fixture
async def pool() -> AsyncIterator[BlockingPool]:
    p = BlockingPool(2)
    yield p
    p.shutdown()


async def run(
    items: list[tuple[AttachmentFile, bytes]],
    pool: BlockingPool,
    workspace: MemoryWorkspace | None,
    reads: frozenset[str] = frozenset(),
    missing: frozenset[uuid.UUID] = frozenset(),
) -> Any:
    store = {f.id: d for f, d in items}

    async def load(f: AttachmentFile) -> bytes:
        if f.id in missing:
            raise FileNotFoundError(f.storage_path)
        return store[f.id]

    return await render_attachments(
        [f for f, _ in items],
        Agent(has_workspace=workspace is not None, runtime_reads=reads),
        RenderLimits(),
        load=load,
        pool=pool,
        workspace=workspace,
    )


class TestRouting:
    async def test_refused_writes_are_said_once_and_fall_back_inline(
        self, pool: BlockingPool
    ) -> None:
        items = [
            attachment("a.txt", b"alpha", "text/plain", "text", "alpha"),
            attachment("b.pdf", b"%PDF-", "application/pdf", "pdf", "beta"),
        ]
        out = await run(items, pool, MemoryWorkspace(refuse=True))
        assert out.notices == [WORKSPACE_UNAVAILABLE]
        assert isinstance(out.parts[0], TextPart) and out.parts[0].text == WORKSPACE_UNAVAILABLE
        assert [f.mode for f in out.files] == [Mode.INLINE_FALLBACK, Mode.INLINE_FALLBACK]
        assert sum(isinstance(p, TextPart) and "not available" in p.text for p in out.parts) == 1

    async def test_an_archive_failing_mid_way_is_removed(self, pool: BlockingPool) -> None:
        data = gen.make_zip([(f"r/f{i}", b"x") for i in range(5)])
        archive = attachment("r.zip", data, "application/zip", "archive", "r/f0\nr/f1")
        workspace = MemoryWorkspace(fail_after=2)
        out = await run([archive], pool, workspace)
        assert workspace.files == {}
        assert out.files[0].mode is Mode.NOT_WRITTEN
        assert out.notices == [WORKSPACE_UNAVAILABLE]

    async def test_an_unloadable_file_is_skipped(self, pool: BlockingPool) -> None:
        image = attachment("p.png", gen.make_image("PNG"), "image/png", "image", None)
        text = attachment("t.txt", b"t", "text/plain", "text", "t")
        out = await run([image, text], pool, MemoryWorkspace(), missing=frozenset({image[0].id}))
        assert [f.mode for f in out.files] == [Mode.SKIPPED, Mode.WORKSPACE]
        assert not any(isinstance(p, BinaryPart) for p in out.parts)

    async def test_documents_the_runtime_reads_get_no_sibling(self, pool: BlockingPool) -> None:
        doc = attachment("d.docx", b"PK", "application/x", "docx", "words")
        workspace = MemoryWorkspace()
        await run([doc], pool, workspace, reads=frozenset({"docx"}))
        assert list(workspace.files) == [upload_path(doc[0].id, "d.docx")]

    @pytest.mark.parametrize("workspace", [None, MemoryWorkspace()], ids=["inline", "workspace"])
    async def test_a_tiff_page_above_the_limit_is_a_named_refusal_not_a_failed_turn(
        self, pool: BlockingPool, workspace: MemoryWorkspace | None
    ) -> None:
        """A TIFF stored before the upload check: its render says why, the turn goes on."""
        tiff = attachment(
            "fax.tiff", gen.tiff_declaring([(30000, 30000)]), "image/tiff", "tiff", None
        )
        text = attachment("t.txt", b"t", "text/plain", "text", "t")
        out = await run([tiff, text], pool, workspace)
        assert not any(isinstance(p, BinaryPart) for p in out.parts)
        (shown,) = [p.text for p in out.parts if isinstance(p, TextPart) and "fax.tiff" in p.text]
        assert shown.endswith(
            "Its pages could not be shown: TIFF page 1 is above the 67108864 pixel limit"
        )
        assert len(out.files) == 2

    async def test_a_workspace_agent_needs_a_workspace(self, pool: BlockingPool) -> None:
        with pytest.raises(ValueError, match="needs a Workspace"):
            await render_attachments(
                [],
                Agent(has_workspace=True),
                RenderLimits(),
                load=_never,
                pool=pool,
            )


async def _never(f: AttachmentFile) -> bytes:
    raise AssertionError(f"{f.filename} was loaded")


class _FailingStore:
    backend = "test"
    encrypted = False

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def put(self, key: str, data: bytes, content_type: str | None = None) -> None:
        raise self.exc

    def exists(self, key: str) -> bool:
        return False


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), WorkspaceFull),
        (OSError(errno.EDQUOT, "Disk quota exceeded"), WorkspaceFull),
        (PermissionError(errno.EACCES, "Permission denied"), WorkspaceRefused),
        (ClientError({"Error": {"Code": "AccessDenied"}}, "PutObject"), WorkspaceRefused),
        (ClientError({"Error": {"Code": "EntityTooLarge"}}, "PutObject"), WorkspaceFull),
        (RuntimeError("boom"), WorkspaceRefused),
    ],
)
async def test_storage_workspace_classifies_write_failures(
    pool: BlockingPool, exc: Exception, expected: type[Exception]
) -> None:
    from docproc_common.storage import AsyncStorage

    workspace = StorageWorkspace(AsyncStorage(_FailingStore(exc), pool), "w/u/a/c", 1000)  # type: ignore[arg-type]
    with pytest.raises(expected):
        await workspace.write("uploads/x", b"x")
    with pytest.raises(WorkspaceFull):
        await workspace.write("uploads/y", b"y" * 1001)


# --- multipart ----------------------------------------------------------------------------


async def _stream(*chunks: bytes) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


def _body(*parts: tuple[str, str | None, bytes]) -> bytes:
    out = b""
    for name, filename, data in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        out += f"--B\r\nContent-Disposition: {disposition}\r\nContent-Type: text/plain\r\n\r\n".encode()
        out += data + b"\r\n"
    return out + b"--B--\r\n"


CT = "multipart/form-data; boundary=B"


class TestMultipart:
    async def test_reads_the_file_and_the_unit_in_small_chunks(self) -> None:
        body = _body(
            ("organizational_unit", None, b"Sales"),
            ("file", "a.txt", b"hello"),
            ("extra", None, b"x"),
        )
        form = await read_upload_form(
            CT,
            _stream(*[body[i : i + 7] for i in range(0, len(body), 7)]),
            100,
            too_large="too large",
            text_fields=CHAT_FIELDS,
        )
        assert (form.filename, form.content_type, form.data) == ("a.txt", "text/plain", b"hello")
        assert form.organizational_unit == "Sales"

    async def test_the_file_limit_stops_reading(self) -> None:
        with pytest.raises(PayloadTooLarge):
            await read_upload_form(
                CT,
                _stream(_body(("file", "a.txt", b"x" * 101))),
                100,
                too_large="too large",
                text_fields=CHAT_FIELDS,
            )

    @pytest.mark.parametrize(
        ("content_type", "body"),
        [
            ("application/json", b"{}"),
            (CT, _body(("organizational_unit", None, b"x"))),
            (CT, _body(("file", None, b"no filename"))),
            (CT, _body(("file", "a", b"1"), ("file", "b", b"2"))),
            (CT, _body(("organizational_unit", None, b"u" * 5000), ("file", "a", b"1"))),
            (CT, _body(*[(f"f{i}", None, b"") for i in range(20)])),
        ],
    )
    async def test_bad_forms_are_refused(self, content_type: str, body: bytes) -> None:
        with pytest.raises(InvalidInput):
            await read_upload_form(
                content_type, _stream(body), 100, too_large="too large", text_fields=CHAT_FIELDS
            )


# --- agents and isolation --------------------------------------------------------------------


class TestAgent:
    def test_a_workspace_needs_agent_and_conversation(self) -> None:
        with pytest.raises(ValidationError):
            AgentIn(has_workspace=True, agent_id="a")
        assert AgentIn(has_workspace=True, agent_id="a", conversation_id="c").has_workspace

    @pytest.mark.parametrize("bad", ["..", "../x", "a/b", "a b", "-x" + "y" * 200])
    def test_ids_are_single_safe_segments(self, bad: str) -> None:
        with pytest.raises(ValidationError):
            AgentIn(has_workspace=False, agent_id=bad)


class TestIsolation:
    async def test_refusals_cross_the_process_boundary(self) -> None:
        parser = IsolatedParser(1, 0, 30, 2048)
        try:
            data = gen.deflate_bomb_zip(16)
            with pytest.raises(ArchiveRatio):
                await parser.parse(data, detect(data, "a.zip", None), ParseLimits())
            pdf = gen.make_pdf(["isolated"])
            parsed = await parser.parse(pdf, detect(pdf, "a.pdf", None), ParseLimits())
            assert parsed.text == "isolated"
        finally:
            parser.close()

    async def test_a_full_queue_answers_busy(self) -> None:
        parser = IsolatedParser(1, 0, 30, 2048)
        pdf = gen.pdf_many_pages(2000)
        detected = detect(pdf, "a.pdf", None)
        try:
            first = asyncio.create_task(parser.parse(pdf, detected, ParseLimits()))
            await asyncio.sleep(0)
            with pytest.raises(Unavailable):
                await parser.parse(pdf, detected, ParseLimits())
            assert (await first).pages == 2000
        finally:
            parser.close()

    async def test_a_parse_over_its_cpu_budget_is_stopped(self) -> None:
        parser = IsolatedParser(1, 0, 1, 2048, wall_factor=60)  # the CPU limit comes first
        pdf = gen.pdf_nested_forms(9)  # minutes of CPU on any machine, in under 2 KB
        try:
            parsed = await parser.parse(pdf, detect(pdf, "a.pdf", None), ParseLimits())
        finally:
            parser.close()
        assert parsed.text is None
        assert parsed.note == "The file could not be read: it used more than 1 s of CPU"
