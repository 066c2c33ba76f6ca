"""The body of ``POST /rag/search`` and its answer."""

from __future__ import annotations

import uuid
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from docproc_upload.knowledge_bases.schemas import COLLECTION_NAME_SCHEMA

#: Values one filter may list, and the length of each: a filter is an ``= ANY`` of its
#: values, so its cost grows with them; the widest column a filter compares
#: (``organizational_unit``) holds 200 characters.
MAX_FILTER_VALUES = 100
FilterValue = Annotated[str, Field(max_length=200)]
FilterList = Annotated[list[FilterValue], Field(max_length=MAX_FILTER_VALUES)]
#: The longest query a search takes.
QUERY_CHARS = 10_000


class SearchFiltersIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: FilterList | None = None
    document_type: FilterList | None = None
    organizational_unit: FilterList | None = None
    date_from: date | None = None
    date_to: date | None = None
    parent_doc_id: uuid.UUID | None = None

    @field_validator("source", "document_type", "organizational_unit")
    @classmethod
    def _not_empty(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and not v:
            raise ValueError("an empty list matches nothing; leave the filter out instead")
        return v

    @field_validator("date_to")
    @classmethod
    def _a_range(cls, v: date | None, info: ValidationInfo) -> date | None:
        start = info.data.get("date_from")
        if v is not None and start is not None and v < start:
            raise ValueError("date_to is before date_from: the range holds no day")
        return v


class SearchRequest(BaseModel):
    """What to search: ``collections`` (names, each resolved to every base on it the caller
    reaches) or ``knowledge_base_ids`` (exactly those bases, as an agent bound to them
    searches), one of the two and never both."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=QUERY_CHARS)
    collections: list[Annotated[str, Field(json_schema_extra=COLLECTION_NAME_SCHEMA)]] | None = (
        Field(default=None, min_length=1, max_length=20)
    )
    knowledge_base_ids: list[uuid.UUID] | None = Field(
        default=None, min_length=1, max_length=20, validate_default=True
    )
    top_k: int = Field(default=5, ge=1, le=100)
    #: ``vector`` (cosine similarity), ``keyword`` (BM25 over any word of the query) or
    #: ``hybrid`` (both, their standard scores blended, ADR 0022; the default, ADR 0016). A
    #: search that names no mode is ``vector`` on a collection without a keyword index yet
    #: (docs/search.md).
    mode: Literal["vector", "keyword", "hybrid"] = "hybrid"
    #: The rerank stage (docs/search.md, "Reranking"): null (the default) reranks the
    #: collections whose base names a reranker and no other; ``true`` requires one of each
    #: collection searched (409 otherwise); ``false`` skips it.
    rerank: bool | None = None
    filters: SearchFiltersIn | None = None
    filter: str | None = None

    @field_validator("knowledge_base_ids")
    @classmethod
    def _one_selection(
        cls, v: list[uuid.UUID] | None, info: ValidationInfo
    ) -> list[uuid.UUID] | None:
        if "collections" not in info.data:  # collections itself was refused
            return v
        names = info.data["collections"]
        if v is not None and names is not None:
            raise ValueError(
                "give either collections (names) or knowledge_base_ids, not both: "
                "a name reaches every base on it, the ids only those bases"
            )
        if v is None and names is None:
            raise ValueError("give collections (names) or knowledge_base_ids to search")
        return v


class SearchHitLinks(BaseModel):
    """Where the hit's document is read, as paths under the API's root (docs/search.md,
    "Citing a hit"), through a knowledge base the search read that lists it."""

    download: str | None = Field(
        description="``GET`` the original file; null for a document that keeps none (only "
        "uploads keep theirs)"
    )
    parsed: str = Field(
        description="``GET`` the parsed view, page by page; ``#page=N`` names the hit's first "
        "page when the document has pages"
    )


class SearchHit(BaseModel):
    """A chunk that matched, and how to cite it. The citation fields are null for a chunk
    indexed before chunks recorded them, until its document is indexed again."""

    collection_name: str
    document_id: uuid.UUID | None
    vector_document_id: uuid.UUID
    chunk_no: int
    filename: str | None
    content: str
    score: float
    metadata: dict[str, Any]
    page_start: int | None = Field(
        description="The 1-based page the chunk begins on (formats with pages)"
    )
    page_end: int | None = Field(description="The page the chunk ends on")
    char_start: int | None = Field(
        description="Where the chunk begins in the text of page_start (of the document when "
        "it has no pages)",
    )
    char_end: int | None = Field(
        description="Where it ends, counted from the same place as char_start"
    )
    crosses_pages: bool | None = Field(description="Whether the chunk runs onto a later page")
    heading_path: list[str] | None = Field(
        description="The headings above the chunk, outermost first (empty where the parser "
        "saw none)",
    )
    links: SearchHitLinks | None = Field(
        description="The document's download and parsed view; null for a chunk of no document",
    )


class SearchResponse(BaseModel):
    results: list[SearchHit]
