"""Client text on the knowledge-base upload that Postgres would refuse: a NUL anywhere.

A NUL in the file name is removed, as the chat upload removes it (one cleaning
function); a NUL in a form field is a 400 naming the field, and leaves no row and no
file. The upload service's routers in-process (ASGI) on a fresh database.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from docproc_common.runtime import Runtime
from docproc_testing.db import fetch
from docproc_testing.runtime import LOCAL_MODEL

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # chat_support

from chat_support import raw_multipart  # noqa: E402

pytestmark = pytest.mark.integration


@pytest.fixture
async def kb(alice: httpx.AsyncClient) -> dict[str, Any]:
    r = await alice.post("/kb", json={"name": f"nul {uuid.uuid4().hex[:6]}", **LOCAL_MODEL})
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    return body


async def rows(runtime: Runtime, kb_id: str) -> list[asyncpg.Record]:
    return await fetch(
        runtime.settings.database.url,
        "SELECT filename, storage_path FROM rag_documents WHERE knowledge_base_id = $1",
        uuid.UUID(kb_id),
    )


def stored(runtime: Runtime, kb: dict[str, Any]) -> list[Path]:
    folder = Path(runtime.settings.storage.media_dir) / "rag" / kb["collection_name"]
    return sorted(folder.rglob("*")) if folder.exists() else []


async def test_a_nul_in_the_file_name_is_removed_as_on_the_chat_upload(
    alice: httpx.AsyncClient, runtime: Runtime, kb: dict[str, Any]
) -> None:
    body, content_type = raw_multipart(b"re\x00port\x01.txt", b"Plain words.", "text/plain")
    r = await alice.post(
        f"/kb/{kb['id']}/documents", content=body, headers={"content-type": content_type}
    )
    assert r.status_code == 202, r.text
    assert r.json()["filename"] == "report.txt"
    (row,) = await rows(runtime, kb["id"])
    assert row["filename"] == "report.txt"
    assert row["storage_path"].endswith("_report.txt")


def _form(field: str, value: bytes) -> tuple[bytes, str]:
    boundary = f"kb-{uuid.uuid4().hex}"
    body = (
        f"--{boundary}\r\n".encode()
        + f'Content-Disposition: form-data; name="{field}"\r\n\r\n'.encode()
        + value
        + f"\r\n--{boundary}\r\n".encode()
        + b'Content-Disposition: form-data; name="file"; filename="a.txt"\r\n'
        + b"Content-Type: text/plain\r\n\r\nPlain words."
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return body, f"multipart/form-data; boundary={boundary}"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("organizational_unit", b"Sales\x00EU", id="unit"),
        pytest.param("ingestion", b'{"chunk_size": 400\x00}', id="ingestion"),
        pytest.param("document_date", b"2024-01-01\x00", id="date"),
    ],
)
async def test_a_nul_in_a_form_field_is_a_400_naming_it(
    alice: httpx.AsyncClient, runtime: Runtime, kb: dict[str, Any], field: str, value: bytes
) -> None:
    body, content_type = _form(field, value)
    r = await alice.post(
        f"/kb/{kb['id']}/documents", content=body, headers={"content-type": content_type}
    )
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["code"] == "INVALID_INPUT"
    assert error["details"]["fields"] == [{"field": field, "message": "contains a NUL character"}]
    assert await rows(runtime, kb["id"]) == []
    assert stored(runtime, kb) == []


async def test_a_nul_escaped_in_the_ingestion_json_is_a_400_naming_it(
    alice: httpx.AsyncClient, runtime: Runtime, kb: dict[str, Any]
) -> None:
    profile = b'{"base_url": "https://api.openai.com/v1", "model": "gpt\\u0000"}'
    body, content_type = _form("ingestion", b'{"vision_profile": ' + profile + b"}")
    r = await alice.post(
        f"/kb/{kb['id']}/documents", content=body, headers={"content-type": content_type}
    )
    assert r.status_code == 400, r.text
    (field,) = r.json()["error"]["details"]["fields"]
    assert field["field"] == "ingestion_config.vision_profile.model"
    assert "NUL" in field["message"]
    assert await rows(runtime, kb["id"]) == []
    assert stored(runtime, kb) == []
