"""No route for a path (404) or a method (405) answers the error envelope; a 405's
``Allow`` names every method served on the path, by whichever router."""

from __future__ import annotations

import httpx
from docproc_common.http import create_app
from fastapi import APIRouter


def _app() -> httpx.AsyncClient:
    reads, writes = APIRouter(), APIRouter()

    @reads.get("/things/{thing_id}")
    async def get_thing(thing_id: str) -> dict[str, str]:
        return {"id": thing_id}

    @writes.patch("/things/{thing_id}")
    async def patch_thing(thing_id: str) -> dict[str, str]:
        return {"id": thing_id}

    @writes.delete("/things/{thing_id}")
    async def delete_thing(thing_id: str) -> None:
        return None

    app = create_app(title="t", routers=[reads, writes])
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


async def test_a_405_allows_every_method_of_the_path() -> None:
    async with _app() as client:
        response = await client.put("/things/1")
    assert response.status_code == 405
    assert response.headers["allow"] == "DELETE, GET, PATCH"
    assert response.json()["error"]["code"] == "METHOD_NOT_ALLOWED"


async def test_an_unknown_path_is_a_404_envelope() -> None:
    async with _app() as client:
        response = await client.get("/nothing/here")
    assert response.status_code == 404
    assert response.json() == {
        "error": {"code": "NOT_FOUND", "message": "Not Found", "details": {}}
    }
