"""docproc driven over its HTTP API by a synchronous test (``httpx.Client``), as the e2e and
fault scenarios drive the services as processes and the deploy smoke drives the chart's pods."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx

from docproc_testing.runtime import LOCAL_MODEL


def wait_for(
    predicate: Any, timeout: float = 120, interval: float = 0.5, what: str = "condition"
) -> Any:
    """``predicate()``'s first true value, asked every ``interval`` seconds; a
    ``TimeoutError`` naming ``what`` after ``timeout`` (generous: it only bounds a wait)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"timed out waiting for {what}")


def create_kb(client: httpx.Client, prefix: str = "e2e", **fields: Any) -> dict[str, Any]:
    """A new app-scope knowledge base on the local model, named ``<prefix>_<random>``;
    ``fields`` set or replace any other field of the request."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    body = {"name": name, "collection_name": name, "scope": "app", **LOCAL_MODEL, **fields}
    response = client.post("/kb", json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())
