"""A ranked chunk as ``POST /rag/search`` answers it: the chunk, its score, and how to cite
it (its citation, ``docproc_common.citations``, and links to its document).

The links are the knowledge-base routes of the document (``GET /kb/{kb_id}/documents/{id}/
download`` and ``.../parsed``), through the searched base that lists it: the chunk's own
base; for an organization's unfiled chunk, a searched base of that organization (never an
app-scoped one); for the operator's content, a searched app-scoped base, the bases that
adopt it (``vectorstore.scope_sql`` reads the same).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from docproc_common.db.models import KnowledgeBase, Scope
from docproc_common.documents import UPLOAD_SOURCE

from docproc_upload.search.repository import Hit
from docproc_upload.search.schemas import SearchHit, SearchHitLinks

API_ROOT = "/api/v1"


def listing_base(hit: Hit, kbs: Sequence[KnowledgeBase]) -> uuid.UUID | None:
    """The searched base that lists the hit's document (the module's docstring)."""
    if hit.knowledge_base_id is not None:
        return hit.knowledge_base_id
    for kb in kbs:
        if hit.organization_id is None:
            if kb.scope == Scope.APP:
                return kb.id
        elif kb.scope != Scope.APP and kb.organization_id == hit.organization_id:
            return kb.id
    return None


def links(hit: Hit, kbs: Sequence[KnowledgeBase]) -> SearchHitLinks | None:
    """The document's download (an upload's only: nothing else keeps its original) and its
    parsed view at the hit's first page; None for a chunk of no document."""
    kb_id = listing_base(hit, kbs)
    if hit.tracking_id is None or kb_id is None:
        return None
    document = f"{API_ROOT}/kb/{kb_id}/documents/{hit.tracking_id}"
    page = hit.citation.page_start if hit.citation else None
    return SearchHitLinks(
        download=f"{document}/download" if hit.metadata.get("source") == UPLOAD_SOURCE else None,
        parsed=f"{document}/parsed" + (f"#page={page}" if page is not None else ""),
    )


def search_hit(collection: str, hit: Hit, kbs: Sequence[KnowledgeBase]) -> SearchHit:
    """The hit as the API answers it; its citation fields null when it has none."""
    cited = hit.citation
    return SearchHit(
        collection_name=collection,
        document_id=hit.tracking_id,
        vector_document_id=hit.document_id,
        chunk_no=hit.chunk_no,
        filename=hit.filename,
        content=hit.content,
        score=hit.score,
        metadata=hit.metadata,
        page_start=cited.page_start if cited else None,
        page_end=cited.page_end if cited else None,
        char_start=cited.char_start if cited else None,
        char_end=cited.char_end if cited else None,
        crosses_pages=cited.crosses_pages if cited else None,
        heading_path=list(cited.heading_path) if cited else None,
        links=links(hit, kbs),
    )
