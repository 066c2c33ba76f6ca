"""Documents: intake, listing, the parsed view and the original, deletion, retries.

Intake validates everything first, then the file is stored, then the row and its
``DocumentAccepted`` are committed together; every refusal happens before the file
is stored and before any row exists.

* The supported formats are the format table of ``docproc_common.formats`` as it
  stands on this server (LibreOffice present or not), the very table the upload path
  refuses by, so an extension listed here is one an upload accepts and the parser
  routes.
* A document's parsed content view: its tracking row, whether an original is kept
  (``has_file``: an upload keeps one under ``rag/{collection}/``, a synced document
  does not), and the parsed text as stored by the parser. Access is the collection's:
  a document the caller may not view answers the same 404 as one that does not exist.
* Addressed through a knowledge base, the base is resolved first (``collections:view``
  reaching it) and a document of another base is "Document not found in this knowledge
  base". ``parsed`` cuts the chunk set into the pages the parser read (``page_map``);
  it is 404 until the document is ``done``. ``download`` streams the stored original
  from storage a piece at a time, as an attachment the browser does not sniff.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import uuid
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from docproc_common.auth import Principal
from docproc_common.bus.outbox import enqueue
from docproc_common.db.models import DocumentStatus, RagDocument
from docproc_common.db.vector_tables import validate_collection_name
from docproc_common.documents import UPLOAD_SOURCE, accept_document
from docproc_common.errors import (
    CollectionNotFound,
    Conflict,
    FieldError,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
)
from docproc_common.events import DocumentDeleted
from docproc_common.formats import (
    BUILTIN_FORMATS,
    Capabilities,
    check_supported,
    supported_formats,
    unavailable_formats,
)
from docproc_common.http import database_unreachable
from docproc_common.ingestion import IngestionConfig
from docproc_common.names import is_reserved
from docproc_common.runtime import Runtime
from docproc_common.settings import Settings
from docproc_common.storage import AsyncStorage
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.access import Access, resolve_collection, resolve_kb
from docproc_upload.ingestion_config import check_secret_bindings, merge_config
from docproc_upload.inputs import column_length
from docproc_upload.metrics import DOCUMENTS, REJECTIONS, UPLOAD_BYTES
from docproc_upload.rag_documents import repository
from docproc_upload.rag_documents.schemas import (
    Chunk,
    ChunkContext,
    DocumentOut,
    DocumentPage,
    ParsedDocument,
    ParsedPage,
    ParsedPages,
    ParserFormats,
    RAGIngestResponse,
)

DOCUMENT_NOT_FOUND = "Document not found"
NOT_IN_KB = "Document not found in this knowledge base"
MAX_CONTENT_CHARS = 5_000_000
#: Neighbours a chunk-context read takes on either side of the chunk.
MAX_NEIGHBOURS = 20
#: The largest chunk number (a PostgreSQL ``integer``).
MAX_CHUNK_NO = 2**31 - 1

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IncomingFile:
    filename: str
    data: bytes
    content_type: str | None


def parse_override(raw: str | None) -> dict[str, object] | None:
    if raw is None or not raw.strip():
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            "The ingestion field is not valid JSON",
            fields=[FieldError("ingestion_config", "not valid JSON")],
        ) from exc
    if not isinstance(value, dict):
        raise InvalidInput(
            "The ingestion field must be a JSON object",
            fields=[FieldError("ingestion_config", "must be an object")],
        )
    return value


async def kb_to_ingest_into(session: AsyncSession, principal: Principal, name: str) -> uuid.UUID:
    """``POST /rag/collections/{name}/ingest``: the one knowledge base on ``name`` the caller
    may edit. None is "Collection not found" (as for a denial); several are refused rather
    than guessed between (an organization's base and its owner's personal twin)."""
    validate_collection_name(name)
    kbs = await resolve_collection(session, principal, name, Access.EDIT)
    if len(kbs) > 1:
        raise Conflict(
            f"The collection name '{name}' holds {len(kbs)} knowledge bases you can edit; "
            "upload into one of them with POST /api/v1/kb/{kb_id}/documents",
            details={"knowledge_base_ids": [str(kb.id) for kb in kbs]},
        )
    return kbs[0].id


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_document_date(raw: str | None) -> date | None:
    """The uploader's ``document_date``: a calendar date ``YYYY-MM-DD``, or None when blank."""
    value = (raw or "").strip()
    if not value:
        return None
    try:
        if not _ISO_DATE.fullmatch(value):
            raise ValueError(value)
        return date.fromisoformat(value)
    except ValueError as exc:
        raise InvalidInput(
            "document_date must be a calendar date written YYYY-MM-DD",
            fields=[FieldError("document_date", "not a date")],
        ) from exc


MAX_UNIT_CHARS = column_length(RagDocument.organizational_unit)


def parse_organizational_unit(raw: str | None) -> str | None:
    """The uploader's ``organizational_unit``: trimmed, None when blank, at most the column."""
    unit = (raw or "").strip()
    if len(unit) > MAX_UNIT_CHARS:
        raise InvalidInput(
            f"organizational_unit may be at most {MAX_UNIT_CHARS} characters",
            fields=[FieldError("organizational_unit", "too long")],
        )
    return unit or None


@dataclass(frozen=True, slots=True)
class Intake:
    """An upload that passed every check: where it goes and what its row will say."""

    kb_id: uuid.UUID
    collection_name: str
    organization_id: str | None
    filetype: str
    config: IngestionConfig
    organizational_unit: str | None
    document_date: date | None


async def check_upload(
    session: AsyncSession,
    principal: Principal,
    settings: Settings,
    kb_id: uuid.UUID,
    incoming: IncomingFile,
    ingestion: str | None,
    organizational_unit: str | None,
    document_date: str | None,
) -> Intake:
    """Every refusal of an upload, before the file is stored and before any row exists."""
    limit_mb = settings.limits.max_upload_size_mb
    kb = await resolve_kb(session, principal, kb_id, Access.EDIT)
    if len(incoming.data) > limit_mb * 1024 * 1024:
        REJECTIONS.labels("too_large").inc()
        raise PayloadTooLarge(
            f"The file is larger than MAX_UPLOAD_SIZE_MB ({limit_mb} MB)",
            fields=[FieldError("file", "too large")],
        )
    config = merge_config(kb.ingestion_config, parse_override(ingestion))
    await check_secret_bindings(
        session,
        principal,
        config,
        organization_id=kb.organization_id,
        kept=kb.ingestion_config,
    )
    own_date = parse_document_date(document_date)
    unit = parse_organizational_unit(organizational_unit)
    try:
        ext = check_supported(
            incoming.filename, config.parser, Capabilities.declared(settings.formats)
        )
    except InvalidInput:
        REJECTIONS.labels("unsupported_type").inc()
        raise
    if await is_reserved(session, kb.collection_name):
        raise Conflict("The collection is being deleted; the upload was not accepted")
    return Intake(kb.id, kb.collection_name, kb.organization_id, ext, config, unit, own_date)


async def accept_upload(
    session: AsyncSession,
    principal: Principal,
    intake: Intake,
    incoming: IncomingFile,
    storage_path: str,
    document_id: uuid.UUID,
    *,
    content_hash: str,
    replace: bool,
) -> RAGIngestResponse:
    """The row of a stored upload and its ``DocumentAccepted``, in the caller's transaction.

    ``content_hash`` is ``sha256_hex`` of the bytes, recorded so that a client can tell the
    base already holds a file (``docproc ingest`` resumes by it; a sync compares it).

    With ``replace`` the row is marked to retire the earlier documents of its name in the
    base once it is ``done`` (the embedder's completion,
    ``docproc_embedder.repository.retire_replaced``).
    """
    doc = RagDocument(
        id=document_id,
        collection_name=intake.collection_name,
        knowledge_base_id=intake.kb_id,
        organization_id=intake.organization_id,
        uploaded_by=principal.user_id,
        filename=incoming.filename[:1024],
        filesize=len(incoming.data),
        filetype=intake.filetype,
        storage_path=storage_path,
        source=UPLOAD_SOURCE,
        content_hash=content_hash,
        organizational_unit=intake.organizational_unit,
        document_date=intake.document_date,
        ingestion_config=intake.config.model_dump(mode="json"),
        replace_by_name=replace,
    )
    await accept_document(session, doc)
    return ingest_answer(intake, incoming, document_id)


def sha256_hex(data: bytes) -> str:
    """The content hash a document records, as a sync records it: run on the blocking pool
    (hashlib releases the GIL; a 50 MB upload is tens of milliseconds)."""
    return hashlib.sha256(data).hexdigest()


def ingest_answer(
    intake: Intake, incoming: IncomingFile, document_id: uuid.UUID
) -> RAGIngestResponse:
    return RAGIngestResponse(
        message="The document was accepted and is being processed",
        filename=incoming.filename,
        collection_name=intake.collection_name,
        tracking_id=document_id,
    )


async def committed_anyway(runtime: Runtime, document_id: uuid.UUID, exc: Exception) -> bool | None:
    """Whether the upload's transaction committed although ``exc`` was raised: a connection
    lost around COMMIT leaves it unknown, so the row is looked for on a new connection
    (None: still unknown; the stored original is then kept rather than risk a row naming
    a missing object)."""
    if not database_unreachable(exc):
        return False
    try:
        async with runtime.sessionmaker() as session:
            return await repository.document_exists(session, document_id)
    except Exception:  # noqa: BLE001 - the database is still away
        log.warning("document %s: commit outcome unknown; its original is kept", document_id)
        return None


def accepted(incoming: IncomingFile) -> None:
    """Count an upload once its row is committed."""
    UPLOAD_BYTES.labels("knowledge_base").observe(len(incoming.data))
    DOCUMENTS.labels("accept", "ok").inc()


async def document_for(
    session: AsyncSession, principal: Principal, document_id: uuid.UUID, access: Access
) -> RagDocument:
    """The document if a base that lists it is reachable; a denial looks like absence.

    A filed document is reached through its own base. An unfiled one through a base on its
    name whose search reads its chunks: an operator's (``rag-ingest``) through an app-scoped
    base, an organization's through a base of that organization (``unfiled.tenants``); no
    other unfiled row is reached by id.
    """
    doc = await repository.document(session, document_id, lock=access is Access.EDIT)
    try:
        if doc is not None and doc.knowledge_base_id is not None:
            await resolve_kb(session, principal, doc.knowledge_base_id, access)
            return doc
        if doc is not None:
            kbs = await resolve_collection(session, principal, doc.collection_name, access)
            if repository.is_listed_by(kbs, doc):
                return doc
    except CollectionNotFound:
        pass
    raise NotFound(DOCUMENT_NOT_FOUND)


def document_out(doc: RagDocument) -> DocumentOut:
    return DocumentOut(
        id=doc.id,
        collection_name=doc.collection_name,
        knowledge_base_id=doc.knowledge_base_id,
        filename=doc.filename,
        filesize=doc.filesize,
        filetype=doc.filetype,
        status=doc.status,
        error_message=doc.error_message,
        chunk_count=doc.chunk_count,
        source=doc.source,
        source_path=doc.source_path,
        content_hash=doc.content_hash,
        organizational_unit=doc.organizational_unit,
        has_file=doc.storage_path is not None,
        created_at=doc.created_at,
        completed_at=doc.completed_at,
    )


async def list_documents(
    session: AsyncSession,
    principal: Principal,
    kb_id: uuid.UUID,
    *,
    limit: int,
    before: tuple[datetime, uuid.UUID] | None,
) -> DocumentPage:
    """One page, newest first, by keyset on (created_at, id): an index range, never a full scan."""
    kb = await resolve_kb(session, principal, kb_id, Access.VIEW)
    docs = await repository.document_page(session, kb, limit=limit + 1, before=before)
    total = await repository.document_count(session, kb)
    more = len(docs) > limit
    docs = docs[:limit]
    cursor = f"{docs[-1].created_at.isoformat()}|{docs[-1].id}" if more and docs else None
    return DocumentPage(items=[document_out(d) for d in docs], total=total, next_cursor=cursor)


def parse_cursor(raw: str | None) -> tuple[datetime, uuid.UUID] | None:
    if not raw:
        return None
    try:
        stamp, _, ident = raw.partition("|")
        return datetime.fromisoformat(stamp), uuid.UUID(ident)
    except ValueError as exc:
        raise InvalidInput("Invalid cursor", fields=[FieldError("cursor", "not a cursor")]) from exc


async def delete_document(
    session: AsyncSession, principal: Principal, document_id: uuid.UUID
) -> None:
    """The row goes now; its chunks and files durably after commit (``DocumentDeleted``).

    A document still indexing has no vector id yet: the embedder, finding its row
    gone under lock, writes nothing, so no chunk survives either way.
    """
    doc = await document_for(session, principal, document_id, Access.EDIT)
    await session.delete(doc)
    await enqueue(
        session,
        DocumentDeleted(
            collection_name=doc.collection_name,
            vector_document_ids=[doc.vector_document_id] if doc.vector_document_id else [],
            storage_paths=[p for p in (doc.storage_path, doc.parsed_path) if p],
        ),
    )


async def retry_document(
    session: AsyncSession, principal: Principal, document_id: uuid.UUID
) -> DocumentOut:
    """Re-dispatch a failed upload from its stored original, replacing what the failed attempt
    indexed. An organization's unfiled document is refused (400): its tenant's bases list it,
    but a new attempt would index it filed under no base again; it is uploaded again into one."""
    doc = await document_for(session, principal, document_id, Access.EDIT)
    if doc.knowledge_base_id is None and doc.organization_id is not None:
        raise InvalidInput(
            "This document is filed under no knowledge base (it was uploaded before documents "
            "recorded their base), so it cannot be retried; upload it again into a knowledge base"
        )
    if doc.status != DocumentStatus.ERROR:
        raise InvalidInput("Only a failed document can be retried")
    if not doc.storage_path:
        raise InvalidInput(
            "This document has no stored original to retry from; upload it again "
            "(a synced document is retried by running its sync again)"
        )
    if await is_reserved(session, doc.collection_name):
        raise Conflict("The collection is being deleted; the retry was not queued")
    await accept_document(session, doc)
    return document_out(doc)


def pages_of(chunks: list[str], page_map: list[dict[str, Any]] | None) -> list[ParsedPage]:
    """Cut the chunk set into the parser's pages; without a map, the document is one page."""
    if not page_map:
        return [ParsedPage(page_num=1, chunks=chunks, has_text=bool(chunks))]
    pages, at = [], 0
    for n, page in enumerate(page_map, start=1):
        count = int(page["chunks"])
        pages.append(
            ParsedPage(page_num=n, chunks=chunks[at : at + count], has_text=bool(page["has_text"]))
        )
        at += count
    return pages


async def _document_in_kb(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID, document_id: uuid.UUID
) -> RagDocument:
    """A document the base lists (its own, or operator content it adopts), else 404."""
    kb = await resolve_kb(session, principal, kb_id, Access.VIEW)
    doc = await repository.listed_document(session, kb, document_id)
    if doc is None:
        raise NotFound(NOT_IN_KB)
    return doc


def _dotted(extensions: frozenset[str] | set[str]) -> list[str]:
    return sorted(f".{e}" for e in extensions)


def formats_of(parser: str, capabilities: Capabilities) -> ParserFormats:
    return ParserFormats(
        parser=parser,
        extensions=_dotted(supported_formats(parser, capabilities)),
        builtin=_dotted(BUILTIN_FORMATS),
        unavailable={
            f".{e}": why for e, why in sorted(unavailable_formats(parser, capabilities).items())
        },
    )


async def parsed_document(
    session: AsyncSession,
    storage: AsyncStorage,
    principal: Principal,
    document_id: uuid.UUID,
    *,
    offset: int,
    limit: int,
) -> ParsedDocument:
    """The tracking row and a window of the parsed text as the parser stored it."""
    doc = await document_for(session, principal, document_id, Access.VIEW)
    text: str | None = None
    if doc.parsed_path:
        raw = await storage.get(doc.parsed_path)
        text = raw.decode("utf-8", errors="replace")
    window = text[offset : offset + limit] if text is not None else None
    return ParsedDocument(
        **document_out(doc).model_dump(),
        parser=(doc.ingestion_config or {}).get("parser"),
        content=window,
        content_offset=offset,
        content_length=len(text) if text is not None else None,
        content_truncated=text is not None and offset + limit < len(text),
    )


async def parsed_pages(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID, document_id: uuid.UUID
) -> ParsedPages:
    """The document's chunks page by page; 404 until it is ``done``."""
    doc = await _document_in_kb(session, principal, kb_id, document_id)
    if doc.status != DocumentStatus.DONE or doc.vector_document_id is None:
        raise NotFound(f"The document is not indexed yet (status: {doc.status})")
    chunks = await repository.document_chunks(session, doc.collection_name, doc.vector_document_id)
    return ParsedPages(
        document_id=doc.id,
        knowledge_base_id=kb_id,
        filename=doc.filename,
        pages=pages_of(chunks, doc.page_map),
    )


async def chunk_context(
    session: AsyncSession,
    principal: Principal,
    document_id: uuid.UUID,
    chunk_no: int,
    *,
    before: int,
    after: int,
) -> ChunkContext:
    """Chunk ``chunk_no`` of the document with up to ``before`` chunks ahead of it and
    ``after`` behind it: what an agent reads around a search hit. Access is the parsed
    view's (a document the caller may not view is "Document not found"); 404 until the
    document is ``done`` and for a chunk number it does not have."""
    doc = await document_for(session, principal, document_id, Access.VIEW)
    if doc.status != DocumentStatus.DONE or doc.vector_document_id is None:
        raise NotFound(f"The document is not indexed yet (status: {doc.status})")
    rows = await repository.chunk_window(
        session,
        doc.collection_name,
        doc.vector_document_id,
        max(chunk_no - before, 0),
        min(chunk_no + after, MAX_CHUNK_NO),
    )
    if chunk_no not in {n for n, _ in rows}:
        raise NotFound(
            f"The document has no chunk {chunk_no}: its {doc.chunk_count} chunks are "
            "numbered from 0",
            fields=[FieldError("chunk_no", "not a chunk of this document")],
        )
    return ChunkContext(
        document_id=doc.id,
        knowledge_base_id=doc.knowledge_base_id,
        collection_name=doc.collection_name,
        filename=doc.filename,
        chunk_no=chunk_no,
        chunk_count=doc.chunk_count,
        chunks=[Chunk(chunk_no=n, content=content) for n, content in rows],
    )


async def stored_original(
    session: AsyncSession, principal: Principal, kb_id: uuid.UUID, document_id: uuid.UUID
) -> tuple[str, str]:
    """The file name and storage path of the document's original; 404 when none is kept."""
    doc = await _document_in_kb(session, principal, kb_id, document_id)
    if not doc.storage_path:
        raise NotFound("This document keeps no original file (a synced document has none)")
    return doc.filename, doc.storage_path


def original_gone() -> NotFound:
    return NotFound("The document's original file is no longer stored")
