"""What tests and benchmarks write straight to the database, past the API: the stamp a
document's chunks carry. Each is acme's (alice's organization) unless told otherwise;
keyword arguments set or replace any field."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

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


def chunk_stamp(knowledge_base_id: uuid.UUID | None, /, **fields: Any) -> ChunkStamp:
    """The stamp of an uploaded text document (``f.txt``) on base ``knowledge_base_id``,
    under a fresh tracking id; ``fields`` may replace the base too."""
    given = {"knowledge_base_id": knowledge_base_id, "tracking_id": uuid.uuid4(), **fields}
    return dataclasses.replace(_UPLOADED_TEXT, **given)
