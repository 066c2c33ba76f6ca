"""An upload records the sha256 of its bytes, and the document listing shows it.

That is what lets a client tell what a knowledge base already holds (``docproc ingest``
skips a file of the same name and hash when it runs again). The upload service's routers
in-process (ASGI) on a fresh database.
"""

from __future__ import annotations

import hashlib
import uuid

import httpx
import pytest
from docproc_testing.runtime import LOCAL_MODEL

pytestmark = pytest.mark.integration


async def test_an_upload_records_its_content_hash_and_the_listing_shows_it(
    alice: httpx.AsyncClient,
) -> None:
    r = await alice.post("/kb", json={"name": f"hash {uuid.uuid4().hex[:6]}", **LOCAL_MODEL})
    assert r.status_code == 201, r.text
    kb = r.json()
    data = b"Sea otters hold hands while they sleep.\n"
    r = await alice.post(
        f"/kb/{kb['id']}/documents", files={"file": ("otters.txt", data, "text/plain")}
    )
    assert r.status_code == 202, r.text

    page = (await alice.get(f"/kb/{kb['id']}/documents")).json()
    (doc,) = page["items"]
    assert (doc["filename"], doc["content_hash"]) == (
        "otters.txt",
        hashlib.sha256(data).hexdigest(),
    )
    viewed = (await alice.get(f"/rag/documents/{doc['id']}")).json()
    assert viewed["content_hash"] == doc["content_hash"]
