"""What PostgreSQL can keep of a client's input, checked before anything is stored.

A string longer than its ``String(n)`` column, an integer past the database's, or a
NUL character (PostgreSQL keeps none in ``text``, nor a ``\\u0000`` in ``jsonb``) is
refused with a 400 or 422 naming the input, never a 500 from the database after a
file was stored. Schemas take their limits from the model's column
(``column_length``), so the two cannot drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator
from typing import Any

from docproc_common.errors import FieldError, UnprocessableEntity
from fastapi import Request
from sqlalchemy import String
from sqlalchemy.orm import InstrumentedAttribute

#: The largest ``integer`` (int4) PostgreSQL holds; a bound for any client integer sent to SQL.
INT4_MAX = 2**31 - 1

NUL = "\x00"
#: How the OpenAPI document states ``refuse_nul``: a string without U+0000 (ECMA-262 and
#: Python read ``\x00`` alike).
NO_NUL_PATTERN = r"^[^\x00]*$"


def column_length(column: InstrumentedAttribute[Any]) -> int:
    """The ``n`` of a ``String(n)`` model column."""
    kind = column.expression.type
    if not isinstance(kind, String) or kind.length is None:
        raise TypeError(f"{column} is not a String(n) column")
    return int(kind.length)


def nul_path(value: object, path: str = "") -> str | None:
    """The dotted path of the first string (or key) in ``value`` holding a NUL, or None."""
    if isinstance(value, str):
        return path if NUL in value else None
    items: list[tuple[object, object]] = []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    for key, item in items:
        here = f"{path}.{key}" if path else str(key)
        if isinstance(key, str) and NUL in key:
            return here
        found = nul_path(item, here)
        if found is not None:
            return found
    return None


def nul_refused(field: str) -> UnprocessableEntity:
    """422, like any JSON body or parameter that fails its schema."""
    return UnprocessableEntity(
        "Text may not contain the NUL character (U+0000)",
        fields=[FieldError(field, "contains the NUL character")],
    )


async def refuse_nul(request: Request) -> None:
    """Router dependency: no NUL in a path or query parameter or anywhere in a JSON body.

    Runs after routing (the path parameters have their names) and before the body is
    validated, on the body FastAPI has already read. A route that declares no body
    (an upload streams its multipart itself; ``docproc_upload.multipart`` refuses a NUL
    in a form field) is not read.
    """
    for name, value in [*request.path_params.items(), *request.query_params.multi_items()]:
        if NUL in name or NUL in str(value):
            raise nul_refused(name)
    if getattr(request.scope.get("route"), "body_field", None) is None:
        return
    raw = await request.body()
    if b"\\u0000" not in raw:
        return  # the common case: nothing parsed twice
    try:
        body = json.loads(raw)
    except ValueError:
        return  # FastAPI refuses the malformed body itself
    found = nul_path(body)
    if found is not None:
        raise nul_refused(found)


def declare_no_nul(operation_ids: Collection[str]) -> Callable[[dict[str, Any]], None]:
    """An OpenAPI edit (``ServiceSpec.openapi``) stating ``refuse_nul`` on the operations
    named: every string a client sends them (a parameter, a JSON or form field, at any
    depth of the body's schemas) gets ``NO_NUL_PATTERN``, so a generated client or a
    schema-driven test knows a NUL is refused. A string that has a pattern already
    (a name's character class, a URL) or a format (uuid, date-time, a file's binary)
    excludes NUL by that rule.
    """

    def edit(document: dict[str, Any]) -> None:
        components = document.get("components", {}).get("schemas", {})
        seen: set[str] = set()
        for operation in _operations(document, operation_ids):
            for parameter in operation.get("parameters", []):
                if parameter.get("in") in {"path", "query"}:  # what refuse_nul reads
                    _constrain(parameter.get("schema", {}), components, seen)
            for media in operation.get("requestBody", {}).get("content", {}).values():
                _constrain(media.get("schema", {}), components, seen)

    return edit


def _operations(document: dict[str, Any], ids: Collection[str]) -> Iterator[dict[str, Any]]:
    for item in document.get("paths", {}).values():
        for operation in item.values():
            if isinstance(operation, dict) and operation.get("operationId") in ids:
                yield operation


def _constrain(schema: object, components: dict[str, Any], seen: set[str]) -> None:
    if isinstance(schema, list):
        for item in schema:
            _constrain(item, components, seen)
        return
    if not isinstance(schema, dict):
        return
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
        name = ref.rsplit("/", 1)[1]
        if name not in seen:
            seen.add(name)
            _constrain(components.get(name), components, seen)
    if schema.get("type") == "string" and not {"pattern", "format", "enum", "const"} & set(schema):
        schema["pattern"] = NO_NUL_PATTERN
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            for item in value.values():
                _constrain(item, components, seen)
        elif key in {"items", "additionalProperties", "anyOf", "oneOf", "allOf", "not"}:
            _constrain(value, components, seen)
