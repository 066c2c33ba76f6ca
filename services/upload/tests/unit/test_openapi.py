"""The upload app's OpenAPI: stable operation ids, tags, the error envelope on every
route, and a collection name's rule declared wherever one is taken."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from docproc_common.runtime import Runtime, build_app
from docproc_common.settings import DatabaseSettings, Settings
from docproc_upload.app import build

ENVELOPE = {"$ref": "#/components/schemas/ErrorEnvelope"}


@pytest.fixture
async def schema() -> AsyncIterator[dict[str, Any]]:
    # building the app opens no connection; the URL only has to parse
    settings = Settings(database=DatabaseSettings(url="postgresql+asyncpg://u:p@127.0.0.1:1/db"))
    runtime = Runtime.create(settings)
    spec = build(runtime)
    try:
        yield build_app(runtime, [spec], [], "docproc").openapi()
    finally:
        for close in spec.on_shutdown:
            await close()
        await runtime.close()


def _operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
    ]


async def test_operation_ids_are_the_route_names_and_unique(schema: dict[str, Any]) -> None:
    ids = [op["operationId"] for _, _, op in _operations(schema)]
    assert len(ids) == len(set(ids))
    assert {"create_kb", "upload_document", "search", "list_secrets", "create_source"} <= set(ids)
    assert all(op.get("tags") and len(op["tags"]) == 1 for _, _, op in _operations(schema))


async def test_every_route_documents_its_errors_with_the_envelope(schema: dict[str, Any]) -> None:
    for method, path, op in _operations(schema):
        for status in ("400", "401", "403", "404", "409", "413", "422", "503", "507"):
            answer = op["responses"][status]
            assert answer["content"]["application/json"]["schema"] == ENVELOPE, (method, path)
    body = schema["components"]["schemas"]["ErrorBody"]
    assert set(body["required"]) == {"code", "message", "details"}


async def test_a_collection_name_declares_its_rule(schema: dict[str, Any]) -> None:
    path = schema["paths"]["/api/v1/rag/collections/{name}/info"]["get"]["parameters"][0]
    assert path["schema"]["pattern"] == "^[a-z][a-z0-9_]*$"
    assert path["schema"]["maxLength"] == 45
    assert "all" in path["schema"]["not"]["enum"]
    created = schema["components"]["schemas"]["KnowledgeBaseCreate"]["properties"]
    assert created["collection_name"]["pattern"] == "^[a-z][a-z0-9_]*$"
