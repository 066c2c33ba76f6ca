"""What can be ingested, and what one document is: its parsed text, its pages, its original.

``GET /rag/supported-formats``, ``GET /rag/documents/{id}`` and, within one knowledge
base, ``GET /kb/{kb_id}/documents/{doc_id}/parsed`` and ``.../download``.

No ``from __future__ import annotations`` here: FastAPI must see the closure-local
dependency aliases as objects, not strings.

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

import uuid
from typing import Annotated, Any, Literal

from docproc_common.access import Access, resolve_kb
from docproc_common.auth import Principal, principal_from_header
from docproc_common.db.models import DocumentStatus, RagDocument
from docproc_common.errors import NotFound
from docproc_common.formats import (
    BUILTIN_FORMATS,
    PARSERS,
    supported_formats,
    unavailable_formats,
)
from docproc_common.runtime import Runtime
from docproc_common.vectorstore import document_chunks
from fastapi import APIRouter, Depends, Header, Query
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload import repository
from docproc_upload.collections import document_for, document_out
from docproc_upload.downloads import download_headers
from docproc_upload.schemas import DocumentOut

MAX_CONTENT_CHARS = 5_000_000


class ParserFormats(BaseModel):
    parser: str
    #: Every extension (with its dot) a collection on this parser ingests here, built-ins included.
    extensions: list[str]
    #: Read by the built-in parsers whatever the collection's parser is.
    builtin: list[str]
    #: Read by this parser elsewhere, but not on this server, with the reason (LibreOffice missing).
    unavailable: dict[str, str] = Field(default_factory=dict)


class SupportedFormats(BaseModel):
    parsers: list[ParserFormats]


class ParsedDocument(DocumentOut):
    parser: str | None
    #: The parsed text (a window of it: ``content_offset`` .. + len), None until parsed.
    content: str | None
    content_offset: int
    #: Characters of parsed text stored in all; None until parsed.
    content_length: int | None
    content_truncated: bool


class ParsedPage(BaseModel):
    page_num: int
    #: The text of the chunks that begin on this page, in order.
    chunks: list[str]
    #: Whether the parser found any text on the page (a scanned page without OCR has none).
    has_text: bool


class ParsedPages(BaseModel):
    document_id: uuid.UUID
    knowledge_base_id: uuid.UUID
    filename: str
    pages: list[ParsedPage]


NOT_IN_KB = "Document not found in this knowledge base"


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


def formats_of(parser: str) -> ParserFormats:
    return ParserFormats(
        parser=parser,
        extensions=_dotted(supported_formats(parser)),
        builtin=_dotted(BUILTIN_FORMATS),
        unavailable={f".{e}": why for e, why in sorted(unavailable_formats(parser).items())},
    )


def build_documents_router(runtime: Runtime) -> APIRouter:
    router = APIRouter(
        prefix="/api/v1",
        tags=["rag"],
        responses={
            401: {"description": "Missing or invalid bearer token"},
            404: {"description": "Document not found (also when access is denied)"},
        },
    )

    async def principal(authorization: Annotated[str | None, Header()] = None) -> Principal:
        return principal_from_header(runtime.settings.auth, authorization)

    async def session() -> AsyncSession:  # type: ignore[misc]
        async with runtime.sessionmaker() as s:
            yield s

    Caller = Annotated[Principal, Depends(principal)]
    Session = Annotated[AsyncSession, Depends(session)]

    @router.get("/rag/supported-formats", response_model=SupportedFormats)
    async def get_supported_formats(
        _caller: Caller,
        parser: Annotated[
            Literal["pymupdf", "liteparse", "llamaparse"] | None,
            Query(description="One parser; all three when omitted"),
        ] = None,
    ) -> SupportedFormats:
        return SupportedFormats(parsers=[formats_of(p) for p in ([parser] if parser else PARSERS)])

    @router.get("/rag/documents/{document_id}", response_model=ParsedDocument)
    async def get_document(
        document_id: uuid.UUID,
        caller: Caller,
        db: Session,
        offset: Annotated[int, Query(ge=0)] = 0,
        limit: Annotated[int, Query(ge=1, le=MAX_CONTENT_CHARS)] = 1_000_000,
    ) -> ParsedDocument:
        doc = await document_for(db, caller, document_id, Access.VIEW)
        text: str | None = None
        if doc.parsed_path:
            raw = await runtime.storage.get(doc.parsed_path)
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

    @router.get(
        "/kb/{kb_id}/documents/{document_id}/parsed", response_model=ParsedPages, tags=["kb"]
    )
    async def get_parsed(
        kb_id: uuid.UUID, document_id: uuid.UUID, caller: Caller, db: Session
    ) -> ParsedPages:
        """The document's chunks page by page; 404 until it is ``done``."""
        doc = await _document_in_kb(db, caller, kb_id, document_id)
        if doc.status != DocumentStatus.DONE or doc.vector_document_id is None:
            raise NotFound(f"The document is not indexed yet (status: {doc.status})")
        chunks = await document_chunks(db, doc.collection_name, doc.vector_document_id)
        return ParsedPages(
            document_id=doc.id,
            knowledge_base_id=kb_id,
            filename=doc.filename,
            pages=pages_of(chunks, doc.page_map),
        )

    @router.get(
        "/kb/{kb_id}/documents/{document_id}/download",
        response_class=StreamingResponse,
        responses={200: {"description": "The original file", "content": {"*/*": {}}}},
        tags=["kb"],
    )
    async def download(
        kb_id: uuid.UUID, document_id: uuid.UUID, caller: Caller
    ) -> StreamingResponse:
        """The stored original, streamed; a synced document keeps none (``has_file`` false).

        The session closes before the first byte: a slow download holds no connection."""
        async with runtime.sessionmaker() as db:
            doc = await _document_in_kb(db, caller, kb_id, document_id)
        if not doc.storage_path:
            raise NotFound("This document keeps no original file (a synced document has none)")
        try:
            stream = await runtime.storage.open(doc.storage_path)
        except FileNotFoundError:
            raise NotFound("The document's original file is no longer stored") from None
        return StreamingResponse(
            aiter(stream),
            media_type="application/octet-stream",
            headers=download_headers(doc.filename),
        )

    return router
