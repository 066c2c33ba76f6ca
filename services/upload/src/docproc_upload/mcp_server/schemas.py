"""What the MCP tools take and answer, beside the route bodies they reuse as they are
(``SearchRequest``/``SearchResponse``, ``ChunkContext``, ``RAGIngestResponse``)."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from docproc_upload.knowledge_bases.schemas import IngestionStatus
from docproc_upload.rag_documents.schemas import ParsedPage
from docproc_upload.rag_documents.service import MAX_CHUNK_NO, MAX_NEIGHBOURS, MAX_UNIT_CHARS

#: The most characters of parsed text one ``read_document`` call answers.
MAX_READ_CHARS = 100_000


class NoArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


class KnowledgeBaseSummary(BaseModel):
    id: uuid.UUID
    name: str
    collection_name: str
    scope: str
    #: One line an agent chooses bases by: the scope, the collection, what is indexed.
    description: str
    embedding_model: str
    created_at: datetime
    status: IngestionStatus


class KnowledgeBaseList(BaseModel):
    knowledge_bases: list[KnowledgeBaseSummary]


class ReadDocumentArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    document_id: uuid.UUID = Field(description="A search hit's document_id")
    page: int | None = Field(
        default=None,
        ge=1,
        le=MAX_CHUNK_NO,
        description="A page the parser read (from 1): its chunks. Leave out to read the "
        "parsed text from offset instead",
    )
    offset: int = Field(default=0, ge=0, description="Where the text window starts")
    limit: int = Field(
        default=20_000, ge=1, le=MAX_READ_CHARS, description="Characters of text to read"
    )


class DocumentRead(BaseModel):
    """One window of a document's parsed text (no ``page`` asked), or one of its pages."""

    document_id: uuid.UUID
    knowledge_base_id: uuid.UUID | None
    filename: str
    status: str
    #: The parsed text from ``content_offset``; None until the document is parsed.
    content: str | None = None
    content_offset: int | None = None
    #: Characters of parsed text in all.
    content_length: int | None = None
    #: The ``offset`` that reads on; None at the end of the text.
    next_offset: int | None = None
    #: The page asked for: the chunks that begin on it (chunks overlap a little).
    page: ParsedPage | None = None
    #: The pages the parser read (1 for a document read as one, like plain text).
    page_count: int | None = None


class ChunkContextArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    document_id: uuid.UUID = Field(description="A search hit's document_id")
    chunk_no: int = Field(ge=0, le=MAX_CHUNK_NO, description="A search hit's chunk_no")
    before: int = Field(default=2, ge=0, le=MAX_NEIGHBOURS, description="Chunks ahead of it")
    after: int = Field(default=2, ge=0, le=MAX_NEIGHBOURS, description="Chunks behind it")


class UploadTextArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    knowledge_base_id: uuid.UUID = Field(description="A knowledge base the caller may edit")
    filename: str = Field(
        min_length=4,
        max_length=255,
        pattern=r"\.(md|txt|MD|TXT)$",
        description="The document's file name, ending .md (Markdown) or .txt",
    )
    text: str = Field(min_length=1, description="The document's text")
    organizational_unit: str | None = Field(default=None, max_length=MAX_UNIT_CHARS)
    document_date: str | None = Field(
        default=None, description="The document's own date, YYYY-MM-DD (search filters on it)"
    )
    replace: bool = Field(
        default=False,
        description="Once indexed, retire the base's earlier documents of this file name",
    )
