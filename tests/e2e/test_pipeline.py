"""The vertical slice, with the services as separate processes on Kafka, Postgres and S3 (moto)."""

from __future__ import annotations

import uuid

import httpx
import pymupdf
import pytest
from docproc_testing.api import create_kb, wait_for

from tests.e2e.harness import Cluster

pytestmark = [pytest.mark.e2e, pytest.mark.integration]


def make_pdf(pages: list[str]) -> bytes:
    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(50, 50, 550, 800), text, fontsize=9)
    data: bytes = doc.tobytes()
    return data


def wait_complete(
    client: httpx.Client, kb_id: object, timeout: float = 180
) -> dict[str, int | str]:
    def done() -> dict[str, int | str] | None:
        state = client.get(f"/kb/{kb_id}/ingestion").json()
        return state if state["indexing_status"] == "complete" and state["document_count"] else None

    result: dict[str, int | str] = wait_for(done, timeout, what="indexing to complete")
    return result


def test_upload_pdf_is_searchable(cluster: Cluster) -> None:
    with cluster.admin() as client:
        kb = create_kb(client)
        pdf = make_pdf(
            ["Penguins live in the southern hemisphere.", "The capybara is the largest rodent."]
        )
        response = client.post(
            f"/kb/{kb['id']}/documents", files={"file": ("animals.pdf", pdf, "application/pdf")}
        )
        assert response.status_code == 202
        body = response.json()
        assert body["status"] == "processing"
        assert "document_id" in body
        assert body["document_id"] is None
        assert client.get(f"/kb/{kb['id']}/ingestion").json()["indexing_status"] in {
            "indexing",
            "complete",
        }
        state = wait_complete(client, kb["id"])
        assert state["indexed_count"] == 1
        assert state["failed_count"] == 0

        hits = client.post(
            "/rag/search",
            json={"query": "largest rodent", "collections": [kb["collection_name"]], "top_k": 3},
        ).json()["results"]
        assert hits, "search returned nothing"
        assert "capybara" in hits[0]["content"]
        assert hits[0]["filename"] == "animals.pdf"
        assert hits[0]["document_id"] == body["tracking_id"]


def test_unknown_kb_and_unsupported_type_leave_nothing(cluster: Cluster) -> None:
    with cluster.admin() as client:
        missing = client.post(f"/kb/{uuid.uuid4()}/documents", files={"file": ("a.txt", b"x")})
        assert missing.status_code == 404
        assert missing.json() == {
            "error": {"code": "NOT_FOUND", "message": "Collection not found", "details": {}}
        }
        kb = create_kb(client)
        refused = client.post(
            f"/kb/{kb['id']}/documents", files={"file": ("tool.exe", b"MZ\x90\x00")}
        )
        assert refused.status_code == 400
        assert ".exe" in refused.json()["error"]["message"]
        assert refused.json()["error"]["details"]["fields"][0]["field"] == "file"
    rows = cluster.query(
        "SELECT count(*) FROM rag_documents WHERE knowledge_base_id = $1", uuid.UUID(str(kb["id"]))
    )
    assert rows[0][0] == 0
    outbox = cluster.query(
        "SELECT count(*) FROM outbox WHERE payload->>'knowledge_base_id' = $1", str(kb["id"])
    )
    assert outbox[0][0] == 0


def test_embedder_killed_mid_document_completes_with_one_copy(cluster: Cluster) -> None:
    # ~32 chunks of three 256-token windows: seconds of embedding (~0.2 s of CPU a window),
    # time enough to be killed in; 120 cost two CPU-minutes, embedded twice
    paragraphs = [
        f"Section {i}. "
        + " ".join(f"word{i}_{j} describes topic {i % 17} in depth." for j in range(60))
        for i in range(32)
    ]
    with cluster.admin() as client:
        kb = create_kb(client)
        text = "\n\n".join(paragraphs).encode()
        response = client.post(
            f"/kb/{kb['id']}/documents", files={"file": ("long.txt", text, "text/plain")}
        )
        assert response.status_code == 202
        doc_id = uuid.UUID(response.json()["tracking_id"])

        # The parser has handed the chunk set to the embedder: kill the embedder while it embeds.
        wait_for(
            lambda: cluster.query("SELECT parsed_path FROM rag_documents WHERE id = $1", doc_id)[0][
                0
            ],
            timeout=120,
            interval=0.1,
            what="the document to be parsed",
        )
        status = cluster.query("SELECT status FROM rag_documents WHERE id = $1", doc_id)[0][0]
        cluster.services["embedder"].kill()
        cluster.restart("embedder")  # first: the package's other tests share this cluster
        assert status == "processing", "the document finished before the kill; make it longer"

        state = wait_complete(client, kb["id"], timeout=300)
        assert state["indexed_count"] == 1
    table = f"rag_{kb['collection_name']}"
    chunk_count = cluster.query("SELECT chunk_count FROM rag_documents WHERE id = $1", doc_id)[0][0]
    rows = cluster.query(
        f"SELECT count(*), count(DISTINCT chunk_no), count(DISTINCT document_id) FROM {table}"
    )
    assert chunk_count > 20
    assert rows[0][0] == chunk_count == rows[0][1]
    assert rows[0][2] == 1
