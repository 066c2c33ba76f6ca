"""The retrievers through the frameworks' own interfaces: LangChain's ``invoke`` and
``ainvoke``, LlamaIndex's ``retrieve`` and ``aretrieve``; each hit's citation in the
document's or node's metadata."""

from __future__ import annotations

import asyncio

from docproc_client import Docproc
from docproc_client.integrations.langchain import DocprocRetriever as LangChainRetriever
from docproc_client.integrations.llamaindex import DocprocRetriever as LlamaIndexRetriever
from langchain_core.documents import Document
from llama_index.core.schema import MetadataMode, NodeWithScore

from .conftest import PAGES, World


def test_langchain_retriever(docproc: Docproc, world: World) -> None:
    retriever = LangChainRetriever(client=docproc, knowledge_bases=[world.base.name], top_k=2)
    docs = retriever.invoke("tide tables for the harbour")
    # at most top_k (the server's recall is tests/tenancy's to judge, not the adapter's)
    assert 1 <= len(docs) <= 2 and all(isinstance(d, Document) for d in docs)
    best = docs[0]
    assert best.page_content.strip() == PAGES[1]
    meta = best.metadata
    assert (meta["filename"], meta["page_start"], meta["page_end"]) == ("atlas.pdf", 2, 2)
    assert meta["document_id"] == world.documents["atlas.pdf"]
    assert meta["citation"] == "atlas.pdf, p. 2"
    assert meta["parsed_url"].startswith(f"{docproc.base_url}/api/v1/kb/{world.base.id}/")
    assert meta["parsed_url"].endswith("#page=2")
    assert meta["download_url"].endswith(f"/documents/{world.documents['atlas.pdf']}/download")
    assert meta["heading_path"] == []

    by_collection = LangChainRetriever(
        client=docproc, collections=[world.base.collection_name], mode="keyword", top_k=1
    )
    (note,) = asyncio.run(by_collection.ainvoke("holiday"))
    assert (note.metadata["filename"], note.metadata["heading_path"]) == (
        "keeper.md",
        ["Leave", "Holidays"],
    )
    assert note.metadata["page_start"] is None


def test_llamaindex_retriever(docproc: Docproc, world: World) -> None:
    retriever = LlamaIndexRetriever(docproc, knowledge_bases=[str(world.base.id)], top_k=2)
    found = retriever.retrieve("tide tables for the harbour")
    assert 1 <= len(found) <= 2 and all(isinstance(f, NodeWithScore) for f in found)
    best = found[0]
    assert best.score is not None and best.score == max(f.score or 0 for f in found)
    assert best.node.get_content().strip() == PAGES[1]
    assert best.node.ref_doc_id == world.documents["atlas.pdf"]
    meta = best.node.metadata
    assert (meta["filename"], meta["page_start"], meta["citation"]) == (
        "atlas.pdf",
        2,
        "atlas.pdf, p. 2",
    )
    assert meta["parsed_url"].endswith("#page=2")
    shown = best.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "citation: atlas.pdf, p. 2" in shown and "parsed_url" not in shown
    assert "heading_path" not in shown  # empty: a PDF without an outline

    (note,) = asyncio.run(
        LlamaIndexRetriever(docproc, collections=[world.base.collection_name], top_k=1).aretrieve(
            "how many days of holiday?"
        )
    )
    assert note.node.metadata["heading_path"] == ["Leave", "Holidays"]
    assert note.node.ref_doc_id == world.documents["keeper.md"]
