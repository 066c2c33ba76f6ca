"""Operator commands from the server shell: rag-collections, rag-ingest through the pipeline
(the in-process services of ``pipeline`` parse and embed what it queues), rag-drop through
the teardown."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from docproc_cli import operator
from docproc_common.db.models import EmbeddingEndpoint, SyncSource
from docproc_common.errors import Conflict, InvalidInput
from docproc_common.ingestion import IngestionConfig
from docproc_common.runtime import Runtime
from docproc_common.splitters import SPLITTER_VERSION
from docproc_embedder import repository as embedder_repository
from docproc_testing.embedding_standin import running_standin, standin_vector
from docproc_testing.rows import knowledge_base, tracking_row
from sqlalchemy import text

from .conftest import Client
from .test_lifecycle import table_exists, teardowns_done
from .test_tenancy import EDIT, MODEL, VIEW, create, uniq, wait_complete

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


async def test_rag_drop_empties_a_base_and_keeps_its_sync_sources(
    client: Client, runtime: Runtime
) -> None:
    """rag-drop empties the base instead of deleting it: its row stays as its sources'
    target, so they stay linked and active, as a default base's do when it is emptied."""
    alice = client("alice", "acme", (VIEW, EDIT))
    kb = await create(alice, uniq("dropsrc"), "org")
    async with runtime.sessionmaker() as s, s.begin():
        source = SyncSource(
            organization_id="acme",
            collection_name=kb["collection_name"],
            knowledge_base_id=uuid.UUID(kb["id"]),
            connector="web",
            config={"start_url": "https://example.com/"},
            created_by="alice",
        )
        s.add(source)
    out = await operator.rag_drop(runtime, kb["collection_name"], None)
    assert out.startswith(f"emptied knowledge base {kb['id']}")
    async with runtime.sessionmaker() as s:
        row = await s.get(SyncSource, source.id)
    assert row is not None
    assert (row.knowledge_base_id, row.collection_name, row.active) == (
        uuid.UUID(kb["id"]),
        kb["collection_name"],
        True,
    )


async def test_rag_ingest_then_rag_drop_of_a_name_no_base_holds(
    runtime: Runtime,
    pipeline: list[object],  # the teardown consumer that finishes the drop
    tmp_path: Path,
) -> None:
    name = uniq("cli")
    (tmp_path / "a.md").write_text("# A\n\nOperator content.")
    (tmp_path / "skip.exe").write_bytes(b"MZ")
    seen: list[str] = []
    totals = await operator.rag_ingest(
        runtime, sorted(tmp_path.iterdir()), name, lambda p, o: seen.append(f"{p.name}: {o}")
    )
    assert totals == operator.Totals(ingested=1)
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


async def test_rag_ingest_again_skips_an_unchanged_file_and_replaces_a_changed_one(
    runtime: Runtime,
    pipeline: list[object],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    name = uniq("again")
    page = tmp_path / "a.md"
    seen: list[str] = []

    async def ingest() -> operator.Totals:
        return await operator.rag_ingest(runtime, [page], name, lambda _p, o: seen.append(o))

    async def state() -> tuple[list[Any], set[str]]:
        async with runtime.sessionmaker() as s:
            rows = (
                await s.execute(
                    text(
                        "SELECT id, vector_document_id FROM rag_documents WHERE collection_name = :n"
                    ),
                    {"n": name},
                )
            ).all()
            contents = {c for (c,) in await s.execute(text(f"SELECT content FROM rag_{name}"))}
        return list(rows), contents

    page.write_text("# Birds\n\nPenguins live in Antarctica.")
    assert await ingest() == operator.Totals(ingested=1)
    [(first, _vdid)], contents = await state()
    assert any("Antarctica" in c for c in contents)

    assert await ingest() == operator.Totals()
    assert seen[-1] == "skipped: unchanged since it was ingested"
    assert [r[0] for r in (await state())[0]] == [first]

    page.write_text("# Birds\n\nPenguins cannot fly; they swim.")
    assert await ingest() == operator.Totals(ingested=1)
    assert seen[-1].endswith(", replacing 1")
    [(second, vdid)], contents = await state()
    assert second != first
    assert contents and all("Antarctica" not in c for c in contents)
    async with runtime.sessionmaker() as s:
        sets = {d for (d,) in await s.execute(text(f"SELECT DISTINCT document_id FROM rag_{name}"))}
    assert sets == {vdid}

    # a failed delete of the earlier chunks is logged; the new ingest still counts
    async def failing(*_a: Any, **_k: Any) -> int:
        raise ConnectionError("db-internal.example:5432 went away")

    monkeypatch.setattr(embedder_repository, "delete_documents", failing)
    page.write_text("# Birds\n\nPenguins are birds that swim.")
    assert await ingest() == operator.Totals(ingested=1)
    rows, _ = await state()
    assert len(rows) == 2  # a duplicate someone can see and delete, not a failure
    assert "the earlier ingest of" in caplog.text
    await operator.rag_drop(runtime, name, None)


async def test_rag_ingest_again_rechunks_a_file_whose_settings_or_splitter_changed(
    runtime: Runtime, pipeline: list[object], tmp_path: Path
) -> None:
    """Issue #28: unchanged bytes are skipped only when the effective ingestion settings and
    the splitter version are unchanged too; otherwise the file is re-chunked (a new chunk
    set replaces the earlier one) and counted as such."""
    name = uniq("rechunk")
    page = tmp_path / "a.md"
    page.write_text("# Otters\n\nOtters hold hands while they sleep.")
    seen: list[str] = []

    async def ingest() -> operator.Totals:
        return await operator.rag_ingest(runtime, [page], name, lambda _p, o: seen.append(o))

    async def rows() -> list[Any]:
        async with runtime.sessionmaker() as s:
            return list(
                (
                    await s.execute(
                        text(
                            "SELECT id, vector_document_id, ingestion_config, splitter_version"
                            " FROM rag_documents WHERE collection_name = :n"
                        ),
                        {"n": name},
                    )
                ).all()
            )

    async def stale(assignment: str) -> None:
        async with runtime.sessionmaker() as s, s.begin():
            await s.execute(
                text(f"UPDATE rag_documents SET {assignment} WHERE collection_name = :n"),
                {"n": name},
            )

    await ingest()
    [(first, _vdid, settings, version)] = await rows()
    assert settings == IngestionConfig().model_dump(mode="json")
    assert version == SPLITTER_VERSION

    # ingested with other settings (here: before the settings were recorded at all)
    await stale("ingestion_config = '{}'::jsonb")
    totals = await ingest()
    assert seen[-1].startswith("re-chunked"), seen
    assert totals == operator.Totals(ingested=1, rechunked=1)
    [(second, vdid, settings, _)] = await rows()
    assert second != first and settings == IngestionConfig().model_dump(mode="json")
    async with runtime.sessionmaker() as s:
        sets = {d for (d,) in await s.execute(text(f"SELECT DISTINCT document_id FROM rag_{name}"))}
    assert sets == {vdid}  # the earlier chunk set went with its row

    # cut by another splitter version
    await stale("splitter_version = splitter_version - 1")
    assert await ingest() == operator.Totals(ingested=1, rechunked=1)
    [(third, _, _, version)] = await rows()
    assert third != second and version == SPLITTER_VERSION

    # bytes, settings and splitter all unchanged: skipped
    assert await ingest() == operator.Totals()
    assert seen[-1] == "skipped: unchanged since it was ingested"
    assert [r[0] for r in await rows()] == [third]
    await operator.rag_drop(runtime, name, None)


async def test_rag_ingest_refuses_a_reserved_name_before_parsing_or_embedding(
    runtime: Runtime, tmp_path: Path
) -> None:
    """Issue #28: a name reserved by a pending deletion is refused before a file is parsed
    or embedded (the embedding service sees no request), not after the cost is spent."""
    name = uniq("resvops")
    (tmp_path / "a.md").write_text("# A\n\nOperator content nobody should pay for.")
    seen: list[str] = []
    try:
        with running_standin(dims=384) as ollama:
            async with runtime.sessionmaker() as s, s.begin():
                endpoint = EmbeddingEndpoint(
                    organization_id=None, name="ollama", base_url=ollama.url, created_by="root"
                )
                s.add(endpoint)
                await s.flush()
                s.add(
                    knowledge_base(
                        name,
                        scope="app",
                        owner_id="root",
                        organization_id=None,
                        embedding_provider="ollama",
                        embedding_model="all-minilm",
                        embedding_dim=384,
                        embedding_endpoint_id=endpoint.id,
                    )
                )
                await s.execute(
                    text(
                        "INSERT INTO collection_teardowns (id, collection_name, drop_table,"
                        " storage_paths, vector_document_ids, attempts)"
                        " VALUES (:i, :n, false, '[]', '[]', 0)"
                    ),
                    {"i": uuid.uuid4(), "n": name},
                )
            with pytest.raises(Conflict) as info:
                await operator.rag_ingest(
                    runtime, [tmp_path / "a.md"], name, lambda _p, o: seen.append(o)
                )
        assert "reserved by a pending deletion" in info.value.message
        assert [r for r in ollama.requests if r.path == "/v1/embeddings"] == []
        assert seen == []
        async with runtime.sessionmaker() as s:
            written = (
                await s.execute(
                    text("SELECT count(*) FROM rag_documents WHERE collection_name = :n"),
                    {"n": name},
                )
            ).scalar_one()
        assert written == 0
    finally:
        async with runtime.sessionmaker() as s, s.begin():
            await s.execute(
                text("DELETE FROM collection_teardowns WHERE collection_name = :n"), {"n": name}
            )


async def test_rag_ingest_never_embeds_with_a_knowledge_base_key(
    client: Client, runtime: Runtime, tmp_path: Path
) -> None:
    """Operator ingestion into a name a base holds uses the deployment's own keyless model;
    a base embedding with a keyed provider is refused, named, and nothing is written."""
    alice = client("alice", "acme", (VIEW, EDIT, "secrets:view"))
    r = await alice.post(
        "/secrets",
        json={
            "name": uniq("key"),
            "kind": "api_key",
            "provider": "openai",
            "value": {"api_key": "sk-billed-to-acme"},
        },
    )
    assert r.status_code == 201, r.text
    name = uniq("billed")
    keyed = await alice.post(
        "/kb",
        json={
            "name": name,
            "collection_name": name,
            "scope": "org",
            "embedding_provider": "openai",
            "embedding_model": "text-embedding-3-small",
            "embedding_secret_id": r.json()["id"],
        },
    )
    assert keyed.status_code == 201, keyed.text
    (tmp_path / "a.md").write_text("# A\n\nOperator content.")
    with pytest.raises(InvalidInput) as info:
        await operator.rag_ingest(runtime, [tmp_path / "a.md"], name, print)
    assert keyed.json()["id"] in info.value.message
    assert info.value.fields[0].field == "collection"
    async with runtime.sessionmaker() as s:
        rows = (
            await s.execute(
                text("SELECT count(*) FROM rag_documents WHERE collection_name = :n"),
                {"n": name},
            )
        ).scalar_one()
    assert rows == 0

    local = await create(alice, uniq("localkb"), "org")
    totals = await operator.rag_ingest(
        runtime, [tmp_path / "a.md"], local["collection_name"], print
    )
    assert totals == operator.Totals(ingested=1)
    async with runtime.sessionmaker() as s:
        owners = (
            await s.execute(
                text(
                    "SELECT organization_id, knowledge_base_id, writer_kind FROM rag_documents"
                    " WHERE collection_name = :n"
                ),
                {"n": local["collection_name"]},
            )
        ).all()
    assert [(o, k, str(w)) for o, k, w in owners] == [(None, None, "operator")]


async def test_rag_ingest_embeds_as_the_app_base_on_a_deployment_endpoint(
    runtime: Runtime, pipeline: list[object], tmp_path: Path
) -> None:
    """A name whose app-scoped base embeds on a deployment-wide Ollama resolves to that base
    (the seed's fallback for a writer of no organization): the operator's chunks are
    embedded by that service, at its width, instead of the ingest being refused."""
    name = uniq("appollama")
    (tmp_path / "a.md").write_text("# A\n\nOperator content for every organization.")
    with running_standin(dims=384) as ollama:
        async with runtime.sessionmaker() as s, s.begin():
            endpoint = EmbeddingEndpoint(
                organization_id=None, name="ollama", base_url=ollama.url, created_by="root"
            )
            s.add(endpoint)
            await s.flush()
            s.add(
                knowledge_base(
                    name,
                    scope="app",
                    owner_id="root",
                    organization_id=None,
                    embedding_provider="ollama",
                    embedding_model="all-minilm",
                    embedding_dim=384,
                    embedding_endpoint_id=endpoint.id,
                )
            )
        totals = await operator.rag_ingest(runtime, [tmp_path / "a.md"], name, print)
    assert totals == operator.Totals(ingested=1)
    embedded = [r for r in ollama.requests if r.path == "/v1/embeddings"]
    assert embedded and {r.body["model"] for r in embedded} == {"all-minilm"}
    async with runtime.sessionmaker() as s:
        chunks = (await s.execute(text(f"SELECT content, embedding FROM rag_{name}"))).all()
    assert chunks
    for content, vector in chunks:
        assert np.allclose(vector.to_numpy(), standin_vector(content, 384), atol=1e-3)
    await operator.rag_drop(runtime, name, None)


async def test_rag_unfiled_provenance_counts_and_confirms_only_unknown_global_content(
    runtime: Runtime, pipeline: list[object], tmp_path: Path
) -> None:
    """The audit reports counts by origin, never content; --confirm-operator marks the global
    unfiled content of unknown origin as the operator's, skips known document origin and
    an organization's, and a second run changes nothing."""
    name = uniq("prov")
    for stem in ("a", "b", "c"):
        (tmp_path / f"{stem}.md").write_text(f"# {stem}\n\nOperator content {stem}.")
    files = sorted(tmp_path.glob("*.md"))
    assert await operator.rag_ingest(runtime, files, name, print) == operator.Totals(ingested=3)
    async with runtime.sessionmaker() as s, s.begin():
        ids = dict(
            (
                await s.execute(
                    text("SELECT filename, id FROM rag_documents WHERE collection_name = :n"),
                    {"n": name},
                )
            ).all()
        )
        # a.md: content from before provenance was recorded (unknown, row and chunks)
        await s.execute(
            text("UPDATE rag_documents SET writer_kind = 'legacy_unknown' WHERE id = :i"),
            {"i": ids["a.md"]},
        )
        await s.execute(
            text(f"UPDATE rag_{name} SET writer_kind = NULL WHERE tracking_id = :i"),
            {"i": ids["a.md"]},
        )
        # b.md: chunks of unknown kind whose row is a known document: never re-labelled
        await s.execute(
            text("UPDATE rag_documents SET writer_kind = 'document' WHERE id = :i"),
            {"i": ids["b.md"]},
        )
        await s.execute(
            text(f"UPDATE rag_{name} SET writer_kind = NULL WHERE tracking_id = :i"),
            {"i": ids["b.md"]},
        )
        # an organization's unfiled chunk: its tenant reads it, nobody adopts it
        await s.execute(
            text(
                f"UPDATE rag_{name} SET organization_id = 'acme', writer_kind = NULL "
                "WHERE tracking_id = :i"
            ),
            {"i": ids["c.md"]},
        )
        chunks = dict(
            (
                await s.execute(text(f"SELECT tracking_id, count(*) FROM rag_{name} GROUP BY 1"))
            ).all()
        )
    a, b, c = (chunks[ids[f]] for f in ("a.md", "b.md", "c.md"))

    found = await operator.unfiled_provenance(runtime, name)
    assert (found.knowledge_bases, found.has_table) == (0, True)
    assert found.global_chunks == {"unknown": a, "document": b}
    assert found.global_rows == {"unknown": 1, "document": 1, "operator": 1}
    assert (found.org_chunks, found.org_rows) == (c, 0)

    assert await operator.confirm_operator(runtime, name) == (a, 1)
    found = await operator.unfiled_provenance(runtime, name)
    assert found.global_chunks == {"operator": a, "document": b}
    assert found.global_rows == {"document": 1, "operator": 2}
    assert found.org_chunks == c
    assert await operator.confirm_operator(runtime, name) == (0, 0)  # repeatable
    await operator.rag_drop(runtime, name, None)


async def test_rag_keyword_index_migrates_a_table_from_before_hybrid_search(
    client: Client, runtime: Runtime
) -> None:
    """A table without the keyword column gets it, read with its bases' configuration,
    and then answers hybrid searches; a second run changes nothing."""
    alice = client("alice", "acme", (VIEW, EDIT))
    name = uniq("kwmig")
    r = await alice.post(
        "/kb",
        json={"name": name, "collection_name": name, "text_search_config": "english", **MODEL},
    )
    assert r.status_code == 201, r.text
    kb = r.json()
    r = await alice.post(
        f"/kb/{kb['id']}/documents", files={"file": ("jobs.txt", b"Nightly jobs were running.")}
    )
    assert r.status_code == 202, r.text
    await wait_complete(alice, kb["id"])
    async with runtime.sessionmaker() as s, s.begin():  # as a table created before hybrid search
        await s.execute(text(f"ALTER TABLE rag_{name} DROP COLUMN content_tsv"))
    body = {"query": "job runs", "collections": [name], "mode": "hybrid"}
    r = await alice.post("/rag/search", json=body)
    assert r.status_code == 409, r.text
    assert r.json()["error"]["details"]["fields"][0]["field"] == "mode"

    said: list[str] = []
    assert await operator.rag_keyword_index(runtime, [name], lambda n, w: said.append(w)) == 1
    assert said == ["keyword index added (english)"]
    assert await operator.rag_keyword_index(runtime, [name], lambda n, w: None) == 0
    r = await alice.post("/rag/search", json={**body, "mode": "keyword"})
    assert [h["filename"] for h in r.json()["results"]] == ["jobs.txt"]  # stemmed: english
    with pytest.raises(InvalidInput):
        await operator.rag_keyword_index(runtime, ["Not A Name"], lambda n, w: None)


async def test_rag_bulk_puts_a_collection_in_bulk_mode_and_finish_folds_it(
    client: Client, runtime: Runtime
) -> None:
    alice = client("alice", "acme", (VIEW, EDIT))
    kb = await create(alice, uniq("bulkop"), "org")
    name = kb["collection_name"]
    async with runtime.sessionmaker() as s, s.begin():  # pending: the embedder's sweep waits
        s.add(tracking_row(name, uuid.UUID(kb["id"]), "pending.txt"))
    assert await operator.rag_bulk(runtime, name, finish=False) == "entered"
    assert await operator.rag_bulk(runtime, name, finish=False) == "already in bulk mode"
    info = (await alice.get(f"/rag/collections/{name}/info")).json()
    assert info["vector_index"] == "loading"
    assert await operator.rag_bulk(runtime, name, finish=True) == "folded"
    assert await operator.rag_bulk(runtime, name, finish=True) == "not_bulk"
    info = (await alice.get(f"/rag/collections/{name}/info")).json()
    assert info["vector_index"] == "ready"
    with pytest.raises(InvalidInput):
        await operator.rag_bulk(runtime, uniq("nobase"), finish=False)
