"""Who may reach a collection: a matrix of callers, scopes and routes, and the claim rules.

Three organizations; personal, org and app knowledge bases; users with view, edit,
nothing, and an explicit grant; app admins in no organization and inside one, with and
without collection permissions. The matrix is the specification's table: ``personal``
is its owner's, ``org`` is reached by ``collections:view``/``collections:edit`` in the
row's organization (widened by explicit grants), ``app`` is read by anyone and written by
the app admin only. Being app admin reaches no tenant's base. Every denial is the exact
404 of a missing collection.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from docproc_common.db.models import DocumentStatus, WriterKind
from docproc_common.runtime import Runtime
from docproc_common.vectorstore import ensure_table, write_chunks
from docproc_testing import rows
from sqlalchemy import text

from .conftest import Client

pytestmark = pytest.mark.integration

VIEW, EDIT = "collections:view", "collections:edit"
MODEL = {"embedding_provider": "local", "embedding_model": "sentence-transformers/all-MiniLM-L6-v2"}
NOT_FOUND = {"error": {"code": "NOT_FOUND", "message": "Collection not found", "details": {}}}


def uniq(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:6]}"


async def create(c: httpx.AsyncClient, name: str, scope: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "collection_name": name, **MODEL}
    if scope:
        body["scope"] = scope
    r = await c.post("/kb", json=body)
    assert r.status_code == 201, r.text
    return dict(r.json())


async def upload(c: httpx.AsyncClient, kb_id: str, name: str, text_: str) -> httpx.Response:
    return await c.post(f"/kb/{kb_id}/documents", files={"file": (name, text_.encode())})


async def wait_complete(c: httpx.AsyncClient, kb_id: str) -> dict[str, Any]:
    for _ in range(600):
        s = (await c.get(f"/kb/{kb_id}/ingestion")).json()
        if s["indexing_status"] == "complete":
            return dict(s)
        await asyncio.sleep(0.1)
    raise TimeoutError("indexing did not complete")


@pytest.fixture(scope="module")
async def world(client: Client) -> dict[str, Any]:
    users = {
        "alice": client("alice", "acme", (VIEW, EDIT)),
        "viewer": client("vera", "acme", (VIEW,)),
        "nobody": client("ned", "acme"),
        "carol": client("carol", "acme", (VIEW,)),
        "bob": client("bob", "globex", (VIEW, EDIT)),
        "cid": client("cid", "initech", (VIEW, EDIT)),
        "admin": client("root", None, (VIEW, EDIT), admin=True),
        # an app admin who belongs to acme but holds no collection permission there
        "acme_admin": client("ada", "acme", (), admin=True),
        # an app admin who is also an acme editor: reaches acme's org base as an editor does
        "acme_admin_editor": client("eve", "acme", (VIEW, EDIT), admin=True),
    }
    kbs = {
        "acme_org": await create(users["alice"], uniq("acme"), "org"),
        "alice_personal": await create(users["alice"], uniq("alicep"), "personal"),
        "globex_org": await create(users["bob"], uniq("globex"), "org"),
        "app": await create(users["admin"], uniq("shared"), "app"),
    }
    r = await users["alice"].put(
        f"/kb/{kbs['acme_org']['id']}/grants", json={"user_id": "carol", "permission": "edit"}
    )
    assert r.status_code == 204
    texts = {
        "acme_org": "Acme builds rocket skates for coyotes.",
        "alice_personal": "Alice keeps a private diary about rocket skates.",
        "globex_org": "Globex secretly plans rocket skates too.",
        "app": "Everyone may read that rocket skates need a licence.",
    }
    for key, body in texts.items():
        owner = (
            users["admin"]
            if key == "app"
            else users["bob"]
            if key.startswith("globex")
            else users["alice"]
        )
        assert (await upload(owner, kbs[key]["id"], f"{key}.txt", body)).status_code == 202
    owners = {"acme_org": "alice", "alice_personal": "alice", "globex_org": "bob", "app": "admin"}
    for key, kb in kbs.items():
        await wait_complete(users[owners[key]], kb["id"])
    return {"users": users, "kbs": kbs}


READS = {
    # caller: the knowledge bases they may read
    "alice": {"acme_org", "alice_personal", "app"},
    "viewer": {"acme_org", "app"},
    "nobody": {"app"},
    "carol": {"acme_org", "app"},
    "bob": {"globex_org", "app"},
    "cid": {"app"},
    "admin": {"app"},
    "acme_admin": {"app"},
    "acme_admin_editor": {"acme_org", "app"},
}
WRITES = {
    "alice": {"acme_org", "alice_personal"},
    "viewer": set(),
    "nobody": set(),
    "carol": {"acme_org"},  # a Viewer with an explicit edit grant manages that collection
    "bob": {"globex_org"},
    "cid": set(),
    "admin": {"app"},
    "acme_admin": {"app"},
    "acme_admin_editor": {"acme_org", "app"},
}


@pytest.mark.parametrize("caller", sorted(READS))
async def test_read_routes(world: dict[str, Any], caller: str) -> None:
    c = world["users"][caller]
    listed = {kb["id"] for kb in (await c.get("/kb")).json()}
    mine = {world["kbs"][k]["id"] for k in READS[caller]}
    assert listed & {kb["id"] for kb in world["kbs"].values()} == mine
    for key, kb in world["kbs"].items():
        name = kb["collection_name"]
        routes = [
            c.get(f"/kb/{kb['id']}"),
            c.get(f"/kb/{kb['id']}/ingestion"),
            c.get(f"/kb/{kb['id']}/documents"),
            c.get(f"/rag/collections/{name}/info"),
            c.get(f"/rag/collections/{name}/filter-values"),
            c.post("/rag/search", json={"query": "rocket skates", "collections": [name]}),
        ]
        for response in await asyncio.gather(*routes):
            if key in READS[caller]:
                assert response.status_code == 200, (caller, key, response.text)
            else:
                assert response.status_code == 404, (caller, key, response.text)
                assert response.json() == NOT_FOUND


@pytest.mark.parametrize("caller", sorted(READS))
async def test_search_never_crosses_tenants(world: dict[str, Any], caller: str) -> None:
    c = world["users"][caller]
    readable = [world["kbs"][k]["collection_name"] for k in sorted(READS[caller])]
    hits = (
        await c.post(
            "/rag/search", json={"query": "rocket skates", "collections": readable, "top_k": 20}
        )
    ).json()
    sources = {h["filename"].removesuffix(".txt") for h in hits["results"]}
    assert sources == READS[caller]
    # one unreachable collection refuses the whole search
    others = [kb["collection_name"] for k, kb in world["kbs"].items() if k not in READS[caller]]
    if others:
        r = await c.post(
            "/rag/search", json={"query": "rocket", "collections": [*readable, others[0]]}
        )
        assert r.status_code == 404
        assert r.json() == NOT_FOUND


@pytest.mark.parametrize("caller", sorted(WRITES))
async def test_write_routes(world: dict[str, Any], caller: str) -> None:
    c = world["users"][caller]
    for key, kb in world["kbs"].items():
        r = await upload(c, kb["id"], "probe.txt", "probe")
        if key in WRITES[caller]:
            assert r.status_code == 202, (caller, key, r.text)
            doc = r.json()["tracking_id"]
            assert (await c.delete(f"/rag/documents/{doc}")).status_code == 204
        else:
            assert r.status_code == 404, (caller, key, r.text)
            assert r.json() == NOT_FOUND
            assert (await c.delete(f"/kb/{kb['id']}")).status_code == 404
            by_name = await c.delete(f"/rag/collections/{kb['collection_name']}")
            assert by_name.status_code == 404, (caller, key, by_name.text)
            grant = await c.put(
                f"/kb/{kb['id']}/grants", json={"user_id": "x", "permission": "edit"}
            )
            assert grant.status_code == 404


async def test_documents_of_unreachable_collections_are_absent(world: dict[str, Any]) -> None:
    alice, bob = world["users"]["alice"], world["users"]["bob"]
    page = (await alice.get(f"/kb/{world['kbs']['acme_org']['id']}/documents")).json()
    doc = page["items"][0]["id"]
    for path in (f"/rag/documents/{doc}/retry",):
        r = await bob.post(path)
        assert r.status_code == 404
    assert (await bob.delete(f"/rag/documents/{doc}")).status_code == 404


async def test_a_name_outside_reach_is_409_and_inside_reach_adopts(
    world: dict[str, Any], client: Client
) -> None:
    bob = world["users"]["bob"]
    # an acme editor of the test's own: a twin of alice's would be in every later search of
    # hers over that name (the module's world is shared, and the order is shuffled)
    dana = client("dana", "acme", (VIEW, EDIT))
    taken = world["kbs"]["acme_org"]["collection_name"]
    r = await bob.post("/kb", json={"name": "x", "collection_name": taken, **MODEL})
    assert r.status_code == 409
    assert r.json()["error"]["details"]["fields"][0]["field"] == "collection_name"
    twin = await dana.post(
        "/kb", json={"name": "twin", "collection_name": taken, "scope": "personal", **MODEL}
    )
    assert twin.status_code == 201
    # the personal twin's chunks are not the org's: a viewer of the org KB never sees them
    assert (
        await upload(dana, twin.json()["id"], "twin.txt", "rocket skates in the twin")
    ).status_code == 202
    await wait_complete(dana, twin.json()["id"])
    hits = (
        await world["users"]["viewer"].post(
            "/rag/search", json={"query": "twin rocket skates", "collections": [taken], "top_k": 20}
        )
    ).json()
    assert all(h["filename"] != "twin.txt" for h in hits["results"])


async def test_a_derived_name_is_claimed_the_same_way(world: dict[str, Any]) -> None:
    r = await world["users"]["bob"].post("/kb", json={"name": "Quarterly Reports!", **MODEL})
    assert r.status_code == 201
    name = r.json()["collection_name"]
    assert name.startswith("quarterly_reports_")
    assert len(name.rsplit("_", 1)[1]) == 6


async def test_concurrent_creates_of_one_name_one_wins(client: Client) -> None:
    name = uniq("race")
    callers = [client(f"u{i}", f"org{i}", (VIEW, EDIT)) for i in range(6)]
    results = await asyncio.gather(
        *(c.post("/kb", json={"name": name, "collection_name": name, **MODEL}) for c in callers)
    )
    codes = sorted(r.status_code for r in results)
    assert codes == [201, 409, 409, 409, 409, 409]


async def test_unowned_content_is_refused_except_to_an_app_admin(
    world: dict[str, Any], runtime: Runtime
) -> None:
    from docproc_cli import operator

    name = uniq("ops")
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "runbook.md"
        f.write_text("# Runbook\n\nRestart the rocket skate factory at dawn.")
        totals = await operator.rag_ingest(runtime, [f], name, lambda *_: None)
    assert totals == operator.Totals(ingested=1)
    r = await world["users"]["bob"].post(
        "/kb", json={"name": name, "collection_name": name, **MODEL}
    )
    assert r.status_code == 409
    r = await world["users"]["admin"].post(
        "/kb", json={"name": name, "collection_name": name, "scope": "app", **MODEL}
    )
    assert r.status_code == 201
    # the app KB adopts the operator's unfiled chunks; nobody else reads them
    hits = (
        await world["users"]["nobody"].post(
            "/rag/search", json={"query": "restart factory", "collections": [name]}
        )
    ).json()
    assert "dawn" in hits["results"][0]["content"]


async def test_a_claim_is_refused_for_anothers_unfiled_content_never_for_its_own(
    world: dict[str, Any], runtime: Runtime
) -> None:
    """A name no base holds is refused while it holds content of anyone but the claimer's
    organization: rows describing chunks, rows an interrupted ``rag-ingest`` left
    ``processing``, chunks of the table. A failed row without a vector id describes nothing;
    an organization whose own unfiled chunks are the only ones left takes the name back."""
    users = world["users"]

    async def claim(who: str, name: str) -> int:
        r = await users[who].post("/kb", json={"name": name, "collection_name": name, **MODEL})
        return r.status_code

    # acme's own unfiled document (indexed before documents recorded their base)
    ours = uniq("ours")
    async with runtime.sessionmaker() as s, s.begin():
        vector_id = uuid.uuid4()
        s.add(
            rows.tracking_row(
                ours, None, "old.txt", DocumentStatus.DONE, vector_document_id=vector_id
            )
        )
        await ensure_table(s, ours, 384)
        await write_chunks(
            s,
            ours,
            vector_id,
            ["old"],
            rows.unit_vectors(1, 1),
            rows.chunk_stamp(None, organization_id="acme"),
        )
        s.add(
            rows.tracking_row(ours, None, "failed.txt", DocumentStatus.ERROR, organization_id=None)
        )
    assert await claim("bob", ours) == 409  # globex's claim: acme's content
    assert await claim("alice", ours) == 201  # acme's own: its new base takes it
    # the operator's interrupted rag-ingest: a processing row, no chunk yet
    interrupted = uniq("cut")
    async with runtime.sessionmaker() as s, s.begin():
        s.add(
            rows.tracking_row(
                interrupted, None, "big.md", organization_id=None, writer_kind=WriterKind.OPERATOR
            )
        )
    assert await claim("alice", interrupted) == 409
    async with runtime.sessionmaker() as s, s.begin():  # rag-drop's part: nothing stays processing
        await s.execute(
            text("DELETE FROM rag_documents WHERE collection_name = :n"), {"n": interrupted}
        )
    # a failed row without a vector id holds nothing
    failed = uniq("failed")
    async with runtime.sessionmaker() as s, s.begin():
        s.add(
            rows.tracking_row(failed, None, "bad.txt", DocumentStatus.ERROR, organization_id=None)
        )
    assert await claim("bob", failed) == 201


async def test_a_busy_name_waits_one_second_then_asks_to_retry(
    world: dict[str, Any], runtime: Runtime
) -> None:
    from docproc_common.names import lock_name

    name = uniq("busy")
    async with runtime.sessionmaker() as holder, holder.begin():
        await lock_name(holder, name)  # a KB-less chunk write in progress
        loop = asyncio.get_running_loop()
        started = loop.time()
        r = await world["users"]["alice"].post(
            "/kb", json={"name": name, "collection_name": name, **MODEL}
        )
        waited = loop.time() - started
    assert r.status_code == 409
    assert "retry" in r.json()["error"]["message"]
    assert 0.9 <= waited < 5


async def test_unknown_token_and_missing_token_are_401(client: Client) -> None:
    anonymous = client("x")
    anonymous.headers.pop("Authorization")
    assert (await anonymous.get("/kb")).status_code == 401
    anonymous.headers["Authorization"] = "Bearer garbage"
    assert (await anonymous.get("/kb")).status_code == 401
    anonymous.headers["Authorization"] = ""
    anonymous.headers["X-User-Id"] = "root"  # no route trusts a raw header
    assert (await anonymous.get("/kb")).status_code == 401


async def test_the_audit_log_records_deletes_and_grants(
    world: dict[str, Any], runtime: Runtime
) -> None:
    async with runtime.sessionmaker() as s:
        actions = {a for (a,) in (await s.execute(text("SELECT action FROM audit_log"))).all()}
    assert "knowledge_base.granted" in actions
