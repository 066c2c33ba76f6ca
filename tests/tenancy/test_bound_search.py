"""Search by knowledge-base id: an agent bound to bases searches exactly those, with their scope."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from docproc_common.runtime import Runtime
from docproc_upload.search import service
from sqlalchemy import event

from .conftest import Client
from .test_tenancy import EDIT, MODEL, NOT_FOUND, VIEW, create, uniq, upload, wait_complete

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
async def twins(client: Client) -> dict[str, Any]:
    """One name, three bases: two of acme's and alice's personal one."""
    alice = client("alice", "acme", (VIEW, EDIT))
    name = uniq("bound")
    first = await create(alice, name, "org")
    kbs = {"first": first}
    for key, scope in (("second", "org"), ("personal", "personal")):
        r = await alice.post(
            "/kb", json={"name": key, "collection_name": name, "scope": scope, **MODEL}
        )
        assert r.status_code == 201, r.text
        kbs[key] = r.json()
    for key, kb in kbs.items():
        r = await upload(alice, kb["id"], f"{key}.txt", f"The {key} base's notes on rocket skates.")
        assert r.status_code == 202, r.text
        await wait_complete(alice, kb["id"])
    return {"alice": alice, "name": name, "kbs": kbs}


async def search(c: httpx.AsyncClient, **body: Any) -> httpx.Response:
    return await c.post("/rag/search", json={"query": "rocket skates", "top_k": 10, **body})


def files(r: httpx.Response) -> set[str]:
    assert r.status_code == 200, r.text
    return {h["filename"] for h in r.json()["results"]}


async def test_a_name_reaches_every_base_on_it(twins: dict[str, Any]) -> None:
    r = await search(twins["alice"], collections=[twins["name"]])
    assert files(r) == {"first.txt", "second.txt", "personal.txt"}


async def test_bound_bases_are_searched_exactly_and_the_names_other_bases_are_not(
    twins: dict[str, Any],
) -> None:
    alice, kbs = twins["alice"], twins["kbs"]
    # an agent bound to the org base does not read its user's personal base of the same name
    assert files(await search(alice, knowledge_base_ids=[kbs["first"]["id"]])) == {"first.txt"}
    # two bound bases on one name: their combined scope, and not the name's third base
    r = await search(alice, knowledge_base_ids=[kbs["first"]["id"], kbs["personal"]["id"]])
    assert files(r) == {"first.txt", "personal.txt"}
    assert {h["collection_name"] for h in r.json()["results"]} == {twins["name"]}
    same = await search(alice, knowledge_base_ids=[kbs["second"]["id"]] * 2)
    assert files(same) == {"second.txt"}


async def test_bound_bases_keep_their_own_reach(client: Client, twins: dict[str, Any]) -> None:
    kbs = twins["kbs"]
    colleague = client("carol", "acme", (VIEW,))
    assert files(await search(colleague, knowledge_base_ids=[kbs["second"]["id"]])) == {
        "second.txt"
    }
    outsider = client("bob", "globex", (VIEW, EDIT))
    assert (await search(outsider, knowledge_base_ids=[kbs["second"]["id"]])).json() == NOT_FOUND


async def test_one_unreachable_or_unknown_id_refuses_the_whole_search_before_a_vector_is_read(
    client: Client, twins: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    kbs = twins["kbs"]
    colleague = client("carol", "acme", (VIEW,))
    read: list[str] = []

    async def recording(*args: Any, **kwargs: Any) -> Any:
        read.append(args[1])
        return []

    monkeypatch.setattr(service, "search_collection", recording)
    for ids in (
        [kbs["first"]["id"], kbs["personal"]["id"]],  # the personal base is alice's alone
        [kbs["personal"]["id"], kbs["first"]["id"]],
        [kbs["first"]["id"], str(uuid.uuid4())],
    ):
        r = await search(colleague, knowledge_base_ids=ids)
        assert r.status_code == 404
        assert r.json() == NOT_FOUND
    assert read == []


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        (
            {"collections": ["x"], "knowledge_base_ids": [str(uuid.uuid4())]},
            "knowledge_base_ids",
            "not both",
        ),
        ({}, "knowledge_base_ids", "give collections (names) or knowledge_base_ids"),
        ({"knowledge_base_ids": []}, "knowledge_base_ids", "at least 1"),
        ({"knowledge_base_ids": ["not-a-uuid"]}, "knowledge_base_ids.0", "UUID"),
        (
            {"knowledge_base_ids": [str(uuid.uuid4()) for _ in range(21)]},
            "knowledge_base_ids",
            "at most 20",
        ),
    ],
)
async def test_a_bad_selection_is_422_naming_knowledge_base_ids(
    twins: dict[str, Any], body: dict[str, Any], field: str, message: str
) -> None:
    r = await search(twins["alice"], **body)
    assert r.status_code == 422, r.text
    [error] = r.json()["error"]["details"]["fields"]
    assert error["field"] == field
    assert message in error["message"]


async def test_the_bound_bases_are_resolved_in_one_statement(
    twins: dict[str, Any], runtime: Runtime
) -> None:
    sent: list[str] = []

    def seen(_c: Any, _cur: Any, statement: str, *_: Any) -> None:
        sent.append(statement)

    kbs = twins["kbs"]
    ids = [kbs["first"]["id"], kbs["second"]["id"], kbs["personal"]["id"]]
    event.listen(runtime.engine.sync_engine, "before_cursor_execute", seen)
    try:
        r = await search(twins["alice"], knowledge_base_ids=ids)
    finally:
        event.remove(runtime.engine.sync_engine, "before_cursor_execute", seen)
    assert files(r) == {"first.txt", "second.txt", "personal.txt"}
    # (a vector table's read names its bases' organizations in a subquery: not a resolution)
    resolving = [s for s in sent if "FROM knowledge_bases" in s and "FROM rag_" not in s]
    assert len(resolving) == 1
