"""Operator commands from the server shell: rag-collections, rag-ingest, rag-drop through the teardown."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from docproc_cli import operator
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.errors import InvalidInput
from docproc_common.runtime import Runtime

from .conftest import Client
from .test_lifecycle import table_exists, teardowns_done
from .test_tenancy import EDIT, MODEL, VIEW, create, uniq

pytestmark = pytest.mark.integration


async def test_rag_drop_refuses_a_shared_name_and_lists_the_bases(
    client: Client, runtime: Runtime
) -> None:
    alice = client("alice", "acme", (VIEW, EDIT))
    org = await create(alice, uniq("drop"), "org")
    name = org["collection_name"]
    personal = (
        await alice.post(
            "/kb", json={"name": "p", "collection_name": name, "scope": "personal", **MODEL}
        )
    ).json()
    with pytest.raises(InvalidInput) as info:
        await operator.rag_drop(runtime, name, None)
    assert org["id"] in info.value.message
    assert personal["id"] in info.value.message
    out = await operator.rag_drop(runtime, name, uuid.UUID(personal["id"]))
    assert "table dropped: False" in out
    assert (await alice.get(f"/kb/{org['id']}")).status_code == 200


async def test_rag_ingest_then_rag_drop_of_a_name_no_base_holds(
    runtime: Runtime, tmp_path: Path
) -> None:
    name = uniq("cli")
    (tmp_path / "a.md").write_text("# A\n\nOperator content.")
    (tmp_path / "skip.exe").write_bytes(b"MZ")
    seen: list[str] = []
    ingested, failed = await operator.rag_ingest(
        runtime,
        EmbeddingClients(runtime.settings),
        sorted(tmp_path.iterdir()),
        name,
        lambda p, o: seen.append(f"{p.name}: {o}"),
    )
    assert (ingested, failed) == (1, 0)
    assert any("skip.exe: skipped" in s for s in seen)
    rows = {r.name: r for r in await operator.rag_collections(runtime)}
    assert "documents" not in rows  # rag_documents is a model table, never a collection
    assert rows[name].has_table
    assert rows[name].knowledge_bases == 0
    assert rows[name].documents == 1
    assert "removed 1 document rows" in await operator.rag_drop(runtime, name, None)
    await teardowns_done(runtime, name)
    assert not await table_exists(runtime, name)
    assert name not in {r.name for r in await operator.rag_collections(runtime)}
