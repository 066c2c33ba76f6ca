"""Where a chat attachment goes depends on the agent: into the prompt, or into its workspace.

The chat runner calls :func:`render_attachments` once per turn, after ``prepare`` has
decided whether the agent has a workspace (docs/chat-uploads.md, "Routing"):

- **No workspace:** the parsed text is pasted inline (within the turn's budget), an
  image goes as a binary part, a TIFF as PNG pages (capped), and an archive is
  refused: the model is told it cannot open it, and gets no member list.
- **A workspace:** the original is written under ``uploads/<8 hex of the id>-<name>``
  and the message carries a reference with the first 20 lines of text; the
  extracted text goes beside it (``<name>.txt``) only where the runtime cannot read
  the original; an image goes both ways up to ``inline_image_max_bytes``; a TIFF is
  written and its first pages shown; an archive is unpacked member by member into
  ``uploads/<8 hex>-<name>/`` and the folder is removed if anything fails mid-way.

The path derives from the file's id, so a file is written once however often it is
attached again. A full workspace falls back to the inline path; a workspace that
refuses a write is reported once, as one sentence about the workspace; a file the
store cannot load is left out instead of failing the turn. Each file's ``history``
is what later turns replay in place of the attachment (an image is named, not sent).

Nothing here touches the database: the caller loads the files and stores the
outcomes (the upload service keeps them in ``chat_attachment_renders``).
"""

from __future__ import annotations

import asyncio
import base64
import errno
import io
import logging
import unicodedata
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from botocore.exceptions import BotoCoreError, ClientError
from docproc_common.blocking import BlockingPool
from docproc_common.parsing import (
    ArchiveLimits,
    Detected,
    FileType,
    ParsingRefused,
    check_archive,
    iter_archive_members,
    path_component,
)
from docproc_common.storage import AsyncStorage, StorageFull, safe_filename

log = logging.getLogger(__name__)

UPLOADS = "uploads"
REFERENCE_LINES = 20
REFERENCE_LINE_CHARS = 300
REFERENCE_MAX_CHARS = 6000
MAX_NAME_BYTES = 150
MAX_MEMBER_COMPONENT_BYTES = 200

#: What a runtime that was described to the model as having ``lit`` reads by itself:
#: ``lit parse`` covers PDF, office formats (LibreOffice for the legacy ones) and
#: OpenDocument, but not Outlook ``.msg``, so an email always gets its text sibling.
LIT_READS = frozenset(
    {
        FileType.PDF,
        FileType.DOCX,
        FileType.DOC,
        FileType.SPREADSHEET,
        FileType.DOCUMENT,
        FileType.PRESENTATION,
    }
)
#: Types that are already text: the original is what a shell reads; no sibling needed.
_TEXT_LIKE = frozenset({FileType.TEXT})
#: Documents (not text, images or archives): what ``lit`` reads, and email.
_DOCUMENTS = LIT_READS | {FileType.EMAIL}
_ARCHIVE_EXTENSIONS = {"application/zip": "zip", "application/gzip": "tar.gz"}

WORKSPACE_UNAVAILABLE = (
    "The workspace is not available: the attached files could not be written to it, and "
    "any other attempt to write files or run commands in it will fail the same way."
)


# --- names and paths ---------------------------------------------------------------


def _bounded(name: str, max_bytes: int) -> str:
    """Cut a name to ``max_bytes`` of UTF-8, keeping its extension when it has one."""
    if len(name.encode()) <= max_bytes:
        return name
    stem, dot, ext = name.rpartition(".")
    if dot and stem and 0 < len(ext.encode()) <= 16:
        room = max_bytes - len(ext.encode()) - 1
        cut = stem.encode()[:room].decode(errors="ignore").rstrip(" .")
        return f"{cut}.{ext}" if cut else ext
    return name.encode()[:max_bytes].decode(errors="ignore")


def workspace_name(filename: str) -> str:
    """The untrusted name as a label: ``../../etc/passwd`` -> ``etc_passwd``, extension kept."""
    # cut first (keeping the extension), then sanitize: sanitizing never lengthens a name
    # by more than the "_" that defuses a Windows device name
    return safe_filename(_bounded(filename, MAX_NAME_BYTES - 10))


def upload_path(file_id: uuid.UUID, filename: str) -> str:
    """``uploads/<first 8 hex of the id>-<sanitized name>``: two ``report.csv`` never collide."""
    return f"{UPLOADS}/{file_id.hex[:8]}-{workspace_name(filename)}"


def archive_folder(file_id: uuid.UUID, filename: str) -> str:
    """``uploads/<8 hex>-<name without .zip / .tar.gz / .tgz>``."""
    name = workspace_name(filename)
    for suffix in (".tar.gz", ".tgz", ".zip"):
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
            break
    return f"{UPLOADS}/{file_id.hex[:8]}-{name}"


def member_path(path: str) -> str:
    """An archive member's path below its folder, each component defused but kept readable.

    The archive check already trimmed each component (``path_component``, the one
    normalisation both share) and refused ``..``, absolute paths, drive letters,
    backslashes and control characters; what is left (format characters such as a
    right-to-left override, over-long components) is replaced or cut here. A cut can
    leave whitespace at the end, so the result is trimmed the same way, and a component
    that is then no name (only a cut leaves one) is ``_``.
    """
    parts: list[str] = []
    for part in path.split("/"):
        clean = "".join("_" if unicodedata.category(c)[0] == "C" else c for c in part)
        clean = path_component(_bounded(clean, MAX_MEMBER_COMPONENT_BYTES))
        parts.append("_" if clean in ("", ".", "..") else clean)
    return "/".join(parts)


def shown_name(filename: str) -> str:
    """A file name as the model reads it: one line, no control or format characters."""
    clean = "".join(" " if unicodedata.category(c)[0] == "C" else c for c in filename)
    return " ".join(clean.split())[:255] or "file"


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    value = float(size)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def first_lines(text: str | None, count: int = REFERENCE_LINES) -> list[str]:
    """The first ``count`` lines, each capped, the block bounded: what the reference shows."""
    if not text:
        return []
    lines: list[str] = []
    total = 0
    for line in text.splitlines()[:count]:
        line = line.rstrip()
        if len(line) > REFERENCE_LINE_CHARS:
            line = line[:REFERENCE_LINE_CHARS] + "…"
        total += len(line) + 1
        if total > REFERENCE_MAX_CHARS:
            break
        lines.append(line)
    return lines


# --- inputs and outputs ------------------------------------------------------------


@dataclass(frozen=True)
class AttachmentFile:
    """One stored chat file, as the caller loaded it (a ``ChatFile`` row)."""

    id: uuid.UUID
    filename: str
    mime_type: str
    size: int
    file_type: str
    parsed_content: str | None
    storage_path: str


@dataclass(frozen=True)
class Agent:
    """What the runner knows about the agent this turn.

    ``runtime_reads`` are the file types the workspace's runtime opens by itself, as the
    deployment described the runtime to the model (``LIT_READS`` when it was told it has
    ``lit``); the extracted-text sibling is written for every other document type.
    """

    has_workspace: bool
    runtime_reads: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RenderLimits:
    tiff_max_inline_pages: int = 5
    inline_image_max_bytes: int = 5 * 2**20
    inline_turn_max_chars: int = 1_000_000
    archive: ArchiveLimits = field(default_factory=ArchiveLimits)


@dataclass(frozen=True)
class TextPart:
    text: str


@dataclass(frozen=True)
class BinaryPart:
    """Bytes the model sees (an image, a TIFF page as PNG)."""

    data: bytes
    media_type: str
    file_id: uuid.UUID
    name: str

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")


Part = TextPart | BinaryPart


class Mode(StrEnum):
    INLINE = "inline"  # no workspace: text, image or pages in the prompt
    WORKSPACE = "workspace"  # written (or already there), reference in the prompt
    INLINE_FALLBACK = "inline_fallback"  # the workspace was full or refused the write
    NOT_OPENED = "not_opened"  # an archive for an agent without a workspace
    NOT_WRITTEN = "not_written"  # an archive whose unpacking failed or found no room
    SKIPPED = "skipped"  # the file store could not load the file


@dataclass(frozen=True)
class FileOutcome:
    file_id: uuid.UUID
    mode: Mode
    history: str
    workspace_path: str | None = None
    sibling_path: str | None = None
    workspace_bytes: int = 0


@dataclass
class Rendered:
    parts: list[Part] = field(default_factory=list)
    files: list[FileOutcome] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


# --- the workspace -------------------------------------------------------------------


class WorkspaceFull(Exception):
    """No room for this write: the file falls back to the inline path."""


class WorkspaceRefused(Exception):
    """The workspace refused a write: said once, and no further write is attempted."""


class Workspace(Protocol):
    async def exists(self, path: str) -> bool: ...
    async def write(self, path: str, data: bytes, content_type: str | None = None) -> None: ...
    async def remove_tree(self, path: str) -> None: ...
    def room(self) -> int: ...


_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_FULL_S3_CODES = frozenset({"EntityTooLarge", "QuotaExceeded", "InsufficientStorage"})


class StorageWorkspace:
    """docproc's copy of an agent's workspace: a prefix of the file store
    (``workspaces/{user}/{agent}/{conv}/``). The workspace itself is the agent's; the runner
    copies what is written here into it through the render's links (``workspace_links``).

    ``quota_bytes`` bounds what attachments write into it; ``used_bytes`` is what they
    already wrote. Writes are cancellation-safe (``AsyncStorage.put``).
    """

    def __init__(
        self, storage: AsyncStorage, root: str, quota_bytes: int, used_bytes: int = 0
    ) -> None:
        self.storage = storage
        self.root = root.rstrip("/") + "/"
        self.quota_bytes = quota_bytes
        self.used_bytes = used_bytes

    def room(self) -> int:
        return max(0, self.quota_bytes - self.used_bytes)

    async def exists(self, path: str) -> bool:
        try:
            return await self.storage.exists(self.root + path)
        except Exception as exc:
            raise WorkspaceRefused(str(exc)) from exc

    async def write(self, path: str, data: bytes, content_type: str | None = None) -> None:
        if len(data) > self.room():
            raise WorkspaceFull(f"{len(data)} bytes do not fit in {self.room()}")
        try:
            await self.storage.put(self.root + path, data, content_type)
        except StorageFull as exc:
            raise (WorkspaceFull if exc.no_room else WorkspaceRefused)(str(exc)) from exc
        except OSError as exc:
            if exc.errno in _FULL_ERRNOS:
                raise WorkspaceFull(str(exc)) from exc
            raise WorkspaceRefused(str(exc)) from exc
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in _FULL_S3_CODES:
                raise WorkspaceFull(str(exc)) from exc
            raise WorkspaceRefused(str(exc)) from exc
        except (BotoCoreError, Exception) as exc:
            raise WorkspaceRefused(str(exc)) from exc
        self.used_bytes += len(data)

    async def remove_tree(self, path: str) -> None:
        await self.storage.delete_prefix(self.root + path)


class DryRunWorkspace:
    """Answers as ``inner`` does (what is there, how much room is left) and writes nothing.

    A turn's input guardrail reads the references and their headers before any file is
    written, so a blocked turn leaves nothing under ``uploads/``: rendering over this
    workspace gives exactly the text the real write would, with no object written.
    """

    def __init__(self, inner: Workspace) -> None:
        self.inner = inner
        self.planned_bytes = 0

    def room(self) -> int:
        return max(0, self.inner.room() - self.planned_bytes)

    async def exists(self, path: str) -> bool:
        return await self.inner.exists(path)

    async def write(self, path: str, data: bytes, content_type: str | None = None) -> None:  # noqa: ARG002
        if len(data) > self.room():
            raise WorkspaceFull(f"{len(data)} bytes do not fit in {self.room()}")
        self.planned_bytes += len(data)

    async def remove_tree(self, path: str) -> None:
        """Nothing was written, so nothing is removed."""


def workspace_root(user: str, agent_id: str, conversation_id: str) -> str:
    """The storage prefix of one agent's workspace in one conversation of one person."""
    return f"workspaces/{user}/{agent_id}/{conversation_id}"


# --- rendering -----------------------------------------------------------------------

Loader = Callable[[AttachmentFile], Awaitable[bytes]]


class _TurnBudget:
    def __init__(self, max_chars: int) -> None:
        self.left = max(0, max_chars)

    def take(self, text: str) -> str:
        if len(text) <= self.left:
            self.left -= len(text)
            return text
        kept = text[: self.left]
        self.left = 0
        return (
            kept.rstrip("\n") + "\n[... the rest of this file was omitted: the attachment "
            "budget of this turn is spent]"
        )


def _header(f: AttachmentFile, path: str | None = None, extra: str = "") -> str:
    where = f"{path}, " if path else ""
    return f"Attached file: {shown_name(f.filename)} ({where}{human_size(f.size)}, {f.file_type}{extra})"


def _shown_path(path: str) -> str:
    return "/" + path


def _archive_detected(f: AttachmentFile) -> Detected:
    extension = _ARCHIVE_EXTENSIONS.get(f.mime_type.lower())
    if extension is None:
        extension = "tar.gz" if f.filename.lower().endswith((".tar.gz", ".tgz")) else "zip"
    return Detected(mime_type=f.mime_type, file_type=FileType.ARCHIVE, extension=extension)


def _tiff_pages(data: bytes, max_pages: int) -> tuple[list[bytes], int]:
    from PIL import Image

    from docproc_upload.chat.images import tiff_to_png_pages  # Pillow: loaded when used

    pages = tiff_to_png_pages(data, max_pages)
    try:
        with Image.open(io.BytesIO(data)) as image:
            total = int(getattr(image, "n_frames", 1))
    except Exception:  # noqa: BLE001 - the count is only for the note
        total = len(pages)
    return pages, total


class _Renderer:
    def __init__(
        self,
        agent: Agent,
        limits: RenderLimits,
        load: Loader,
        workspace: Workspace | None,
        pool: BlockingPool,
    ) -> None:
        self.agent = agent
        self.limits = limits
        self.load = load
        self.workspace = workspace if agent.has_workspace else None
        self.pool = pool
        self.budget = _TurnBudget(limits.inline_turn_max_chars)
        self.out = Rendered()
        self.refused = False

    # -- the workspace, with the refusal said once

    def _refuse(self, exc: BaseException) -> None:
        if not self.refused:
            log.warning("a workspace refused a write: %s", exc)
            self.refused = True
            self.out.notices.append(WORKSPACE_UNAVAILABLE)

    @property
    def writable(self) -> bool:
        return self.workspace is not None and not self.refused

    async def _write_once(self, path: str, make: Callable[[], Awaitable[bytes]]) -> int:
        """Write ``path`` unless it is already there; the bytes it cost."""
        assert self.workspace is not None
        if await self.workspace.exists(path):
            return 0
        data = await make()
        await self.workspace.write(path, data)
        return len(data)

    # -- per type

    async def file(self, f: AttachmentFile) -> None:
        ftype = f.file_type
        try:
            if ftype == FileType.ARCHIVE:
                await self._archive(f)
            elif ftype in (FileType.IMAGE, FileType.TIFF):
                await self._picture(f)
            else:
                await self._text(f)
        except _LoadFailed:
            self._skip(f)

    def _skip(self, f: AttachmentFile) -> None:
        text = f"Attached file: {shown_name(f.filename)} could not be loaded and was left out."
        self.out.parts.append(TextPart(text))
        self.out.files.append(FileOutcome(f.id, Mode.SKIPPED, text))

    async def _bytes(self, f: AttachmentFile) -> bytes:
        try:
            return await self.load(f)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("chat file %s could not be loaded: %s", f.id, exc)
            raise _LoadFailed from exc

    def _inline_text(self, f: AttachmentFile, mode: Mode, note: str = "", cost: int = 0) -> None:
        if f.parsed_content:
            body = self.budget.take(f.parsed_content)
        else:
            body = "No text could be extracted from this file."
        text = f"{_header(f)}{note}\n{body}"
        self.out.parts.append(TextPart(text))
        self.out.files.append(FileOutcome(f.id, mode, text, workspace_bytes=cost))

    async def _text(self, f: AttachmentFile) -> None:
        if not self.writable:
            mode = Mode.INLINE_FALLBACK if self.workspace is not None else Mode.INLINE
            self._inline_text(f, mode)
            return
        path = upload_path(f.id, f.filename)
        sibling: str | None = None
        needs_sibling = (
            f.file_type in _DOCUMENTS
            and f.file_type not in self.agent.runtime_reads
            and bool(f.parsed_content)
        )
        cost = 0  # what this file's writes cost, counted even when a later one fails
        try:
            cost += await self._write_once(path, lambda: self._bytes(f))
            if needs_sibling:
                sibling = f"{path}.txt"
                text = f.parsed_content or ""
                cost += await self._write_once(sibling, lambda: _encoded(text))
        except WorkspaceFull:
            note = "\n(The workspace is full, so the text is included here.)"
            self._inline_text(f, Mode.INLINE_FALLBACK, note=note, cost=cost)
            return
        except WorkspaceRefused as exc:
            self._refuse(exc)
            self._inline_text(f, Mode.INLINE_FALLBACK, cost=cost)
            return
        lines = [_header(f, _shown_path(path))]
        if sibling:
            lines.append(f"Extracted text: {_shown_path(sibling)}")
        head = first_lines(f.parsed_content)
        if head:
            lines.append(f"First {REFERENCE_LINES} lines:")
            lines.extend(head)
        elif f.file_type not in _TEXT_LIKE:
            lines.append("No text could be extracted from this file; open the original.")
        text = "\n".join(lines)
        self.out.parts.append(TextPart(text))
        self.out.files.append(FileOutcome(f.id, Mode.WORKSPACE, text, path, sibling, cost))

    async def _picture(self, f: AttachmentFile) -> None:
        data = await self._bytes(f)
        path: str | None = None
        cost = 0
        note = ""
        if self.writable:
            candidate = upload_path(f.id, f.filename)
            try:
                cost = await self._write_once(candidate, lambda: _same(data))
                path = candidate
            except WorkspaceFull:
                note = "\n(The workspace is full, so the file was not written to it.)"
            except WorkspaceRefused as exc:
                self._refuse(exc)
        parts: list[Part] = []
        if f.file_type == FileType.TIFF:
            header, parts = await self._tiff(f, data, path)
        else:
            header = _header(f, _shown_path(path) if path else None)
            if path is None or f.size <= self.limits.inline_image_max_bytes:
                parts = [BinaryPart(data, f.mime_type, f.id, shown_name(f.filename))]
            else:
                header += (
                    "\nThe image is larger than what is shown inline; open it from the workspace."
                )
        text = header + note
        self.out.parts.append(TextPart(text))
        self.out.parts.extend(parts)
        if path:
            history = f"{_header(f, _shown_path(path))}\nIt was shown when it was attached; open it from the workspace to look again."
            mode = Mode.WORKSPACE
        else:
            history = f"{_header(f)}\nIt was shown when it was attached and is not sent again; ask for it to be attached again to look at it."
            mode = Mode.INLINE if self.workspace is None else Mode.INLINE_FALLBACK
        self.out.files.append(FileOutcome(f.id, mode, history, path, None, cost))

    async def _tiff(
        self, f: AttachmentFile, data: bytes, path: str | None
    ) -> tuple[str, list[Part]]:
        header = _header(f, _shown_path(path) if path else None)
        cap = self.limits.tiff_max_inline_pages
        try:
            pages, total = await self.pool.run(_tiff_pages, data, cap)
        except ParsingRefused as exc:
            return f"{header}\nIts pages could not be shown: {exc.message}", []
        name = shown_name(f.filename)
        parts: list[Part] = [
            BinaryPart(png, "image/png", f.id, f"{name} page {i}")
            for i, png in enumerate(pages, start=1)
        ]
        if total > len(pages):
            rest = (
                "open the original in the workspace for the rest"
                if path
                else "the rest are not shown"
            )
            header += f"\nShowing pages 1-{len(pages)} of {total} as images; {rest}."
        else:
            header += f"\nShowing its {total} page{'s' if total != 1 else ''} as images."
        return header, parts

    async def _archive(self, f: AttachmentFile) -> None:
        if self.workspace is None:
            text = (
                f"{_header(f)}\nThis agent has no workspace to unpack the archive into, so it "
                "cannot open it; nothing from inside the archive is available."
            )
            self.out.parts.append(TextPart(text))
            self.out.files.append(FileOutcome(f.id, Mode.NOT_OPENED, text))
            return
        if self.refused:
            self._archive_not_written(f, "the workspace is not available")
            return
        folder = archive_folder(f.id, f.filename)
        marker = f".docproc/unpacked/{f.id.hex}"
        try:
            if await self.workspace.exists(marker):
                self._archive_reference(f, folder, 0)
                return
            data = await self._bytes(f)
            cost = await self._unpack(f, data, folder, marker)
        except WorkspaceFull:
            self._archive_not_written(f, "the workspace is full")
            return
        except WorkspaceRefused as exc:
            self._refuse(exc)
            self._archive_not_written(f, "the workspace is not available")
            return
        except ParsingRefused as exc:
            self._archive_not_written(f, exc.message)
            return
        self._archive_reference(f, folder, cost)

    async def _unpack(self, f: AttachmentFile, data: bytes, folder: str, marker: str) -> int:
        """Member by member, one in memory at a time, then the marker that says it is whole.

        The folder is removed on any failure before the marker is written (a refused
        write, a full workspace, a cancelled turn), so a half-unpacked tree is never
        taken for a whole one.
        """
        assert self.workspace is not None
        detected = _archive_detected(f)
        members = await self.pool.run(check_archive, data, detected, self.limits.archive)
        unpacked = sum(m.size for m in members)
        if unpacked > self.workspace.room():
            raise WorkspaceFull(f"the archive unpacks to {unpacked} bytes")
        walk = iter_archive_members(data, detected, self.limits.archive)
        written: set[str] = set()
        cost = 0
        try:
            while True:
                item = await self.pool.run(next, walk, None)
                if item is None:
                    break
                member, content = item
                if member.is_dir:
                    continue
                target = member_path(member.path)
                while target in written:
                    target += "_"
                written.add(target)
                await self.workspace.write(f"{folder}/{target}", content)
                cost += len(content)
            await self.workspace.write(marker, b"")
        except BaseException:
            await asyncio.shield(self._remove(folder))
            raise
        return cost

    async def _remove(self, folder: str) -> None:
        assert self.workspace is not None
        try:
            await self.workspace.remove_tree(folder)
        except Exception:  # noqa: BLE001 - logged; the reference already says it failed
            log.warning("could not remove the half-unpacked folder %s", folder, exc_info=True)

    def _archive_reference(self, f: AttachmentFile, folder: str, cost: int) -> None:
        """The folder, its file count and the first entries of its listing (its parsed text)."""
        listing = (f.parsed_content or "").splitlines()
        extra = ""
        if listing and not listing[-1].startswith("[... "):  # a complete listing
            files = sum(1 for line in listing if not line.endswith("/"))
            extra = f", {files} file{'s' if files != 1 else ''}"
        lines = [_header(f, _shown_path(folder) + "/", extra)]
        head = first_lines(f.parsed_content)
        if head:
            lines.append(f"First {len(head)} entries:")
            lines.extend(head)
        text = "\n".join(lines)
        self.out.parts.append(TextPart(text))
        self.out.files.append(FileOutcome(f.id, Mode.WORKSPACE, text, folder + "/", None, cost))

    def _archive_not_written(self, f: AttachmentFile, reason: str) -> None:
        text = (
            f"{_header(f)}\nThe archive could not be written to the workspace ({reason}); "
            "nothing from inside it is available."
        )
        self.out.parts.append(TextPart(text))
        self.out.files.append(FileOutcome(f.id, Mode.NOT_WRITTEN, text))


class _LoadFailed(Exception):
    pass


async def _encoded(text: str) -> bytes:
    return text.encode("utf-8")


async def _same(data: bytes) -> bytes:
    return data


async def render_attachments(
    files: Sequence[AttachmentFile],
    agent: Agent,
    limits: RenderLimits,
    *,
    load: Loader,
    pool: BlockingPool,
    workspace: Workspace | None = None,
) -> Rendered:
    """Route each file for this agent; the parts go into the prompt in this order.

    ``load`` returns a file's original bytes (it may raise: that file is left out);
    ``workspace`` is required when ``agent.has_workspace``.
    """
    if agent.has_workspace and workspace is None:
        raise ValueError("an agent with a workspace needs a Workspace to write to")
    renderer = _Renderer(agent, limits, load, workspace, pool)
    for f in files:
        await renderer.file(f)
    out = renderer.out
    if out.notices:
        out.parts[:0] = [TextPart(n) for n in out.notices]
    return out


__all__ = [
    "LIT_READS",
    "WORKSPACE_UNAVAILABLE",
    "Agent",
    "AttachmentFile",
    "BinaryPart",
    "DryRunWorkspace",
    "FileOutcome",
    "Mode",
    "Part",
    "RenderLimits",
    "Rendered",
    "StorageWorkspace",
    "TextPart",
    "Workspace",
    "WorkspaceFull",
    "WorkspaceRefused",
    "archive_folder",
    "first_lines",
    "human_size",
    "member_path",
    "render_attachments",
    "upload_path",
    "workspace_name",
    "workspace_root",
]
