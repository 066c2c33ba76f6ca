"""Chat attachments: validate, classify, parse, store, record; serve, link, render for an agent.

The routes (``endpoints``) own the transactions; the functions here take the session and
never begin or commit. A route opens none while an upload is parsed or its file stored,
nor while a rendering reads and writes the file store: a render is two short units, the
files read, then the rows written.

Every refusal of an upload happens before anything is stored: the bytes are detected
against the allow-list and the declared type, then parsed (an archive's parse is its
safety check), and only then written to the file store and recorded. A failure after
the write removes the file again, and a cancelled write removes what it wrote
(``AsyncStorage.put``).

Where the blocking work runs (docs/chat-uploads.md, "Where the work runs"): detection,
text decoding and file I/O on the runtime's bounded file-I/O pool; parsing of binary
formats (PDF, office, mail, archives) in child processes (``isolation``).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import time
import uuid
from dataclasses import dataclass

from botocore.exceptions import ClientError
from docproc_common.auth import Principal
from docproc_common.blocking import BlockingPool
from docproc_common.db.models import ChatFile
from docproc_common.errors import (
    FieldError,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    Unavailable,
)
from docproc_common.parsing import (
    ArchiveLimits,
    Detected,
    FileType,
    ParsedText,
    ParseLimits,
    ParsingRefused,
    detect,
    preview,
)
from docproc_common.parsing.text import parse_text
from docproc_common.runtime import Runtime
from docproc_common.settings import LimitSettings
from docproc_common.storage import StoredStream, clean_filename, new_storage_path
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.chat import repository, workspace_links
from docproc_upload.chat.attachments import (
    LIT_READS,
    Agent,
    AttachmentFile,
    BinaryPart,
    DryRunWorkspace,
    Rendered,
    RenderLimits,
    StorageWorkspace,
    render_attachments,
    workspace_root,
)
from docproc_upload.chat.isolation import IsolatedParser
from docproc_upload.chat.schemas import (
    AgentIn,
    AttachOut,
    BinaryPartOut,
    ChatFileInfo,
    ChatFileOut,
    HistoryFileOut,
    MessageAttachmentsOut,
    RenderedFileOut,
    RenderOut,
    RenderRequest,
    TextPartOut,
    WorkspaceEntryOut,
    WorkspaceFetchOut,
    WorkspaceListingOut,
)
from docproc_upload.chat.workspace_links import Entry, Fetch, WorkspaceLinks
from docproc_upload.downloads import LINK_REFUSED, link_key
from docproc_upload.inputs import column_length
from docproc_upload.metrics import CHAT_RENDERS, CHAT_UPLOADS, REJECTIONS, UPLOAD_BYTES
from docproc_upload.multipart import UploadForm

log = logging.getLogger(__name__)

MiB = 1024 * 1024
MAX_UNIT_CHARS = column_length(ChatFile.organizational_unit)
_SAFE_OWNER = re.compile(r"^[A-Za-z0-9@+_-][A-Za-z0-9@+._-]{0,127}$")
#: Served inline by the browser; everything else (TIFF included) is a download.
INLINE_TYPES = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif"})


def archive_limits(limits: LimitSettings) -> ArchiveLimits:
    return ArchiveLimits(
        max_entries=limits.workspace_archive_max_entries,
        max_bytes=limits.workspace_archive_max_bytes,
        max_ratio=limits.workspace_archive_max_ratio,
        max_member_bytes=limits.workspace_archive_max_member_bytes,
    )


def parse_limits(limits: LimitSettings) -> ParseLimits:
    return ParseLimits(max_chars=limits.chat_parsed_text_max_chars, archive=archive_limits(limits))


def render_limits(limits: LimitSettings) -> RenderLimits:
    return RenderLimits(
        tiff_max_inline_pages=limits.chat_tiff_max_inline_pages,
        inline_image_max_bytes=limits.sandbox_inline_image_max_bytes,
        inline_turn_max_chars=limits.chat_inline_turn_max_chars,
        archive=archive_limits(limits),
    )


def owner_segment(user_id: str) -> str:
    """The user id as one storage path segment; anything unusual is hashed, never trusted."""
    if _SAFE_OWNER.fullmatch(user_id) and user_id not in {".", ".."}:
        return user_id
    return "u-" + hashlib.sha256(user_id.encode()).hexdigest()[:32]


def clean_unit(raw: str | None) -> str | None:
    """A blank unit is no unit (the facet never offers ``""``)."""
    unit = " ".join((raw or "").split())
    if not unit:
        return None
    if len(unit) > MAX_UNIT_CHARS:
        raise InvalidInput(
            f"organizational_unit may be at most {MAX_UNIT_CHARS} characters",
            fields=[FieldError("organizational_unit", "too long")],
        )
    return unit


def storable(text: str | None) -> str | None:
    """Text PostgreSQL accepts: no NUL, no lone surrogates."""
    if text is None:
        return None
    return text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")


def refuse(exc: ParsingRefused) -> ParsingRefused:
    REJECTIONS.labels(exc.rule).inc()
    return exc


def _unknown_files(ids: list[uuid.UUID], reasons: dict[uuid.UUID, str], what: str) -> InvalidInput:
    bad = [i for i in dict.fromkeys(ids) if i in reasons]
    return InvalidInput(
        f"These files cannot be {what}: {', '.join(str(i) for i in bad)}",
        fields=[FieldError(f"file_ids.{n}", reasons[i]) for n, i in enumerate(ids) if i in reasons],
        details={"file_ids": [str(i) for i in bad]},
    )


@dataclass(frozen=True, slots=True)
class Download:
    filename: str
    mime_type: str
    data: bytes

    @property
    def inline(self) -> bool:
        return self.mime_type in INLINE_TYPES


class ChatParser:
    """How a chat upload is parsed, built once per process by ``Upload.create``: the
    limits, and the isolated child processes (``isolation``) that parse binary formats."""

    def __init__(self, limits: LimitSettings) -> None:
        self.limits = parse_limits(limits)
        self.max_inline_pages = limits.chat_tiff_max_inline_pages
        # chat_parse_workers = 0 parses binary formats in this process's file-I/O threads:
        # no isolation, no deadline, and the GIL shared with the event loop (the
        # benchmark's baseline, docs/benchmarks.md); never the default.
        self.isolated = (
            IsolatedParser(
                limits.chat_parse_workers,
                limits.chat_parse_max_queue,
                limits.chat_parse_timeout_s,
                limits.chat_parse_memory_mb,
            )
            if limits.chat_parse_workers > 0
            else None
        )

    async def close(self) -> None:
        if self.isolated is not None:
            await asyncio.to_thread(self.isolated.close)

    async def parse(self, pool: BlockingPool, data: bytes, detected: Detected) -> ParsedText:
        """Off the event loop, and never with a transaction open (the caller holds none)."""
        if detected.file_type in (FileType.IMAGE, FileType.TIFF):
            await pool.run(_check_pages, data, detected, self.max_inline_pages)
            return ParsedText(text=None)
        if detected.file_type is FileType.TEXT:
            # decoding only: cheap, in a file-I/O thread, and no parser library is loaded
            return await pool.run(parse_text, data, detected.extension, self.limits)
        if self.isolated is None:
            return await pool.run(_parse_here, data, detected, self.limits)
        return await self.isolated.parse(data, detected, self.limits)


# --- upload -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CheckedUpload:
    """An upload that passed every check and was parsed: what is stored and recorded."""

    filename: str
    unit: str | None
    detected: Detected
    data: bytes
    text: str | None


async def check_upload(runtime: Runtime, parser: ChatParser, form: UploadForm) -> CheckedUpload:
    """Every refusal, before anything is stored or a transaction opened: size, detection
    against the allow-list and the declared type, then the parse (an archive's is its
    safety check)."""
    limit_mb = runtime.settings.limits.chat_max_upload_size_mb
    if len(form.data) > limit_mb * MiB:
        REJECTIONS.labels("too_large").inc()
        raise PayloadTooLarge(
            f"The file is larger than the {limit_mb} MB limit for chat attachments",
            fields=[FieldError("file", "too large")],
            details={"rule": "too_large"},
        )
    if not form.data:
        REJECTIONS.labels("empty_file").inc()
        raise InvalidInput(
            "The file is empty",
            fields=[FieldError("file", "empty")],
            details={"rule": "empty_file"},
        )
    filename = clean_filename(form.filename)
    unit = clean_unit(form.organizational_unit)
    try:
        detected = await runtime.pool.run(detect, form.data, filename, form.content_type)
        parsed = await parser.parse(runtime.pool, form.data, detected)
    except ParsingRefused as exc:
        raise refuse(exc) from None
    except Unavailable:
        REJECTIONS.labels("parse_busy").inc()
        raise
    return CheckedUpload(filename, unit, detected, form.data, storable(parsed.text))


async def store(runtime: Runtime, principal: Principal, upload: CheckedUpload) -> str:
    """Write the file under its owner; a cancelled write removes what it wrote."""
    path = new_storage_path(owner_segment(principal.user_id), upload.filename)
    await runtime.storage.put(path, upload.data, upload.detected.mime_type)
    return path


async def add_file(
    session: AsyncSession, principal: Principal, upload: CheckedUpload, storage_path: str
) -> ChatFileOut:
    """The file's row, in the caller's transaction."""
    row = ChatFile(
        user_id=principal.user_id,
        filename=upload.filename,
        mime_type=upload.detected.mime_type,
        size=len(upload.data),
        storage_path=storage_path,
        organizational_unit=upload.unit,
        file_type=upload.detected.file_type.value,
        parsed_content=upload.text,
    )
    session.add(row)
    await session.flush()
    return ChatFileOut(
        id=row.id,
        filename=upload.filename,
        mime_type=upload.detected.mime_type,
        size=len(upload.data),
        file_kind=upload.detected.file_type,
        preview=preview(upload.text),
    )


def uploaded(upload: CheckedUpload) -> None:
    """Count an upload once its row is committed."""
    CHAT_UPLOADS.labels(upload.detected.file_type.value).inc()
    UPLOAD_BYTES.labels("chat").observe(len(upload.data))


# --- download -----------------------------------------------------------------------------


async def own_file(session: AsyncSession, principal: Principal, file_id: uuid.UUID) -> ChatFile:
    """The caller's file; anyone else gets the same 404 as for no file."""
    row = await repository.own_file(session, principal.user_id, file_id)
    if row is None:
        raise NotFound("File not found")
    return row


async def info(session: AsyncSession, principal: Principal, file_id: uuid.UUID) -> ChatFileInfo:
    row = await own_file(session, principal, file_id)
    return ChatFileInfo(
        id=row.id,
        filename=row.filename,
        mime_type=row.mime_type,
        size=row.size,
        file_kind=FileType(row.file_type),
        preview=preview(row.parsed_content),
        organizational_unit=row.organizational_unit,
        message_id=row.message_id,
        has_parsed_content=row.parsed_content is not None,
        created_at=row.created_at,
    )


async def download(runtime: Runtime, row: ChatFile) -> Download:
    """The file's bytes (read with no transaction open); a row whose object is gone is 404."""
    try:
        data = await runtime.storage.get(row.storage_path)
    except (FileNotFoundError, ClientError) as exc:
        if isinstance(exc, ClientError) and exc.response.get("Error", {}).get("Code") not in {
            "404",
            "NoSuchKey",
            "NotFound",
        }:
            raise
        log.warning("chat file %s has no bytes at %s", row.id, row.storage_path)
        raise NotFound("File not found") from None
    return Download(row.filename, row.mime_type, data)


# --- link to a message ----------------------------------------------------------------------


async def attach(
    session: AsyncSession, principal: Principal, message_id: uuid.UUID, file_ids: list[uuid.UUID]
) -> AttachOut:
    """All or nothing, under row locks held to the caller's commit: only the caller's own
    unlinked files. A file already on a message, this one included, is refused rather
    than applied in silence (the seed's linking rule)."""
    unique = list(dict.fromkeys(file_ids))
    found = await repository.lock_own_files(session, principal.user_id, unique)
    reasons: dict[uuid.UUID, str] = {}
    for file_id in unique:
        row = found.get(file_id)
        if row is None:
            reasons[file_id] = "not found"
        elif row.message_id == message_id:
            reasons[file_id] = "already attached to this message"
        elif row.message_id is not None:
            reasons[file_id] = "already attached to another message"
    if reasons:
        raise _unknown_files(file_ids, reasons, "attached")
    await repository.link(session, unique, message_id)
    return AttachOut(message_id=message_id, file_ids=unique)


# --- rendering for an agent -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToRender:
    """The caller's files for one turn, in request order, and the workspace's used bytes."""

    files: dict[uuid.UUID, ChatFile]
    workspace_used: int


async def files_to_render(
    session: AsyncSession, principal: Principal, request: RenderRequest
) -> ToRender:
    unique = list(dict.fromkeys(request.file_ids))
    found = await repository.own_files(session, principal.user_id, unique)
    missing = {i: "not found" for i in unique if i not in found}
    if missing:
        raise _unknown_files(request.file_ids, missing, "rendered")
    agent = request.agent
    used = 0
    if agent.has_workspace:
        used = await repository.workspace_usage(
            session, principal.user_id, agent.agent_id, agent.conversation_id
        )
    return ToRender({i: found[i] for i in unique}, used)


async def render(
    runtime: Runtime,
    principal: Principal,
    request: RenderRequest,
    files: ToRender,
    *,
    dry_run: bool,
) -> Rendered:
    """Route the files for one turn (storage I/O only, no transaction). ``dry_run``: the
    same parts and references with no workspace object written, for the input guardrail."""
    agent_in = request.agent
    workspace: StorageWorkspace | DryRunWorkspace | None = None
    if agent_in.has_workspace:
        root = workspace_root(
            owner_segment(principal.user_id), agent_in.agent_id, agent_in.conversation_id
        )
        quota = runtime.settings.limits.workspace_max_bytes
        workspace = StorageWorkspace(runtime.storage, root, quota, files.workspace_used)
        if dry_run:
            workspace = DryRunWorkspace(workspace)

    async def load(f: AttachmentFile) -> bytes:
        return await runtime.storage.get(f.storage_path)

    return await render_attachments(
        [
            AttachmentFile(
                id=f.id,
                filename=f.filename,
                mime_type=f.mime_type,
                size=f.size,
                file_type=f.file_type,
                parsed_content=f.parsed_content,
                storage_path=f.storage_path,
            )
            for f in files.files.values()
        ],
        _agent(agent_in),
        render_limits(runtime.settings.limits),
        load=load,
        pool=runtime.pool,
        workspace=workspace,
    )


async def save_renders(
    session: AsyncSession,
    principal: Principal,
    request: RenderRequest,
    files: ToRender,
    rendered: Rendered,
) -> None:
    """One render row per file, in the caller's transaction (a dry run writes none)."""
    await repository.save_renders(
        session,
        principal.user_id,
        request.agent.agent_id,
        request.agent.conversation_id,
        [
            repository.RenderRow(
                file_id=o.file_id,
                message_id=files.files[o.file_id].message_id,
                mode=o.mode.value,
                workspace_path=o.workspace_path,
                workspace_bytes=o.workspace_bytes,
                history_text=o.history,
            )
            for o in rendered.files
        ],
    )


def links_for(
    runtime: Runtime, principal: Principal, request: RenderRequest, *, dry_run: bool
) -> WorkspaceLinks | None:
    """The links a render hands out: the caller's, to this agent's workspace in this chat,
    for ``workspace_link_ttl_s``; none without a workspace, and none on a dry run (nothing
    was written to fetch)."""
    agent = request.agent
    if dry_run or not agent.has_workspace:
        return None
    ttl = runtime.settings.limits.workspace_link_ttl_s
    return WorkspaceLinks(
        link_key(runtime.settings.auth),
        principal,
        agent.agent_id,
        agent.conversation_id,
        int(time.time()) + ttl,
    )


def _entry_out(e: Entry) -> WorkspaceEntryOut:
    return WorkspaceEntryOut(path=e.path, size=e.size, url=e.url)


def _fetch_out(fetch: Fetch | None) -> WorkspaceFetchOut | None:
    if fetch is None:
        return None
    return WorkspaceFetchOut(
        expires_at=fetch.expires_at,
        entries=[_entry_out(e) for e in fetch.entries],
        listing_url=fetch.listing_url,
    )


def rendered_out(
    files: ToRender,
    rendered: Rendered,
    *,
    dry_run: bool,
    links: WorkspaceLinks | None = None,
) -> RenderOut:
    """The answer; a real render's modes are counted (its rows are committed). With
    ``links``, each file written into the workspace says how to fetch it."""
    if not dry_run:
        for o in rendered.files:
            CHAT_RENDERS.labels(o.mode.value).inc()
    found = files.files
    return RenderOut(
        parts=[
            BinaryPartOut(media_type=p.media_type, data=p.base64(), file_id=p.file_id, name=p.name)
            if isinstance(p, BinaryPart)
            else TextPartOut(text=p.text)
            for p in rendered.parts
        ],
        files=[
            RenderedFileOut(
                file_id=o.file_id,
                filename=found[o.file_id].filename,
                file_kind=FileType(found[o.file_id].file_type),
                mode=o.mode.value,
                workspace_path="/" + o.workspace_path if o.workspace_path else None,
                sibling_path="/" + o.sibling_path if o.sibling_path else None,
                fetch=_fetch_out(
                    links.fetch(o, found[o.file_id].size, found[o.file_id].parsed_content)
                    if links
                    else None
                ),
            )
            for o in rendered.files
        ],
        notices=rendered.notices,
        dry_run=dry_run,
    )


async def message_attachments(
    session: AsyncSession,
    principal: Principal,
    message_id: uuid.UUID,
    agent_id: str | None,
    conversation_id: str | None,
) -> MessageAttachmentsOut:
    rows = await repository.message_files(
        session, principal.user_id, message_id, agent_id, conversation_id
    )
    return MessageAttachmentsOut(
        message_id=message_id,
        files=[
            HistoryFileOut(
                file_id=f.id,
                filename=f.filename,
                mime_type=f.mime_type,
                size=f.size,
                file_kind=FileType(f.file_type),
                mode=r.mode if r else None,
                workspace_path=("/" + r.workspace_path) if r and r.workspace_path else None,
                history=r.history_text if r else None,
            )
            for f, r in rows
        ],
    )


# --- the workspace's files, for the runner ----------------------------------------------------


def _workspace(
    runtime: Runtime, principal: Principal, link: str, purpose: str
) -> tuple[workspace_links.Target, str]:
    """The opened link and the presenting caller's own workspace root it reads under."""
    target = workspace_links.open_target(
        link_key(runtime.settings.auth), link, purpose=purpose, caller=principal, now=time.time()
    )
    root = workspace_root(owner_segment(principal.user_id), target.agent_id, target.conversation_id)
    return target, root


async def workspace_file(
    runtime: Runtime, principal: Principal, link: str
) -> tuple[str, StoredStream]:
    """A file a render wrote (its name and its bytes, opened), through a link the caller
    holds; a link that is not the caller's, expired, or whose file is gone is 404."""
    target, root = _workspace(runtime, principal, link, workspace_links.FILE)
    try:
        stream = await runtime.storage.open(target.key(root))
    except FileNotFoundError:
        raise NotFound(LINK_REFUSED) from None
    return target.path.rsplit("/", 1)[-1], stream


async def workspace_listing(
    runtime: Runtime, principal: Principal, link: str
) -> WorkspaceListingOut:
    """An unpacked archive's members, each with its own link that expires with this one."""
    target, root = _workspace(runtime, principal, link, workspace_links.LISTING)
    objects = await runtime.storage.list_prefix(target.key(root) + "/")
    if not objects:
        raise NotFound(LINK_REFUSED)
    links = WorkspaceLinks(
        link_key(runtime.settings.auth),
        principal,
        target.agent_id,
        target.conversation_id,
        target.link.expires_at,
    )
    return WorkspaceListingOut(
        folder="/" + target.path + "/",
        expires_at=target.link.expires(),
        entries=[_entry_out(e) for e in workspace_links.listed(links, root, objects)],
    )


def _parse_here(data: bytes, detected: Detected, limits: ParseLimits) -> ParsedText:
    """The no-isolation fallback's parse: PyMuPDF and the office libraries are imported
    here, in the file-I/O thread (seconds, the first time), never on the event loop."""
    from docproc_common.parsing.dispatch import parse

    return parse(data, detected, limits)


def _check_pages(data: bytes, detected: Detected, max_pages: int) -> None:
    """The page-size check, Pillow loaded here in the file-I/O thread, never on the loop."""
    from docproc_upload.chat.images import check_pages

    check_pages(data, detected, max_pages)


def _agent(agent: AgentIn) -> Agent:
    if agent.runtime_reads is not None:
        reads = frozenset(str(t) for t in agent.runtime_reads)
    elif agent.described_runtime_has_lit:
        reads = frozenset(str(t) for t in LIT_READS)
    else:
        reads = frozenset()
    return Agent(has_workspace=agent.has_workspace, runtime_reads=reads)
