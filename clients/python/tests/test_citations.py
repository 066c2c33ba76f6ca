"""``cite`` and ``citation_metadata`` on hits the server could give (no server needed): pages
across a boundary, headings, neither (a chunk indexed before citations), no document."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from docproc_client import Docproc, citation_metadata, cite
from docproc_client.generated.models import SearchHit

DOC = "5b0e0000-0000-0000-0000-000000000001"


def hit(**fields: Any) -> SearchHit:
    base: dict[str, Any] = {
        "collection_name": "handbook",
        "document_id": DOC,
        "vector_document_id": str(uuid.uuid4()),
        "chunk_no": 7,
        "filename": "handbook.pdf",
        "content": "...",
        "score": 0.5,
        "metadata": {"source": "upload", "document_type": "pdf"},
        "page_start": None,
        "page_end": None,
        "char_start": None,
        "char_end": None,
        "crosses_pages": None,
        "heading_path": None,
        "links": None,
    }
    return SearchHit.from_dict({**base, **fields})


@pytest.mark.parametrize(
    ("fields", "cited"),
    [
        ({"page_start": 3, "page_end": 4, "crosses_pages": True}, "handbook.pdf, pp. 3-4"),
        ({"page_start": 3, "page_end": 3, "heading_path": ["Leave"]}, "handbook.pdf, p. 3"),
        ({"heading_path": ["Leave", "Holidays"]}, "handbook.pdf, Leave > Holidays"),
        ({"heading_path": []}, "handbook.pdf, chunk 7"),
        ({}, "handbook.pdf, chunk 7"),  # indexed before citations
        ({"filename": None, "document_id": None}, None),  # a chunk of no document
    ],
)
def test_cite(fields: dict[str, Any], cited: str | None) -> None:
    found = hit(**fields)
    assert cite(found) == (cited or f"{found.vector_document_id}, chunk 7")


def test_the_metadata_is_flat_and_its_links_absolute() -> None:
    links = {
        "download": f"/api/v1/kb/k/documents/{DOC}/download",
        "parsed": f"/api/v1/kb/k/documents/{DOC}/parsed#page=3",
    }
    found = hit(page_start=3, page_end=4, crosses_pages=True, heading_path=[], links=links)
    meta = citation_metadata(found, "https://example.com/docproc/")  # a gateway's prefix
    assert meta["parsed_url"] == f"https://example.com/docproc{links['parsed']}"
    assert meta["download_url"] == f"https://example.com/docproc{links['download']}"
    assert (meta["document_id"], meta["page_start"], meta["page_end"]) == (DOC, 3, 4)
    assert (meta["source"], meta["citation"], meta["heading_path"]) == (
        "upload",
        "handbook.pdf, pp. 3-4",
        [],
    )
    bare = citation_metadata(hit(links=None, document_id=None), "http://x")
    assert (bare["document_id"], bare["download_url"], bare["parsed_url"]) == (None, None, None)


def test_a_token_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DOCPROC_TOKEN", raising=False)
    with pytest.raises(ValueError, match="DOCPROC_TOKEN"):
        Docproc.from_env()
