"""Deleting the last base on a name: what it takes, when the table stays, what is left behind.

The last bases take their own rows and the unfiled rows of their tenant (an app-scoped
base: the operator's). Their table stays while it holds an unfiled chunk they do not
take; once it is dropped, the rows left on the name are marked failed and keep their
files. ``rag-drop`` empties a base instead of deleting it and drops the last table
whatever it holds.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from docproc_cli import operator
from docproc_common.db.models import DocumentStatus
from docproc_common.runtime import Runtime
from docproc_common.vectorstore import ensure_table, write_chunks
from docproc_teardown.service import LEFT_BEHIND
from docproc_testing.rows import chunk_stamp, tracking_row
from sqlalchemy import func, text

from .conftest import Client
from .test_lifecycle import chunks_of, scalar, table_exists, teardowns_done
from .test_operator_content import hits, rag_ingest
from .test_tenancy import EDIT, MODEL, NOT_FOUND, VIEW, create, uniq, upload, wait_complete

pytestmark = pytest.mark.integration


async def unfiled(
    runtime: Runtime, name: str, organization_id: str, *, chunks: bool = True
) -> dict[str, Any]:
    """A legacy unfiled document of ``organization_id`` on ``name``: a ``done`` row, its stored
    original and (``chunks``) its chunk, written as before documents recorded their base."""
    path = f"rag/{name}/{uuid.uuid4().hex}_legacy.txt"
    await runtime.storage.put(path, b"Legacy lighthouse keepers.")
    vector = np.random.default_rng(7).normal(size=(1, 384)).astype(np.float32)
    async with runtime.sessionmaker() as s, s.begin():
        row = tracking_row(
            name,
            None,
            "legacy.txt",
            DocumentStatus.DONE,
            organization_id=organization_id,
            storage_path=path,
            vector_document_id=uuid.uuid4(),
            chunk_count=1,
            completed_at=func.now(),
        )
        s.add(row)
        await s.flush()
        if chunks:
            await ensure_table(s, name, 384)
            stamp = chunk_stamp(
                None, organization_id=organization_id, tracking_id=row.id, filename=row.filename
            )
            assert row.vector_document_id is not None
            await write_chunks(s, name, row.vector_document_id, ["legacy"], vector, stamp)
    return {"id": row.id, "vdid": row.vector_document_id, "path": path}


async def row_of(runtime: Runtime, doc_id: uuid.UUID | str) -> Any:
    async with runtime.sessionmaker() as s:
        return (
            await s.execute(
                text(
                    "SELECT status, error_message, chunk_count, vector_document_id "
                    "FROM rag_documents WHERE id = :d"
                ),
                {"d": uuid.UUID(str(doc_id))},
            )
        ).one_or_none()


async def chunks_of_document(runtime: Runtime, name: str, vdid: uuid.UUID) -> int:
    return int(
        await scalar(runtime, f"SELECT count(*) FROM rag_{name} WHERE document_id = :d", d=vdid)
    )


async def org_base(client: Client, prefix: str) -> tuple[httpx.AsyncClient, dict[str, Any], str]:
    """alice of acme (view, edit), an organization base of hers with ``ours.txt`` indexed, and
    its collection's name."""
    alice = client("alice", "acme", (VIEW, EDIT))
    kb = await create(alice, uniq(prefix), "org")
    assert (await upload(alice, kb["id"], "ours.txt", "Our lighthouse keepers.")).status_code == 202
    await wait_complete(alice, kb["id"])
    return alice, kb, kb["collection_name"]


async def personal_base(alice: httpx.AsyncClient, name: str) -> dict[str, Any]:
    """alice's personal base on the collection ``name``, with ``mine.txt`` indexed."""
    r = await alice.post(
        "/kb", json={"name": "p", "collection_name": name, "scope": "personal", **MODEL}
    )
    personal: dict[str, Any] = r.json()
    assert (await upload(alice, personal["id"], "mine.txt", "My keepers.")).status_code == 202
    await wait_complete(alice, personal["id"])
    return personal


def stored(runtime: Runtime, path: str) -> bool:
    return (runtime.settings.storage.media_dir / path).exists()


async def test_an_org_bases_last_delete_keeps_a_table_holding_operator_chunks(
    client: Client, runtime: Runtime, tmp_path: Path
) -> None:
    alice, kb, name = await org_base(client, "keepop")
    doc = await rag_ingest(runtime, tmp_path, name, "# Keepers\n\nThe operator's keepers.")
    out = (await alice.delete(f"/kb/{kb['id']}")).json()
    assert (out["table_dropped"], out["documents_deleted"]) == (False, 1)
    await teardowns_done(runtime, name)
    assert await table_exists(runtime, name)
    assert await chunks_of(runtime, name, kb["id"]) == 0
    assert (await row_of(runtime, doc)).status == "done"
    # the name is as rag-ingest leaves it: an app admin adopts it, with the operator's chunks
    admin = client("root", None, (VIEW, EDIT), admin=True)
    await create(admin, name, "app")
    assert await hits(admin, collections=[name]) == {f"{name}.md"}


async def test_the_last_delete_takes_its_tenants_unfiled_rows_and_keeps_anothers(
    client: Client, runtime: Runtime
) -> None:
    alice, kb, name = await org_base(client, "tenants")
    ours, theirs = await unfiled(runtime, name, "acme"), await unfiled(runtime, name, "globex")
    out = (await alice.delete(f"/rag/collections/{name}")).json()
    assert (out["table_dropped"], out["documents_deleted"]) == (False, 2)
    await teardowns_done(runtime, name)
    assert await table_exists(runtime, name)
    assert await chunks_of(runtime, name, kb["id"]) == 0
    assert await row_of(runtime, ours["id"]) is None
    assert await chunks_of_document(runtime, name, ours["vdid"]) == 0
    assert not stored(runtime, ours["path"])
    # another tenant's: no authority over it, so it stays as it was
    assert (await row_of(runtime, theirs["id"])).status == "done"
    assert await chunks_of_document(runtime, name, theirs["vdid"]) == 1
    assert stored(runtime, theirs["path"])


async def test_a_dropped_table_marks_the_rows_it_leaves_behind_failed(
    client: Client, runtime: Runtime
) -> None:
    alice, kb, name = await org_base(client, "behind")
    theirs = await unfiled(runtime, name, "globex", chunks=False)
    assert (await alice.delete(f"/kb/{kb['id']}")).json()["table_dropped"] is True
    await teardowns_done(runtime, name)
    assert not await table_exists(runtime, name)
    row = await row_of(runtime, theirs["id"])
    assert (row.status, row.error_message, row.chunk_count, row.vector_document_id) == (
        "error",
        LEFT_BEHIND,
        0,
        None,
    )
    assert stored(runtime, theirs["path"])  # the rows left behind keep their files


async def test_rag_drop_empties_the_one_base_and_drops_the_table_whatever_it_holds(
    client: Client, runtime: Runtime, tmp_path: Path
) -> None:
    alice, kb, name = await org_base(client, "opdrop")
    doc = await rag_ingest(runtime, tmp_path, name, "# Keepers\n\nThe operator's keepers.")
    out = await operator.rag_drop(runtime, name, None)
    assert out == f"emptied knowledge base {kb['id']} (1 documents); table dropped: True"
    await teardowns_done(runtime, name)
    assert not await table_exists(runtime, name)
    assert (await alice.get(f"/kb/{kb['id']}")).status_code == 200  # emptied, not deleted
    assert (await alice.get(f"/kb/{kb['id']}/documents")).json()["total"] == 0
    row = await row_of(runtime, doc)
    assert (row.status, row.error_message, row.chunk_count) == ("error", LEFT_BEHIND, 0)
    async with runtime.sessionmaker() as s:
        actions = (
            await s.execute(
                text("SELECT action FROM audit_log WHERE target = :t ORDER BY id"),
                {"t": kb["id"]},
            )
        ).scalars()
        assert list(actions)[-1] == "knowledge_base.emptied"
    assert (await upload(alice, kb["id"], "again.txt", "Keepers again.")).status_code == 202
    assert (await wait_complete(alice, kb["id"]))["indexed_count"] == 1


async def test_rag_drop_of_one_of_several_bases_empties_it_and_the_table_stays(
    client: Client, runtime: Runtime
) -> None:
    alice, kb, name = await org_base(client, "opsome")
    personal = await personal_base(alice, name)
    out = await operator.rag_drop(runtime, name, uuid.UUID(personal["id"]))
    assert out.endswith("table dropped: False")
    await teardowns_done(runtime, name)
    assert (await alice.get(f"/kb/{personal['id']}")).status_code == 200
    assert (await alice.get(f"/kb/{personal['id']}/documents")).json()["total"] == 0
    assert await chunks_of(runtime, name, personal["id"]) == 0
    assert await hits(alice, collections=[name]) == {"ours.txt"}


async def test_delete_by_name_deletes_only_the_bases_the_caller_may_write(
    client: Client, runtime: Runtime
) -> None:
    alice, kb, name = await org_base(client, "byname")
    personal = await personal_base(alice, name)
    admin = client("root", None, (VIEW, EDIT), admin=True)
    assert (await admin.delete(f"/rag/collections/{name}")).json() == NOT_FOUND
    colleague = client("carol", "acme", (VIEW, EDIT))
    out = (await colleague.delete(f"/rag/collections/{name}")).json()
    assert (out["knowledge_bases_deleted"], out["table_dropped"]) == (1, False)
    await teardowns_done(runtime, name)
    assert (await alice.get(f"/kb/{kb['id']}")).status_code == 404
    assert (await alice.get(f"/kb/{personal['id']}/documents")).json()["total"] == 1
    assert await hits(alice, collections=[name]) == {"mine.txt"}
