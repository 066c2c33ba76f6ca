"""Collection lifecycle on the running pipeline: teardown after commit, siblings, defaults, races, sweep."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

import httpx
import pytest
from docproc_common import vectorstore
from docproc_common.db.models import DocumentStatus
from docproc_common.runtime import Runtime
from docproc_teardown import service as teardown
from docproc_testing import rows
from sqlalchemy import text

from .conftest import Client
from .test_tenancy import EDIT, MODEL, VIEW, create, uniq, upload, wait_complete

pytestmark = pytest.mark.integration


async def scalar(runtime: Runtime, sql: str, **params: Any) -> Any:
    async with runtime.sessionmaker() as s:
        return (await s.execute(text(sql), params)).scalar()


async def table_exists(runtime: Runtime, name: str) -> bool:
    return bool(await scalar(runtime, "SELECT to_regclass(:t) IS NOT NULL", t=f"public.rag_{name}"))


async def chunks_of(runtime: Runtime, name: str, kb_id: str) -> int:
    if not await table_exists(runtime, name):
        return 0
    return int(
        await scalar(
            runtime,
            f"SELECT count(*) FROM rag_{name} WHERE knowledge_base_id = :k",
            k=uuid.UUID(kb_id),
        )
    )


async def teardowns_done(runtime: Runtime, name: str) -> None:
    for _ in range(600):
        if not await scalar(
            runtime, "SELECT count(*) FROM collection_teardowns WHERE collection_name = :n", n=name
        ):
            return
        await asyncio.sleep(0.1)
    raise TimeoutError("teardown did not finish")


@pytest.fixture(scope="module")
def admin(client: Client) -> httpx.AsyncClient:
    return client("root", None, (VIEW, EDIT), admin=True)


async def test_delete_drops_the_table_after_commit_and_frees_the_name(
    admin: httpx.AsyncClient, runtime: Runtime
) -> None:
    kb = await create(admin, uniq("gone"), "app")
    name = kb["collection_name"]
    assert (await upload(admin, kb["id"], "a.txt", "alpha beta")).status_code == 202
    await wait_complete(admin, kb["id"])
    assert await table_exists(runtime, name)
    files = runtime.settings.storage.media_dir / "rag" / name
    assert not list((files / "chunks").rglob("*.json"))  # a chunk set is deleted once indexed
    assert list(files.rglob("*_a.txt"))  # the original stays for retries and downloads
    out = (await admin.delete(f"/kb/{kb['id']}")).json()
    assert out["table_dropped"] is True
    assert out["documents_deleted"] == 1
    await teardowns_done(runtime, name)
    assert not await table_exists(runtime, name)
    assert not files.exists()
    assert not await scalar(
        runtime, "SELECT count(*) FROM rag_documents WHERE collection_name = :n", n=name
    )
    assert (
        await admin.post(
            "/kb", json={"name": name, "collection_name": name, "scope": "app", **MODEL}
        )
    ).status_code == 201


async def test_a_reserved_name_refuses_claims_and_uploads(
    admin: httpx.AsyncClient, runtime: Runtime
) -> None:
    kb = await create(admin, uniq("resv"), "app")
    name = kb["collection_name"]
    failed = rows.tracking_row(
        name,
        uuid.UUID(kb["id"]),
        "failed.txt",
        DocumentStatus.ERROR,
        organization_id=None,
        storage_path=f"rag/{name}/failed.txt",
        error_message="stand-in",
    )
    async with runtime.sessionmaker() as s, s.begin():
        s.add(failed)
        await s.execute(
            text(
                "INSERT INTO collection_teardowns (id, collection_name, drop_table, storage_paths, vector_document_ids, attempts) "
                "VALUES (:i, :n, false, '[]', '[]', 0)"
            ),
            {"i": uuid.uuid4(), "n": name},
        )
    # a retry and a reindex are refused too: neither may queue work the teardown would race
    retry = await admin.post(f"/rag/documents/{failed.id}/retry")
    assert retry.status_code == 409, retry.text
    assert (
        retry.json()["error"]["message"]
        == "The collection is being deleted; the retry was not queued"
    )
    reindex = await admin.post(f"/kb/{kb['id']}/reindex")
    assert reindex.status_code == 409, reindex.text
    assert (
        await scalar(runtime, "SELECT status FROM rag_documents WHERE id = :d", d=failed.id)
        == "error"
    )
    r = await admin.post(
        "/kb", json={"name": name, "collection_name": name, "scope": "app", **MODEL}
    )
    assert r.status_code == 409
    r = await upload(admin, kb["id"], "late.txt", "too late")
    assert r.status_code == 409
    assert (
        await scalar(
            runtime, "SELECT count(*) FROM rag_documents WHERE collection_name = :n", n=name
        )
        == 1  # the failed row only: the late upload stored nothing
    )


async def test_a_sibling_keeps_the_table_and_only_the_deleted_kbs_chunks_go(
    client: Client, runtime: Runtime
) -> None:
    alice = client("alice", "acme", (VIEW, EDIT))
    org = await create(alice, uniq("sib"), "org")
    name = org["collection_name"]
    r = await alice.post(
        "/kb", json={"name": "mine", "collection_name": name, "scope": "personal", **MODEL}
    )
    personal = r.json()
    for kb in (org, personal):
        assert (
            await upload(alice, kb["id"], f"{kb['scope']}.txt", f"notes of the {kb['scope']} base")
        ).status_code == 202
        await wait_complete(alice, kb["id"])
    out = (await alice.delete(f"/kb/{personal['id']}")).json()
    assert out["table_dropped"] is False
    await teardowns_done(runtime, name)
    assert await table_exists(runtime, name)
    assert await chunks_of(runtime, name, personal["id"]) == 0
    assert await chunks_of(runtime, name, org["id"]) > 0


async def test_a_default_kb_is_emptied_not_deleted(
    client: Client, admin: httpx.AsyncClient, runtime: Runtime
) -> None:
    alice = client("alice", "acme", (VIEW, EDIT))
    name = uniq("dflt")
    kb = await create(alice, name, "org")
    # the app admin makes it the organization's default (issue #12: nobody else may)
    assert (await admin.patch(f"/kb/{kb['id']}", json={"is_default": True})).status_code == 200
    assert (await upload(alice, kb["id"], "d.txt", "default base text")).status_code == 202
    await wait_complete(alice, kb["id"])
    out = (await alice.delete(f"/kb/{kb['id']}")).json()
    assert out["knowledge_bases_emptied"] == 1
    await teardowns_done(runtime, name)
    assert not await table_exists(runtime, name)
    assert (await alice.get(f"/kb/{kb['id']}")).status_code == 200  # the row stays
    assert (await alice.get(f"/kb/{kb['id']}/ingestion")).json()["document_count"] == 0
    # the next upload recreates the table
    assert (await upload(alice, kb["id"], "again.txt", "back again")).status_code == 202
    assert (await wait_complete(alice, kb["id"]))["indexed_count"] == 1
    assert await table_exists(runtime, name)


async def test_a_kept_default_base_keeps_the_chunks_no_row_describes(
    client: Client, admin: httpx.AsyncClient, runtime: Runtime
) -> None:
    """Emptying a default base whose table stays (a sibling holds the name) removes only
    its deleted documents' chunks: a chunk stamped with the base that no document row
    describes stays with the base, which stays on the name (the seed, #2560)."""
    alice = client("alice", "acme", (VIEW, EDIT))
    default = await create(alice, uniq("keptdf"), "org")
    name, kb_id = default["collection_name"], uuid.UUID(default["id"])
    assert (await admin.patch(f"/kb/{kb_id}", json={"is_default": True})).status_code == 200
    sibling = (
        await alice.post(
            "/kb", json={"name": "mine", "collection_name": name, "scope": "personal", **MODEL}
        )
    ).json()
    assert (await upload(alice, default["id"], "d.txt", "default base text")).status_code == 202
    await wait_complete(alice, default["id"])
    uploaded = await chunks_of(runtime, name, default["id"])
    assert uploaded > 0
    async with runtime.sessionmaker() as s, s.begin():  # a chunk set with no tracking row
        vectors = rows.unit_vectors(1, dim=default["embedding_dim"])
        await vectorstore.write_chunks(
            s, name, uuid.uuid4(), ["no row"], vectors, rows.chunk_stamp(kb_id)
        )
    assert await chunks_of(runtime, name, default["id"]) == uploaded + 1

    out = (await alice.delete(f"/kb/{kb_id}")).json()
    assert (out["knowledge_bases_emptied"], out["table_dropped"]) == (1, False)
    await teardowns_done(runtime, name)
    assert await chunks_of(runtime, name, default["id"]) == 1  # the deleted document's went
    assert await scalar(runtime, f"SELECT count(*) FROM rag_{name} WHERE content = 'no row'") == 1
    assert (await alice.get(f"/kb/{sibling['id']}")).status_code == 200


async def test_delete_while_twenty_documents_ingest_leaves_no_chunk(
    client: Client, runtime: Runtime
) -> None:
    alice = client("alice", "acme", (VIEW, EDIT))
    keeper = await create(alice, uniq("racy"), "org")
    name = keeper["collection_name"]
    assert (await upload(alice, keeper["id"], "keep.txt", "the keeper stays")).status_code == 202
    await wait_complete(alice, keeper["id"])
    kept = await chunks_of(runtime, name, keeper["id"])
    doomed = (
        await alice.post(
            "/kb", json={"name": "doomed", "collection_name": name, "scope": "personal", **MODEL}
        )
    ).json()
    uploads = await asyncio.gather(
        *(
            upload(alice, doomed["id"], f"d{i}.txt", f"document number {i} " * 200)
            for i in range(20)
        )
    )
    assert all(u.status_code == 202 for u in uploads)
    await asyncio.sleep(0.5)  # some are parsed or embedding by now
    assert (await alice.delete(f"/kb/{doomed['id']}")).status_code == 200
    await teardowns_done(runtime, name)
    for _ in range(100):  # let every in-flight event drain
        pending = await scalar(
            runtime, "SELECT count(*) FROM embedded_deliveries WHERE done_at IS NULL"
        )
        if not pending:
            break
        await asyncio.sleep(0.2)
    assert await chunks_of(runtime, name, doomed["id"]) == 0
    assert await chunks_of(runtime, name, keeper["id"]) == kept


async def test_a_document_deleted_while_indexing_leaves_no_chunks(
    client: Client, runtime: Runtime
) -> None:
    alice = client("alice", "acme", (VIEW, EDIT))
    kb = await create(alice, uniq("ddel"), "org")
    name = kb["collection_name"]
    r = await upload(alice, kb["id"], "big.txt", "a long document about deletion " * 2000)
    doc = r.json()["tracking_id"]
    assert (await alice.delete(f"/rag/documents/{doc}")).status_code == 204
    for _ in range(100):
        if not await scalar(
            runtime, "SELECT count(*) FROM embedded_deliveries WHERE done_at IS NULL"
        ):
            break
        await asyncio.sleep(0.2)
    assert await chunks_of(runtime, name, kb["id"]) == 0


async def test_the_sweep_finishes_a_lost_teardown(
    admin: httpx.AsyncClient, runtime: Runtime
) -> None:
    kb = await create(admin, uniq("lost"), "app")
    name = kb["collection_name"]
    assert (await upload(admin, kb["id"], "a.txt", "lost and found")).status_code == 202
    await wait_complete(admin, kb["id"])
    # A teardown whose event never ran (a crash before dispatch, or a dead-lettered run), an hour old.
    async with runtime.sessionmaker() as s, s.begin():
        await s.execute(
            text("DELETE FROM knowledge_bases WHERE id = :k"), {"k": uuid.UUID(kb["id"])}
        )
        await s.execute(
            text(
                "INSERT INTO collection_teardowns (id, collection_name, drop_table, storage_paths, vector_document_ids, attempts, created_at) "
                "VALUES (:i, :n, true, '[]', '[]', 0, now() - interval '2 hours')"
            ),
            {"i": uuid.uuid4(), "n": name},
        )
    assert await teardown.sweep_once(runtime, older_than=timedelta(hours=1)) >= 1
    assert not await table_exists(runtime, name)
    assert not await scalar(
        runtime, "SELECT count(*) FROM collection_teardowns WHERE collection_name = :n", n=name
    )


async def test_a_teardown_that_crashes_mid_drop_is_finished_by_its_redelivery(
    admin: httpx.AsyncClient, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = await create(admin, uniq("crash"), "app")
    name = kb["collection_name"]
    assert (await upload(admin, kb["id"], "a.txt", "crash test")).status_code == 202
    await wait_complete(admin, kb["id"])
    real_drop = vectorstore.drop_table
    calls = 0

    async def dying_drop(session: Any, collection: str) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ConnectionError("the pod died mid-drop")
        await real_drop(session, collection)

    monkeypatch.setattr("docproc_teardown.service.drop_table", dying_drop)
    assert (await admin.delete(f"/kb/{kb['id']}")).status_code == 200
    await teardowns_done(runtime, name)
    assert calls >= 2
    assert not await table_exists(runtime, name)


async def test_deleting_an_organization_tears_down_its_bases_only(
    client: Client, runtime: Runtime
) -> None:
    org = uniq("org")
    member = client("m1", org, (VIEW, EDIT))
    other = client("o1", uniq("other"), (VIEW, EDIT))
    mine = await create(member, uniq("orgkb"), "org")
    personal = await create(member, uniq("orgp"), "personal")
    theirs = await create(other, uniq("theirs"), "org")
    for kb, c in ((mine, member), (personal, member), (theirs, other)):
        assert (await upload(c, kb["id"], "x.txt", "tenant data")).status_code == 202
        await wait_complete(c, kb["id"])
    assert (await member.delete(f"/organizations/{org}")).status_code == 403
    admin = client("root", None, (VIEW, EDIT), admin=True)
    out = (await admin.delete(f"/organizations/{org}")).json()
    assert sorted(o["collection_name"] for o in out) == sorted(
        [mine["collection_name"], personal["collection_name"]]
    )
    for kb in (mine, personal):
        await teardowns_done(runtime, kb["collection_name"])
        assert not await table_exists(runtime, kb["collection_name"])
        assert (await member.get(f"/kb/{kb['id']}")).status_code == 404
    assert (await other.get(f"/kb/{theirs['id']}")).status_code == 200
    assert await chunks_of(runtime, theirs["collection_name"], theirs["id"]) > 0


async def test_deleting_an_account_takes_its_personal_bases(
    client: Client, runtime: Runtime
) -> None:
    user = uniq("leaver")
    leaver = client(user, "acme", (VIEW, EDIT))
    personal = await create(leaver, uniq("lvp"), "personal")
    org_kb = await create(leaver, uniq("lvo"), "org")
    admin = client("root", None, (VIEW, EDIT), admin=True)
    out = (await admin.delete(f"/users/{user}")).json()
    assert [o["collection_name"] for o in out] == [personal["collection_name"]]
    assert (await leaver.get(f"/kb/{personal['id']}")).status_code == 404
    colleague = client(uniq("colleague"), "acme", (VIEW,))
    assert (await colleague.get(f"/kb/{org_kb['id']}")).status_code == 200
    async with runtime.sessionmaker() as s:
        actions = [
            a
            for (a,) in (
                await s.execute(
                    text("SELECT action FROM audit_log WHERE target = :t"), {"t": personal["id"]}
                )
            ).all()
        ]
    assert actions == ["knowledge_base.created", "knowledge_base.deleted"]


async def test_an_oversized_document_is_413_and_leaves_nothing(
    admin: httpx.AsyncClient, runtime: Runtime
) -> None:
    kb = await create(admin, uniq("big"), "app")
    limit = runtime.settings.limits.max_upload_size_mb * 1024 * 1024
    r = await admin.post(
        f"/kb/{kb['id']}/documents", files={"file": ("big.txt", b"x" * (limit + 1))}
    )
    assert r.status_code == 413
    assert r.json()["error"]["details"]["fields"][0]["field"] == "file"
    assert not await scalar(
        runtime,
        "SELECT count(*) FROM rag_documents WHERE knowledge_base_id = :k",
        k=uuid.UUID(kb["id"]),
    )
    assert not (runtime.settings.storage.media_dir / "rag" / kb["collection_name"]).exists()
    missing = await admin.post(f"/kb/{kb['id']}/documents", data={"organizational_unit": "x"})
    assert missing.status_code == 400
    assert missing.json()["error"]["details"]["fields"][0]["field"] == "file"
