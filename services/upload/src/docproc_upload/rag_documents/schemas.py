"""The bodies of the document routes."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field


class RAGIngestResponse(BaseModel):
    """The same shape from both upload addresses, ``document_id: null`` included."""

    status: Literal["processing"] = "processing"
    message: str
    filename: str
    collection_name: str
    tracking_id: uuid.UUID
    document_id: uuid.UUID | None = None


class DocumentOut(BaseModel):
    id: uuid.UUID
    collection_name: str
    knowledge_base_id: uuid.UUID | None
    filename: str
    filesize: int
    filetype: str
    status: str
    error_message: str | None
    chunk_count: int
    source: str
    source_path: str | None
    #: The sha256 (hex) of the stored bytes: an upload's and a synced file's, so a client
    #: can tell what the base already holds (``docproc ingest``'s resume); None on rows
    #: uploaded before uploads recorded it.
    content_hash: str | None
    organizational_unit: str | None
    has_file: bool
    created_at: datetime
    completed_at: datetime | None


class DocumentPage(BaseModel):
    items: list[DocumentOut]
    total: int
    next_cursor: str | None


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


class Chunk(BaseModel):
    chunk_no: int
    content: str


class ChunkContext(BaseModel):
    """A chunk of a document (a search hit's ``chunk_no``) and its neighbours, in order."""

    document_id: uuid.UUID
    knowledge_base_id: uuid.UUID | None
    collection_name: str
    filename: str
    #: The chunk asked about; ``chunks`` holds it and those around it that exist.
    chunk_no: int
    chunk_count: int
    chunks: list[Chunk]
