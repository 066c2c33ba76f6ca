"""``GET /rag/supported-formats`` and ``GET /rag/documents/{id}``: what can be ingested, what was read.

No ``from __future__ import annotations`` here: FastAPI must see the closure-local
dependency aliases as objects, not strings.

* The supported formats are the routing table of ``docproc_common.processor`` as it
  stands on this server (LibreOffice present or not), the very table the upload path
  refuses by, so an extension listed here is one an upload accepts and the parser
  routes.
* A document's parsed content view: its tracking row, whether an original is kept
  (``has_file``: an upload keeps one under ``rag/{collection}/``, a synced document
  does not), and the parsed text as stored by the parser. Access is the collection's:
  a document the caller may not view answers the same 404 as one that does not exist.
"""

import uuid
from typing import Annotated, Literal

from docproc_common.access import Access
from docproc_common.auth import Principal, principal_from_header
from docproc_common.processor import (
    BUILTIN_FORMATS,
    PARSERS,
    supported_formats,
    unavailable_formats,
)
from docproc_common.runtime import Runtime
from fastapi import APIRouter, Depends, Header, Query
from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.collections import document_for, document_out
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

    return router
