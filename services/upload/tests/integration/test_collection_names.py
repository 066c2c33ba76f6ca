"""Collection names at the API: every route that takes a name refuses with the
400 of ``validate_collection_name`` itself, naming the rule, and never stores a rewritten name.

The upload service's routers in-process (ASGI) on a fresh database of the test Postgres.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from docproc_common.db.vector_tables import validate_collection_name
from docproc_common.errors import InvalidInput
from docproc_testing.runtime import LOCAL_MODEL

pytestmark = pytest.mark.integration


#: name -> words of the rule its refusal must name
REFUSED = {
    "Handbook": "uppercase",
    "foo-bar": "bare identifier",
    "2024_reports": "bare identifier",
    "ñandú": "bare identifier",
    "a" * 46: "at most 45",
    "all": "reserved",
    "documents": "docproc itself owns",
    "document_claims": "docproc itself owns",  # rag_document_claims is a model table too
}


def expected(name: str, field: str) -> dict[str, Any]:
    """The envelope of the one function that decides, for ``name`` refused in ``field``."""
    with pytest.raises(InvalidInput) as info:
        validate_collection_name(name, field=field)
    return dict(info.value.envelope())


@pytest.mark.parametrize(("name", "rule"), list(REFUSED.items()))
async def test_every_route_refuses_with_the_rule(
    alice: httpx.AsyncClient, name: str, rule: str
) -> None:
    body = expected(name, "collection_name")
    assert rule in body["error"]["message"]
    assert body["error"]["details"]["fields"][0]["field"] == "collection_name"

    calls: list[Callable[[], Any]] = [
        lambda: alice.post("/kb", json={"name": "kb", "collection_name": name, **LOCAL_MODEL}),
        lambda: alice.post(f"/rag/collections/{name}", json=LOCAL_MODEL),
        lambda: alice.get(f"/rag/collections/{name}/info"),
        lambda: alice.get(f"/rag/collections/{name}/filter-values"),
        lambda: alice.delete(f"/rag/collections/{name}"),
        lambda: alice.post(
            f"/rag/collections/{name}/ingest", files={"file": ("a.txt", b"Some text.")}
        ),
    ]
    for call in calls:
        r = await call()
        assert (r.status_code, r.json()) == (400, body), r.request.url
    r = await alice.post("/rag/search", json={"query": "q", "collections": [name]})
    assert (r.status_code, r.json()) == (400, expected(name, "collections"))


async def test_nothing_is_lowered_and_a_model_suffix_is_fine(alice: httpx.AsyncClient) -> None:
    r = await alice.post("/kb", json={"name": "kb", "collection_name": "Handbook_x", **LOCAL_MODEL})
    assert r.status_code == 400
    listed = await alice.get("/rag/collections")
    assert listed.status_code == 200
    assert "handbook_x" not in {c["collection_name"] for c in listed.json()}

    r = await alice.post(
        "/kb", json={"name": "archive", "collection_name": "documents_archive", **LOCAL_MODEL}
    )
    assert r.status_code == 201, r.text
    assert r.json()["collection_name"] == "documents_archive"
    r = await alice.post(f"/rag/collections/{'b' * 45}", json=LOCAL_MODEL)
    assert r.status_code == 201, r.text
    assert r.json()["collection_name"] == "b" * 45
    info = await alice.get("/rag/collections/documents_archive/info")
    assert info.status_code == 200, info.text
    assert info.json()["collection_name"] == "documents_archive"
