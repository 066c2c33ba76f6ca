"""The bodies of the routes on a collection name."""

from __future__ import annotations

from pydantic import BaseModel, Field

from docproc_upload.knowledge_bases.schemas import (
    KB_NAME_CHARS,
    CollectionChoices,
    IngestionStatus,
)


class CollectionCreate(CollectionChoices):
    """``POST /rag/collections/{name}``: a knowledge base whose collection name is the path."""

    name: str | None = Field(default=None, max_length=KB_NAME_CHARS)


class CollectionInfo(IngestionStatus):
    collection_name: str
    total_vectors: int


class FilterValues(BaseModel):
    organizational_unit: list[str]
