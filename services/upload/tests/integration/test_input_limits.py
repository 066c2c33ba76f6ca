"""Input PostgreSQL cannot keep is a 400/422 naming it, never a 500 after the fact.

A string past its column, an integer past the database's, a NUL character in a JSON
body or a path or query parameter: each was a database error (500) and, for an upload,
a file stored and then removed (a NUL in a multipart field: test_kb_upload_inputs.py). The upload service's routers
in-process (ASGI) on a fresh database of the test Postgres, local file storage.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from docproc_common.runtime import Runtime
from docproc_testing.runtime import LOCAL_MODEL, fresh_runtime

pytestmark = pytest.mark.integration

NOTE = ("note.md", b"# Note\n\nSea otters hold hands.")


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("media")


@pytest.fixture(scope="module")
async def runtime(media: Path) -> AsyncIterator[Runtime]:
    async with fresh_runtime(media) as rt:
        yield rt


@pytest.fixture(scope="module")
async def kb(alice: httpx.AsyncClient) -> dict[str, Any]:
    name = f"limits_{uuid.uuid4().hex[:8]}"
    r = await alice.post("/kb", json={"name": name, "collection_name": name, **LOCAL_MODEL})
    assert r.status_code == 201, r.text
    return dict(r.json())


def refused(r: httpx.Response, status: int, field: str) -> None:
    assert r.status_code == status, r.text
    assert [f["field"] for f in r.json()["error"]["details"]["fields"]] == [field]


async def documents(alice: httpx.AsyncClient, kb: dict[str, Any]) -> int:
    r = await alice.get(f"/kb/{kb['id']}/documents")
    assert r.status_code == 200, r.text
    return int(r.json()["total"])


async def test_a_long_organizational_unit_is_refused_before_anything_is_stored(
    alice: httpx.AsyncClient, kb: dict[str, Any], media: Path
) -> None:
    before = await documents(alice, kb)
    r = await alice.post(
        f"/kb/{kb['id']}/documents",
        files={"file": NOTE},
        data={"organizational_unit": "u" * 201},
    )
    refused(r, 400, "organizational_unit")
    assert "at most 200 characters" in r.json()["error"]["message"]
    assert not (media / "rag" / kb["collection_name"]).exists()
    assert await documents(alice, kb) == before

    r = await alice.post(
        f"/kb/{kb['id']}/documents", files={"file": NOTE}, data={"organizational_unit": "u" * 200}
    )
    assert r.status_code == 202, r.text
    assert await documents(alice, kb) == before + 1


Call = Callable[[httpx.AsyncClient, dict[str, Any]], Awaitable[httpx.Response]]
VISION = {"vision_profile": {"base_url": "http://vl", "model": "m\x00"}}
NUL_CALLS: dict[str, tuple[str, Call]] = {
    "kb name": ("name", lambda c, kb: c.post("/kb", json={"name": "a\x00b", **LOCAL_MODEL})),
    "kb ingestion_config": (
        "ingestion_config.vision_profile.model",
        lambda c, kb: c.post("/kb", json={"name": "kb", "ingestion_config": VISION, **LOCAL_MODEL}),
    ),
    "grant body": (
        "user_id",
        lambda c, kb: c.put(
            f"/kb/{kb['id']}/grants", json={"user_id": "a\x00b", "permission": "view"}
        ),
    ),
    "grant path": ("user_id", lambda c, kb: c.delete(f"/kb/{kb['id']}/grants/a%00b")),
    "sync logs query": (
        "collection_name",
        lambda c, kb: c.get("/rag/sync/logs", params={"collection_name": "a\x00"}),
    ),
    "sync source config": (
        "config.start_url",
        lambda c, kb: c.post(
            f"/kb/{kb['id']}/sync-sources",
            json={"connector": "web", "config": {"start_url": "https://example.com/\x00"}},
        ),
    ),
}


@pytest.mark.parametrize(("field", "call"), NUL_CALLS.values(), ids=NUL_CALLS.keys())
async def test_a_nul_in_json_a_path_or_a_query_is_a_422(
    alice: httpx.AsyncClient, kb: dict[str, Any], field: str, call: Call
) -> None:
    refused(await call(alice, kb), 422, field)


@pytest.mark.parametrize("path", ["/rag/sync/sources", "/rag/sync/logs"])
async def test_an_offset_past_the_database_integer_is_a_422(
    alice: httpx.AsyncClient, path: str
) -> None:
    refused(await alice.get(path, params={"offset": 2**63}), 422, "offset")  # past bigint too
    refused(await alice.get(path, params={"offset": 2**31}), 422, "offset")
    assert (await alice.get(path, params={"offset": 2**31 - 1})).status_code == 200


async def test_a_json_body_is_capped_and_an_upload_is_not(alice: httpx.AsyncClient) -> None:
    """LIMITS__MAX_JSON_BODY_BYTES (1 MiB) bounds what a JSON route reads; an upload keeps
    MAX_UPLOAD_SIZE_MB (docproc_upload.routes)."""
    big = "x" * (2 << 20)
    r = await alice.post("/kb", json={"name": big, **LOCAL_MODEL})
    assert r.status_code == 413, r.text
    assert "LIMITS__MAX_JSON_BODY_BYTES" in r.json()["error"]["message"]
    name = f"big_{uuid.uuid4().hex[:8]}"
    r = await alice.post("/kb", json={"name": name, "collection_name": name, **LOCAL_MODEL})
    assert r.status_code == 201, r.text
    kb = r.json()
    r = await alice.post(
        f"/kb/{kb['id']}/documents", files={"file": ("big.txt", big.encode() + b"\nend\n")}
    )
    assert r.status_code == 202, r.text
    assert await documents(alice, kb) == 1
