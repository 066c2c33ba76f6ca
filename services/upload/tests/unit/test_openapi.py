"""The upload app's OpenAPI: stable operation ids, tags, the error envelope on every
route, and a collection name's rule declared wherever one is taken."""

from __future__ import annotations

import re
from typing import Any

import pytest
from docproc_upload.openapi_document import openapi_document

ENVELOPE = {"$ref": "#/components/schemas/ErrorEnvelope"}


@pytest.fixture
async def schema() -> dict[str, Any]:
    return await openapi_document()


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


def _input_strings(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every string schema a client sends to an operation: path and query parameters, and
    the request bodies at any depth (references followed), as (where, schema)."""
    components = schema["components"]["schemas"]
    found: list[tuple[str, dict[str, Any]]] = []

    def walk(node: object, where: str, seen: frozenset[str]) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, where, seen)
        elif isinstance(node, dict):
            ref = node.get("$ref")
            if ref and ref.rsplit("/", 1)[1] not in seen:
                name = ref.rsplit("/", 1)[1]
                walk(components[name], f"{where}>{name}", seen | {name})
            if node.get("type") == "string":
                found.append((where, node))
            for key, value in node.items():
                child = f"{where}.{key}" if key != "properties" else where
                walk(value, child, seen)

    for method, path, op in _operations(schema):
        for parameter in op.get("parameters", []):
            if parameter["in"] in ("path", "query"):
                walk(parameter["schema"], f"{method} {path} {parameter['name']}", frozenset())
        for media, content in op.get("requestBody", {}).get("content", {}).items():
            walk(content["schema"], f"{method} {path} {media}", frozenset())
    return found


async def test_every_string_a_client_sends_declares_that_nul_is_refused(
    schema: dict[str, Any],
) -> None:
    """The API refuses U+0000 in every parameter and body string (``inputs.refuse_nul``,
    the multipart reader); a schema that allowed it had schemathesis send one and report
    the 422 as a schema-valid request refused (ST202)."""
    strings = _input_strings(schema)
    assert len(strings) > 100
    for where, node in strings:
        if node.get("format") or "enum" in node or "const" in node:
            continue  # a uuid, a date, an enum value or a file's bytes: no free text
        assert "pattern" in node, where
        for probe in ("\x00", "a\x00", "http://h/\x00", "abc\x00def"):
            assert re.search(node["pattern"], probe) is None, (where, node["pattern"])
    local = schema["paths"]["/api/v1/rag/sync/local"]["post"]["requestBody"]
    body = local["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert schema["components"]["schemas"][body]["properties"]["path"]["pattern"] == r"^[^\x00]*$"
