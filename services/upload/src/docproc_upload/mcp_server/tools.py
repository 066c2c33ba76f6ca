"""The tools, each the service calls of its matching route (named on each) with the
route's caller and the route's transactions; ``server`` lists them and calls them."""

from __future__ import annotations

import mimetypes
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from docproc_common.auth import Principal
from docproc_common.db.models import KnowledgeBase
from docproc_common.errors import FieldError, InvalidInput
from docproc_common.storage import clean_filename
from mcp_types import ToolAnnotations
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.access import Access, list_reachable
from docproc_upload.deps import Upload
from docproc_upload.knowledge_bases.service import status_for
from docproc_upload.mcp_server.schemas import (
    ChunkContextArgs,
    DocumentRead,
    KnowledgeBaseList,
    KnowledgeBaseSummary,
    NoArguments,
    ReadDocumentArgs,
    UploadTextArgs,
)
from docproc_upload.rag_documents import service as documents
from docproc_upload.rag_documents.ingest import ingest_file
from docproc_upload.rag_documents.schemas import ChunkContext, RAGIngestResponse
from docproc_upload.search import service as searching
from docproc_upload.search.schemas import SearchRequest, SearchResponse

Call = Callable[[Upload, Principal, Any], Awaitable[BaseModel]]


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str
    arguments: type[BaseModel]
    answer: type[BaseModel]
    call: Call
    read_only: bool = True

    def hints(self) -> ToolAnnotations:
        return ToolAnnotations(
            read_only_hint=self.read_only, destructive_hint=False, open_world_hint=False
        )


async def summary(session: AsyncSession, kb: KnowledgeBase) -> KnowledgeBaseSummary:
    """A base the caller reaches with its status (``GET /kb/{id}/ingestion``)."""
    status = await status_for(session, kb.collection_name, [kb])
    counts = f"{status.indexed_count} of {status.document_count} documents indexed"
    if status.processing_count:
        counts += f", {status.processing_count} processing"
    if status.failed_count:
        counts += f", {status.failed_count} failed"
    return KnowledgeBaseSummary(
        id=kb.id,
        name=kb.name,
        collection_name=kb.collection_name,
        scope=kb.scope,
        description=f"{kb.scope} knowledge base '{kb.name}' on collection "
        f"{kb.collection_name}: {counts}",
        embedding_model=kb.embedding_model,
        created_at=kb.created_at,
        status=status,
    )


async def list_knowledge_bases(upload: Upload, caller: Principal, _: NoArguments) -> BaseModel:
    """``GET /kb``, each base with ``GET /kb/{id}/ingestion``."""
    async with upload.runtime.sessionmaker() as db:
        return KnowledgeBaseList(
            knowledge_bases=[await summary(db, kb) for kb in await list_reachable(db, caller)]
        )


async def search(upload: Upload, caller: Principal, args: SearchRequest) -> BaseModel:
    """``POST /rag/search``."""
    hits = await searching.search(upload.runtime, upload.clients, caller, args, upload.plans)
    return SearchResponse(results=hits)


async def read_document(upload: Upload, caller: Principal, args: ReadDocumentArgs) -> BaseModel:
    """A window of the parsed text, ``GET /rag/documents/{id}``; or one page of it, ``GET
    /kb/{kb_id}/documents/{id}/parsed`` through the document's own base."""
    async with upload.runtime.sessionmaker() as db:
        if args.page is None:
            text = await documents.parsed_document(
                db,
                upload.runtime.storage,
                caller,
                args.document_id,
                offset=args.offset,
                limit=args.limit,
            )
            end = args.offset + len(text.content or "")
            return DocumentRead(
                document_id=text.id,
                knowledge_base_id=text.knowledge_base_id,
                filename=text.filename,
                status=text.status,
                content=text.content,
                content_offset=text.content_offset,
                content_length=text.content_length,
                next_offset=end if text.content_truncated else None,
            )
        doc = await documents.document_for(db, caller, args.document_id, Access.VIEW)
        if doc.knowledge_base_id is None:
            raise InvalidInput(
                "This document is in no knowledge base, so it has no pages here; read its "
                "text with offset and limit instead"
            )
        pages = await documents.parsed_pages(db, caller, doc.knowledge_base_id, doc.id)
    if args.page > len(pages.pages):
        raise InvalidInput(
            f"The document has {len(pages.pages)} pages",
            fields=[FieldError("page", f"at most {len(pages.pages)}")],
        )
    return DocumentRead(
        document_id=pages.document_id,
        knowledge_base_id=pages.knowledge_base_id,
        filename=pages.filename,
        status=doc.status,
        page=pages.pages[args.page - 1],
        page_count=len(pages.pages),
    )


async def get_chunk_context(upload: Upload, caller: Principal, args: ChunkContextArgs) -> BaseModel:
    """``GET /rag/documents/{id}/chunks``."""
    async with upload.runtime.sessionmaker() as db:
        return await documents.chunk_context(
            db, caller, args.document_id, args.chunk_no, before=args.before, after=args.after
        )


async def upload_text(upload: Upload, caller: Principal, args: UploadTextArgs) -> BaseModel:
    """``POST /kb/{kb_id}/documents`` with the text as its file."""
    await upload.intake.admit()
    filename = clean_filename(args.filename)
    incoming = documents.IncomingFile(
        filename, args.text.encode(), mimetypes.guess_type(filename)[0] or "text/plain"
    )
    async with upload.runtime.sessionmaker() as db:
        return await ingest_file(
            db,
            upload,
            caller,
            args.knowledge_base_id,
            incoming,
            organizational_unit=args.organizational_unit,
            document_date=args.document_date,
            replace=args.replace,
        )


TOOLS: dict[str, Tool] = {
    t.name: t
    for t in (
        Tool(
            "list_knowledge_bases",
            "The knowledge bases you can read: each one's id, name, collection, scope, a "
            "one-line description and its indexing status. Search them by id or by "
            "collection name.",
            NoArguments,
            KnowledgeBaseList,
            list_knowledge_bases,
        ),
        Tool(
            "search",
            "Search knowledge bases for chunks that answer a query: give knowledge_base_ids "
            "(from list_knowledge_bases) or collections (names), never both. mode: hybrid "
            "(meaning and words, the default), vector (meaning) or keyword (words, BM25). "
            "Each hit cites its "
            "document (document_id, filename) and chunk (chunk_no): read around it with "
            "get_chunk_context, or the document with read_document.",
            SearchRequest,
            SearchResponse,
            search,
        ),
        Tool(
            "read_document",
            "Read a document's parsed text: a window of up to limit characters from offset "
            "(follow next_offset for the rest), or, with page, the chunks of one page the "
            "parser read (page_count says how many there are).",
            ReadDocumentArgs,
            DocumentRead,
            read_document,
        ),
        Tool(
            "get_chunk_context",
            "A search hit's chunk with the chunks around it (before and after), for more "
            "context than the hit holds.",
            ChunkContextArgs,
            ChunkContext,
            get_chunk_context,
        ),
        Tool(
            "upload_text",
            "Add a text (a note, Markdown or plain) to a knowledge base you may edit, as a "
            "document of the given file name. It is parsed and indexed in the background: "
            "read_document with its tracking_id says its status (searchable once done).",
            UploadTextArgs,
            RAGIngestResponse,
            upload_text,
            read_only=False,
        ),
    )
}
