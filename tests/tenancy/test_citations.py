"""Every search hit can be cited: through the real pipeline (in-process, embedded bus), a
hit on a two-page PDF names its pages, its offsets in the page text (which slice the page
back to the chunk), the outline above it and links that answer; a markdown file's hits name
their headings and offsets in the document. A collection indexed before citations answers
with the fields absent until its next write."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pymupdf
import pytest
from docproc_common.runtime import Runtime
from docproc_common.vectorstore import CITATION_COLUMNS
from sqlalchemy import text

from .conftest import Client
from .test_tenancy import EDIT, VIEW, create, uniq, wait_complete

pytestmark = pytest.mark.integration

API = "/api/v1"
CHUNKS = {"chunk_size": 300, "chunk_overlap": 30}
#: Cut at line ends only: the PDF's last lines of page 1 and first of page 2 make one chunk.
LINES = {**CHUNKS, "chunking_strategy": "fixed"}
#: Small enough to cut the guide into three chunks.
SECTIONS = {"chunk_size": 100, "chunk_overlap": 0}
PENGUINS = "Penguins live in Antarctica and swim very well in cold water. " * 9
CAPYBARAS = "Capybaras graze by South American rivers and swim in lakes. " * 6
GUIDE = """# Guide

Lighthouses guide ships along the coast at night.

## Keeping

### The lamp

The keeper trims the wick and winds the clockwork every evening before dusk.

## Logs

The keeper notes the fog, the wind and every ship that passes the reef.
"""
CITATION_FIELDS = ("page_start", "page_end", "char_start", "char_end", "crosses_pages")


def two_page_pdf() -> bytes:
    doc: Any = pymupdf.open()  # type: ignore[no-untyped-call]
    for body in (PENGUINS, CAPYBARAS):
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(50, 50, 550, 800), body, fontsize=11)
    doc.set_toc([[1, "Penguins", 1], [1, "Capybaras", 2]])
    data: bytes = doc.tobytes()
    return data


def pdf_pages(data: bytes) -> list[str]:
    """Each page's text as PyMuPDF reads it, independently of the parser."""
    doc: Any = pymupdf.open(stream=data, filetype="pdf")  # type: ignore[no-untyped-call]
    return [str(page.get_text()).strip("\n") for page in doc]


async def upload(
    c: httpx.AsyncClient, kb_id: str, name: str, data: bytes, chunks: dict[str, Any] = CHUNKS
) -> str:
    r = await c.post(
        f"/kb/{kb_id}/documents",
        files={"file": (name, data)},
        data={"ingestion": json.dumps(chunks)},
    )
    assert r.status_code == 202, r.text
    return str(r.json()["tracking_id"])


async def hits(c: httpx.AsyncClient, kb: dict[str, Any], query: str, doc: str) -> list[Any]:
    r = await c.post(
        "/rag/search",
        json={
            "query": query,
            "knowledge_base_ids": [kb["id"]],
            "top_k": 20,
            "filters": {"parent_doc_id": doc},
        },
    )
    assert r.status_code == 200, r.text
    found: list[Any] = r.json()["results"]
    assert found
    return found


async def parsed_text(c: httpx.AsyncClient, doc: str) -> str:
    r = await c.get(f"/rag/documents/{doc}")
    assert r.status_code == 200, r.text
    return str(r.json()["content"])


@pytest.fixture(scope="module")
async def world(client: Client) -> dict[str, Any]:
    org = f"org-{uuid.uuid4().hex[:6]}"
    alice = client("alice", org, (VIEW, EDIT))
    kb = await create(alice, uniq("cite"), "org")
    pdf = two_page_pdf()
    ids = {
        "atlas.pdf": await upload(alice, kb["id"], "atlas.pdf", pdf, LINES),
        "guide.md": await upload(alice, kb["id"], "guide.md", GUIDE.encode(), SECTIONS),
        "atlas-lite.pdf": await upload(
            alice, kb["id"], "atlas-lite.pdf", pdf, {**LINES, "parser": "liteparse"}
        ),
    }
    await wait_complete(alice, kb["id"])
    return {"org": org, "alice": alice, "kb": kb, "pdf": pdf, "ids": ids}


async def test_a_pdf_hit_names_its_pages_offsets_outline_and_links(
    client: Client, world: dict[str, Any]
) -> None:
    viewer = client("vera", world["org"], (VIEW,))
    kb, doc = world["kb"], world["ids"]["atlas.pdf"]
    found = await hits(viewer, kb, "capybaras rivers and lakes", doc)
    pages = pdf_pages(world["pdf"])
    whole = await parsed_text(viewer, doc)
    assert whole == "\n\n".join(pages)  # the parsed text: the pages joined by a blank line
    page_offsets = [0, len(pages[0]) + 2]
    for hit in found:
        start = hit["page_start"]
        origin = page_offsets[start - 1]
        assert whole[origin + hit["char_start"] : origin + hit["char_end"]] == hit["content"]
        if not hit["crosses_pages"]:
            assert pages[start - 1][hit["char_start"] : hit["char_end"]] == hit["content"]
        base = f"{API}/kb/{kb['id']}/documents/{doc}"
        assert hit["links"] == {
            "download": f"{base}/download",
            "parsed": f"{base}/parsed#page={start}",
        }
    in_order = sorted(found, key=lambda h: h["chunk_no"])
    assert [(h["page_start"], h["page_end"], h["crosses_pages"]) for h in in_order] == [
        (1, 1, False),
        (1, 1, False),
        (1, 2, True),  # the last lines of page 1 and the first of page 2
        (2, 2, False),
    ]
    assert [h["heading_path"] for h in in_order] == [["Penguins"]] * 3 + [["Capybaras"]]
    crossing = in_order[2]
    assert crossing["char_end"] > len(pages[0])  # counted from page 1, across the blank line
    assert pages[1].startswith(crossing["content"].split("\n\n")[1])
    top = found[0]

    # the links answer: the original, and the parsed view whose page holds the chunk
    download = await viewer.get(top["links"]["download"].removeprefix(API))
    assert download.status_code == 200 and download.content == world["pdf"]
    parsed_url, page = top["links"]["parsed"].removeprefix(API).split("#page=")
    parsed = await viewer.get(parsed_url)
    assert parsed.status_code == 200, parsed.text
    assert top["content"] in parsed.json()["pages"][int(page) - 1]["chunks"]


async def test_a_pdf_read_by_liteparse_names_its_pages_too(world: dict[str, Any]) -> None:
    alice, kb, doc = world["alice"], world["kb"], world["ids"]["atlas-lite.pdf"]
    assert (await alice.get(f"/rag/documents/{doc}")).json()["parser"] == "liteparse"
    found = await hits(alice, kb, "capybaras rivers and lakes", doc)
    parsed = await alice.get(f"/kb/{kb['id']}/documents/{doc}/parsed")
    assert parsed.status_code == 200, parsed.text
    pages = parsed.json()["pages"]
    assert len(pages) == 2
    for hit in found:
        assert hit["links"]["parsed"].endswith(f"#page={hit['page_start']}")
        assert hit["content"] in pages[hit["page_start"] - 1]["chunks"]
    in_order = sorted(found, key=lambda h: h["chunk_no"])
    assert (in_order[0]["page_start"], in_order[-1]["page_end"]) == (1, 2)
    assert "Capybaras" in in_order[-1]["content"] and "Penguins" in in_order[0]["content"]


async def test_a_markdown_hit_names_its_headings_and_offsets_in_the_document(
    world: dict[str, Any],
) -> None:
    alice, kb, doc = world["alice"], world["kb"], world["ids"]["guide.md"]
    found = await hits(alice, kb, "keeper trims the wick", doc)
    whole = await parsed_text(alice, doc)
    for hit in found:
        assert (hit["page_start"], hit["page_end"], hit["crosses_pages"]) == (None, None, False)
        assert whole[hit["char_start"] : hit["char_end"]] == hit["content"]
        assert hit["links"]["parsed"] == f"{API}/kb/{kb['id']}/documents/{doc}/parsed"
    in_order = sorted(found, key=lambda h: h["chunk_no"])
    assert [h["content"].split("\n")[0] for h in in_order] == [
        "# Guide",
        "The keeper trims the wick and winds the clockwork every evening before dusk.",
        "The keeper notes the fog, the wind and every ship that passes the reef.",
    ]
    assert [h["heading_path"] for h in in_order] == [
        ["Guide"],
        ["Guide", "Keeping", "The lamp"],  # the headings above where the chunk begins
        ["Guide", "Logs"],
    ]


async def test_a_collection_indexed_before_answers_without_citations_until_reindexed(
    client: Client, runtime: Runtime
) -> None:
    org = f"org-{uuid.uuid4().hex[:6]}"
    alice = client("alice", org, (VIEW, EDIT))
    kb = await create(alice, uniq("before"), "org")
    old = await upload(alice, kb["id"], "old.txt", b"Harbour tide tables for the spring.")
    await wait_complete(alice, kb["id"])
    # the table as an embedder before citations left it: no citation columns at all
    async with runtime.sessionmaker() as s, s.begin():
        dropped = ", ".join(f"DROP COLUMN {c}" for c in CITATION_COLUMNS)
        await s.execute(text(f"ALTER TABLE rag_{kb['collection_name']} {dropped}"))

    (hit,) = await hits(alice, kb, "harbour tides", old)
    assert all(hit[f] is None for f in (*CITATION_FIELDS, "heading_path"))
    assert hit["content"] == "Harbour tide tables for the spring."
    assert hit["links"]["download"].endswith(f"/documents/{old}/download")  # links need none

    # its next write gives the table the columns: new chunks are cited, old ones stay absent
    new = await upload(alice, kb["id"], "new.txt", b"Harbour charts for the autumn.")
    await wait_complete(alice, kb["id"])
    (cited,) = await hits(alice, kb, "harbour charts", new)
    assert (cited["char_start"], cited["char_end"], cited["crosses_pages"]) == (0, 30, False)
    assert cited["heading_path"] == []
    (still,) = await hits(alice, kb, "harbour charts", old)
    assert all(still[f] is None for f in (*CITATION_FIELDS, "heading_path"))
