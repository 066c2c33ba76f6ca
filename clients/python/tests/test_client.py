"""``Docproc`` against a running docproc: uploads, pagination, search with citations,
reading around a hit, and refusals as ``DocprocError`` with the envelope's fields."""

from __future__ import annotations

import pytest
from docproc_client import Docproc, DocprocError, cite
from docproc_client.generated.api.search import search
from docproc_client.generated.models import ErrorEnvelope, SearchRequest, SearchResponse

from .conftest import PAGES, World


def test_the_documents_are_listed_page_by_page(docproc: Docproc, world: World) -> None:
    listed = list(docproc.documents(world.base.id, page_size=1))  # three pages of one
    assert sorted(d.filename for d in listed) == ["atlas.pdf", "keeper.md", "log.txt"]
    assert {str(d.id) for d in listed} == set(world.documents.values())
    assert {d.status for d in listed} == {"done"}


def test_a_hit_names_its_page_and_its_links_read_it(docproc: Docproc, world: World) -> None:
    hits = docproc.search("tide tables for the harbour", knowledge_bases=[world.base.id], top_k=3)
    best = hits[0]
    assert (best.filename, best.page_start, best.page_end) == ("atlas.pdf", 2, 2)
    assert str(best.document_id) == world.documents["atlas.pdf"]
    assert cite(best) == "atlas.pdf, p. 2"
    assert best.links is not None and best.links.parsed.endswith("#page=2")

    parsed = docproc.parsed(world.base.id, world.documents["atlas.pdf"])
    assert [p.page_num for p in parsed.pages] == [1, 2]
    assert PAGES[1] in " ".join(parsed.pages[1].chunks)
    assert docproc.download(world.base.id, world.documents["atlas.pdf"]) == world.pdf
    around = docproc.chunk_context(world.documents["atlas.pdf"], best.chunk_no, before=1)
    assert [c.chunk_no for c in around.chunks] == [best.chunk_no - 1, best.chunk_no]

    note = docproc.search("holiday days a year", collections=[world.base.collection_name])[0]
    assert (note.filename, note.heading_path) == ("keeper.md", ["Leave", "Holidays"])
    assert cite(note) == "keeper.md, Leave > Holidays"
    assert note.page_start is None


def test_the_generated_operations_take_the_same_client(docproc: Docproc, world: World) -> None:
    answer = search.sync(
        client=docproc.api,
        body=SearchRequest(query="lighthouse", knowledge_base_ids=[world.base.id], top_k=1),
    )
    assert isinstance(answer, SearchResponse)
    assert answer.results[0].collection_name == world.base.collection_name
    refused = search.sync(client=docproc.api, body=SearchRequest(query="x", collections=["nope"]))
    assert isinstance(refused, ErrorEnvelope)


def test_refusals_raise_the_envelope(docproc: Docproc, other: Docproc, world: World) -> None:
    with pytest.raises(DocprocError) as bad:
        docproc.create_knowledge_base("Bad chunks", ingestion_config={"chunk_size": -1})
    assert (bad.value.status_code, bad.value.code) == (422, "VALIDATION_ERROR")
    assert list(bad.value.fields) == ["ingestion_config.chunk_size"]

    # another organisation's base is absent to bob, by id and in search
    with pytest.raises(DocprocError) as absent:
        other.knowledge_base(world.base.id)
    assert (absent.value.status_code, absent.value.message) == (404, "Collection not found")
    with pytest.raises(DocprocError) as searched:
        other.search("lighthouse", knowledge_bases=[world.base.id])
    assert searched.value.status_code == 404
    with pytest.raises(DocprocError) as upload:
        other.upload_text(world.base.id, "a note", filename="intruder.md")
    assert upload.value.status_code == 404
    assert "intruder.md" not in {d.filename for d in docproc.documents(world.base.id)}
