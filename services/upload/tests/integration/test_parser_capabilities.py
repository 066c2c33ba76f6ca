"""What the parser can read is the parser's fact: the upload API refuses by the declared
``FORMATS__*`` (rendered by the chart from the parser's image), not by what LibreOffice
or LiteParse this process's machine happens to have (docs/decisions/0006-parser-capabilities.md).

This machine has LiteParse and all of LibreOffice; the app here is told its parser has
LiteParse and LibreOffice Writer only, so a spreadsheet is refused and a text document
is not. The upload service's routers in-process (ASGI) on a fresh database.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import httpx
import pytest
from docproc_common.runtime import Runtime
from docproc_testing.db import plain_dsn
from docproc_testing.runtime import fresh_runtime

pytestmark = pytest.mark.integration

MODEL = {"embedding_provider": "local", "embedding_model": "sentence-transformers/all-MiniLM-L6-v2"}
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


@pytest.fixture(scope="module")
async def runtime(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Runtime]:
    declared = {"liteparse": True, "office": ["writer"]}
    async with fresh_runtime(tmp_path_factory.mktemp("media"), formats=declared) as rt:
        yield rt


async def test_the_supported_formats_are_the_declared_ones(alice: httpx.AsyncClient) -> None:
    r = await alice.get("/rag/supported-formats", params={"parser": "liteparse"})
    assert r.status_code == 200, r.text
    (formats,) = r.json()["parsers"]
    assert {".odt", ".doc", ".pdf"} <= set(formats["extensions"])
    assert {".xlsx", ".ods", ".pptx"} <= formats["unavailable"].keys()
    assert "LibreOffice Calc" in formats["unavailable"][".xlsx"]
    assert ".xlsx" not in formats["extensions"]


async def test_an_upload_the_parser_cannot_read_is_refused_before_anything_is_kept(
    alice: httpx.AsyncClient, runtime: Runtime
) -> None:
    r = await alice.post(
        "/kb",
        json={"name": f"caps {uuid.uuid4().hex[:6]}", "ingestion_config": {"parser": "liteparse"}}
        | MODEL,
    )
    assert r.status_code == 201, r.text
    kb: dict[str, Any] = r.json()
    r = await alice.post(
        f"/kb/{kb['id']}/documents", files={"file": ("sheet.xlsx", b"PK\x03\x04 not read", XLSX)}
    )
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["details"]["rule"] == "parser_unavailable"
    assert error["details"]["fields"][0]["field"] == "file"
    conn = await asyncpg.connect(plain_dsn(runtime.settings.database.url))
    try:
        count = await conn.fetchval(
            "SELECT count(*) FROM rag_documents WHERE knowledge_base_id = $1", uuid.UUID(kb["id"])
        )
    finally:
        await conn.close()
    assert count == 0
