"""What tests and benchmarks write straight to the database, past the API: a knowledge
base row, a document's tracking row, the stamp a document's chunks carry, and vectors to
write. Each is acme's (alice's organization) unless told otherwise; keyword arguments set
or replace any field."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

import numpy as np
from docproc_common.db.models import DocumentStatus, KnowledgeBase, RagDocument
from docproc_common.vectorstore import ChunkStamp

#: An uploaded text document's stamp; :func:`chunk_stamp` gives each its own base and id.
_UPLOADED_TEXT = ChunkStamp(
    knowledge_base_id=None,
    organization_id="acme",
    tracking_id=uuid.UUID(int=0),
    source="upload",
    document_type="txt",
    organizational_unit=None,
    document_date=None,
    source_path=None,
    filename="f.txt",
    content_hash=None,
    writer_kind="document",
)


def knowledge_base(name: str, **columns: Any) -> KnowledgeBase:
    """An organization base of alice's named ``name`` (its collection too); ``columns``:
    its ``embedding_provider``, ``embedding_model``, ``embedding_dim`` (and key or endpoint),
    and any other column to set."""
    defaults: dict[str, Any] = {
        "scope": "org",
        "owner_id": "alice",
        "organization_id": "acme",
        "ingestion_config": {},
    }
    return KnowledgeBase(name=name, collection_name=name, **{**defaults, **columns})


def tracking_row(
    collection_name: str,
    knowledge_base_id: uuid.UUID | None,
    filename: str,
    status: DocumentStatus = DocumentStatus.PROCESSING,
    **columns: Any,
) -> RagDocument:
    """The tracking row of ``filename`` (its type taken from the name) on base
    ``knowledge_base_id`` of ``collection_name``; a processing row waits for a fresh attempt
    (``attempt_id``)."""
    defaults: dict[str, Any] = {
        "organization_id": "acme",
        "filetype": filename.rsplit(".", 1)[-1],
    }
    if status == DocumentStatus.PROCESSING:
        defaults["attempt_id"] = uuid.uuid4()
    return RagDocument(
        collection_name=collection_name,
        knowledge_base_id=knowledge_base_id,
        filename=filename,
        status=status,
        **{**defaults, **columns},
    )


def chunk_stamp(knowledge_base_id: uuid.UUID | None, /, **fields: Any) -> ChunkStamp:
    """The stamp of an uploaded text document (``f.txt``) on base ``knowledge_base_id``,
    under a fresh tracking id; ``fields`` may replace the base too."""
    given = {"knowledge_base_id": knowledge_base_id, "tracking_id": uuid.uuid4(), **fields}
    return dataclasses.replace(_UPLOADED_TEXT, **given)


def unit_vectors(n: int, seed: int = 0, dim: int = 384) -> np.ndarray:
    """``n`` random unit vectors of ``dim`` (the local model's width), the same for a seed."""
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    out: np.ndarray = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out
