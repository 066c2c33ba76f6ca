"""One document through its knowledge base: its original file and its parsed pages.

In-process API on the embedded bus with the five services, so a document really is
parsed, embedded and indexed before it is read back.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import unquote

import httpx
import pymupdf
import pytest
from docproc_common.runtime import Runtime

from .conftest import Client
from .test_tenancy import EDIT, NOT_FOUND, VIEW, create, uniq, wait_complete

pytestmark = pytest.mark.integration

NOT_IN_KB = {
    "error": {
        "code": "NOT_FOUND",
        "message": "Document not found in this knowledge base",
        "details": {},
    }
}
HOSTILE = "informe año; filename=evil.html.txt"  # quotes and CR/LF: test_downloads.py


def three_page_pdf() -> bytes:
    doc: Any = pymupdf.open()  # type: ignore[no-untyped-call]
    long = "Penguins live in Antarctica and swim very well. " * 40
    for text in (long, "", "Capybaras live in South America."):
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(50, 50, 550, 800), text, fontsize=11)
    data: bytes = doc.tobytes()
    return data


async def documents(c: httpx.AsyncClient, kb_id: str) -> dict[str, dict[str, Any]]:
    items = (await c.get(f"/kb/{kb_id}/documents")).json()["items"]
    return {d["filename"]: d for d in items}


@pytest.fixture(scope="module")
async def world(client: Client) -> dict[str, Any]:
    org = f"org-{uuid.uuid4().hex[:6]}"
    alice = client("alice", org, (VIEW, EDIT))
    kb = await create(alice, uniq("docs"), "org")
    other = await create(alice, uniq("other"), "org")
    ingestion = '{"chunk_size": 400, "chunk_overlap": 40}'
    for name, data in (
        (HOSTILE, b"Plain words about rocket skates.\n"),
        ("atlas.pdf", three_page_pdf()),
        ("broken.pdf", b"%PDF-1.4 this is not a pdf at all"),
    ):
        r = await alice.post(
            f"/kb/{kb['id']}/documents", files={"file": (name, data)}, data={"ingestion": ingestion}
        )
        assert r.status_code == 202, r.text
    r = await alice.post(f"/kb/{other['id']}/documents", files={"file": ("x.txt", b"other words")})
    assert r.status_code == 202, r.text
    await wait_complete(alice, kb["id"])
    await wait_complete(alice, other["id"])
    return {
        "org": org,
        "kb": kb,
        "other": other,
        "docs": await documents(alice, kb["id"]),
        "other_docs": await documents(alice, other["id"]),
    }


async def test_download_streams_the_original_with_a_safe_name(
    client: Client, world: dict[str, Any], runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    viewer = client("vera", world["org"], (VIEW,))
    doc = world["docs"][HOSTILE]
    assert doc["has_file"]

    def no_whole_reads(key: str) -> bytes:
        raise AssertionError(f"the download read {key} whole")

    monkeypatch.setattr(runtime.storage.sync, "get", no_whole_reads)
    r = await viewer.get(f"/kb/{world['kb']['id']}/documents/{doc['id']}/download")
    assert r.status_code == 200, r.text
    assert r.content == b"Plain words about rocket skates.\n"
    assert r.headers["content-type"] == "application/octet-stream"
    assert r.headers["x-content-type-options"] == "nosniff"
    disposition = r.headers["content-disposition"]
    fallback = disposition.split('filename="', 1)[1].split('"', 1)[0]
    assert disposition.startswith("attachment; ") and disposition.isascii()
    assert fallback == "informe a_o_ filename=evil.html.txt"
    assert unquote(disposition.rsplit("filename*=UTF-8''", 1)[1]) == HOSTILE


async def test_a_large_original_comes_back_whole_in_pieces(
    client: Client, world: dict[str, Any]
) -> None:
    alice = client("alice", world["org"], (VIEW, EDIT))
    data = bytes(range(256)) * (12 * 1024)  # 3 MiB: three reads of the stream
    kb_id = world["other"]["id"]
    r = await alice.post(f"/kb/{kb_id}/documents", files={"file": ("blob.txt", data)})
    assert r.status_code == 202, r.text
    doc_id = r.json()["tracking_id"]
    async with alice.stream("GET", f"/kb/{kb_id}/documents/{doc_id}/download") as response:
        assert response.status_code == 200
        assert "content-length" not in response.headers
        body = b"".join([piece async for piece in response.aiter_raw()])
    assert body == data
    await wait_complete(alice, kb_id)


async def test_parsed_pages_follow_the_pdf(client: Client, world: dict[str, Any]) -> None:
    viewer = client("vera", world["org"], (VIEW,))
    doc = world["docs"]["atlas.pdf"]
    r = await viewer.get(f"/kb/{world['kb']['id']}/documents/{doc['id']}/parsed")
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["document_id"], body["filename"]) == (doc["id"], "atlas.pdf")
    pages = body["pages"]
    assert [(p["page_num"], p["has_text"]) for p in pages] == [(1, True), (2, False), (3, True)]
    assert len(pages[0]["chunks"]) > 1 and pages[1]["chunks"] == []
    assert [c for c in pages[2]["chunks"] if "Capybaras" in c] == pages[2]["chunks"]
    assert all("Capybaras" not in c for c in pages[0]["chunks"])
    assert sum(len(p["chunks"]) for p in pages) == doc["chunk_count"]

    plain = world["docs"][HOSTILE]
    r = await viewer.get(f"/kb/{world['kb']['id']}/documents/{plain['id']}/parsed")
    assert r.json()["pages"] == [
        {"page_num": 1, "chunks": ["Plain words about rocket skates."], "has_text": True}
    ]


async def test_parsed_is_404_until_done(client: Client, world: dict[str, Any]) -> None:
    alice = client("alice", world["org"], (VIEW, EDIT))
    broken = world["docs"]["broken.pdf"]
    assert broken["status"] == "error"
    r = await alice.get(f"/kb/{world['kb']['id']}/documents/{broken['id']}/parsed")
    assert r.status_code == 404
    assert r.json()["error"]["message"] == "The document is not indexed yet (status: error)"


@pytest.mark.parametrize("route", ["parsed", "download"])
async def test_reach_and_base_decide(client: Client, world: dict[str, Any], route: str) -> None:
    kb_id, doc = world["kb"]["id"], world["docs"][HOSTILE]
    url = f"/kb/{kb_id}/documents/{doc['id']}/{route}"
    for outsider in (
        client("ned", world["org"]),  # no collections:view
        client("bob", "globex", (VIEW, EDIT)),  # another organization
    ):
        r = await outsider.get(url)
        assert r.status_code == 404 and r.json() == NOT_FOUND
    alice = client("alice", world["org"], (VIEW, EDIT))
    elsewhere = world["other_docs"]["x.txt"]["id"]
    for missing in (elsewhere, str(uuid.uuid4())):
        r = await alice.get(f"/kb/{kb_id}/documents/{missing}/{route}")
        assert r.status_code == 404 and r.json() == NOT_IN_KB
    r = await alice.get(f"/kb/{world['other']['id']}/documents/{doc['id']}/{route}")
    assert r.status_code == 404 and r.json() == NOT_IN_KB
