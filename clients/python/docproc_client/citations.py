"""How a search hit is cited (docs/search.md, "Citing a hit"): a short reference for a
person, and the flat metadata the framework retrievers put on each document or node."""

from __future__ import annotations

from typing import Any

from docproc_client.generated.models.search_hit import SearchHit


def cite(hit: SearchHit) -> str:
    """``atlas.pdf, p. 2``, ``atlas.pdf, pp. 2-3``, ``handbook.md, Leave > Holidays``, or
    the file and chunk number where the hit has neither pages nor headings (a chunk indexed
    before citations, until its document is indexed again)."""
    name = hit.filename or str(hit.document_id or hit.vector_document_id)
    if hit.page_start is not None:
        end = hit.page_end if hit.page_end is not None else hit.page_start
        return (
            f"{name}, p. {hit.page_start}"
            if end == hit.page_start
            else f"{name}, pp. {hit.page_start}-{end}"
        )
    if hit.heading_path:
        return f"{name}, {' > '.join(hit.heading_path)}"
    return f"{name}, chunk {hit.chunk_no}"


def absolute(base_url: str, link: str | None) -> str | None:
    """A hit's link (a path under the API's root) as a URL of the deployment at ``base_url``
    (which may itself carry a path, a gateway's prefix)."""
    return None if link is None else base_url.rstrip("/") + link


def citation_metadata(hit: SearchHit, base_url: str) -> dict[str, Any]:
    """The hit's metadata (``source``, ``document_type``, ``organizational_unit``,
    ``document_date``) and its citation, flat: ``document_id``, ``filename``,
    ``collection_name``, ``chunk_no``, ``score``, ``page_start``, ``page_end``,
    ``crosses_pages``, ``char_start``, ``char_end``, ``heading_path``, ``download_url`` and
    ``parsed_url`` (absolute; ``parsed_url`` ends with ``#page=N`` for a document with
    pages), and ``citation`` (``cite``). A field the hit lacks is ``None``."""
    links = hit.links
    return {
        **hit.metadata.to_dict(),
        "document_id": None if hit.document_id is None else str(hit.document_id),
        "filename": hit.filename,
        "collection_name": hit.collection_name,
        "chunk_no": hit.chunk_no,
        "score": hit.score,
        "page_start": hit.page_start,
        "page_end": hit.page_end,
        "crosses_pages": hit.crosses_pages,
        "char_start": hit.char_start,
        "char_end": hit.char_end,
        "heading_path": None if hit.heading_path is None else list(hit.heading_path),
        "download_url": absolute(base_url, links.download) if links else None,
        "parsed_url": absolute(base_url, links.parsed) if links else None,
        "citation": cite(hit),
    }
