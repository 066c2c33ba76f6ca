"""A knowledge base's settings after creation: ``PATCH /kb/{id}`` and ``POST /kb/{id}/reindex``.

* ``ingestion_config`` is patched with only what changes, validated merged with the stored
  configuration (400 naming ``ingestion_config.<field>``) before anything changes;
* ``is_default`` is set and unset by the app admin only;
* a reindex re-parses the stored originals through the one pipeline; each document keeps
  its chunks until its new set replaces them in one transaction, so a search never finds
  the base empty; synced documents (no original) and types the parser does not read are
  counted, not queued.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from docproc_common.db.models import AuditLog, DocumentStatus, KnowledgeBase, RagDocument
from docproc_common.runtime import Runtime
from docproc_testing.rows import tracking_row
from sqlalchemy import func, select, text

from .conftest import Client
from .test_tenancy import EDIT, MODEL, VIEW, create, uniq, upload, wait_complete

pytestmark = pytest.mark.integration

# ~3,200 characters in 40 lines: one chunk at the default 2500, many at 300.
LONG = "\n".join(f"Line {i}: the capybara grazes by the river bank at dusk." for i in range(60))


@pytest.fixture(scope="module")
def alice(client: Client) -> httpx.AsyncClient:
    return client("alice", "acme", (VIEW, EDIT))


@pytest.fixture(scope="module")
def admin(client: Client) -> httpx.AsyncClient:
    return client("root", None, (VIEW, EDIT), admin=True)


def fields(r: httpx.Response) -> list[str]:
    return [f["field"] for f in r.json()["error"]["details"]["fields"]]


async def chunks(runtime: Runtime, kb: dict[str, Any]) -> dict[uuid.UUID, int]:
    """Chunks per vector document of ``kb``."""
    async with runtime.sessionmaker() as s:
        rows = await s.execute(
            text(
                f"SELECT document_id, count(*) FROM rag_{kb['collection_name']} "
                "WHERE knowledge_base_id = :k GROUP BY document_id"
            ),
            {"k": uuid.UUID(kb["id"])},
        )
        return {d: int(n) for d, n in rows.all()}


async def document(runtime: Runtime, kb: dict[str, Any]) -> RagDocument:
    async with runtime.sessionmaker() as s:
        return (
            await s.execute(
                select(RagDocument).where(RagDocument.knowledge_base_id == uuid.UUID(kb["id"]))
            )
        ).scalar_one()


class TestIngestionConfig:
    async def test_only_what_is_sent_changes_and_is_audited(
        self, alice: httpx.AsyncClient, runtime: Runtime
    ) -> None:
        kb = await create(alice, uniq("cfg"), "org")
        r = await alice.patch(
            f"/kb/{kb['id']}",
            json={"ingestion_config": {"chunk_size": 400, "chunking_strategy": "markdown"}},
        )
        assert r.status_code == 200, r.text
        config = r.json()["ingestion_config"]
        assert (config["chunk_size"], config["chunking_strategy"]) == (400, "markdown")
        assert (config["chunk_overlap"], config["parser"]) == (200, "pymupdf")
        assert (await alice.get(f"/kb/{kb['id']}")).json()["ingestion_config"] == config
        async with runtime.sessionmaker() as s:
            entry = (
                await s.execute(
                    select(AuditLog).where(
                        AuditLog.target == kb["id"],
                        AuditLog.action == "kb.ingestion_config_changed",
                    )
                )
            ).scalar_one()
        assert entry.details["changed"] == ["chunk_size", "chunking_strategy"]

    @pytest.mark.parametrize(
        ("change", "field"),
        [
            ({"chunk_overlap": 4096}, "ingestion_config"),  # the pair, against the stored 2500
            ({"chunk_size": 0}, "ingestion_config.chunk_size"),
            ({"ocr_language": "english"}, "ingestion_config.ocr_language"),
            ({"parser": "word"}, "ingestion_config.parser"),
            ({"max_pages": 0}, "ingestion_config.max_pages"),
            ({"parse_timeout_seconds": 1}, "ingestion_config.parse_timeout_seconds"),
            ({"image_description": True}, "ingestion_config"),  # needs a vision_profile
            ({"chunk_sizes": 10}, "ingestion_config.chunk_sizes"),
        ],
    )
    async def test_the_merged_pair_is_validated_naming_the_field(
        self, alice: httpx.AsyncClient, change: dict[str, Any], field: str
    ) -> None:
        kb = await create(alice, uniq("bad"), "org")
        r = await alice.patch(f"/kb/{kb['id']}", json={"ingestion_config": change})
        assert r.status_code == 400, r.text
        assert r.json()["error"]["message"] == "The ingestion configuration is not valid"
        assert fields(r) == [field]
        assert (await alice.get(f"/kb/{kb['id']}")).json()["ingestion_config"] == kb[
            "ingestion_config"
        ]

    async def test_null_is_refused(self, alice: httpx.AsyncClient) -> None:
        kb = await create(alice, uniq("null"), "org")
        r = await alice.patch(f"/kb/{kb['id']}", json={"ingestion_config": None})
        assert r.status_code == 400
        assert fields(r) == ["ingestion_config"]

    async def test_a_refused_field_leaves_the_other_fields_unchanged(
        self, admin: httpx.AsyncClient
    ) -> None:
        kb = await create(admin, uniq("both"), "app")
        r = await admin.patch(
            f"/kb/{kb['id']}",
            json={"is_default": True, "ingestion_config": {"chunk_overlap": 9000}},
        )
        assert r.status_code == 400
        after = (await admin.get(f"/kb/{kb['id']}")).json()
        assert after["is_default"] is False
        assert after["ingestion_config"] == kb["ingestion_config"]

    async def test_a_viewer_cannot_patch(self, client: Client, alice: httpx.AsyncClient) -> None:
        kb = await create(alice, uniq("view"), "org")
        vera = client("vera", "acme", (VIEW,))
        r = await vera.patch(f"/kb/{kb['id']}", json={"ingestion_config": {"chunk_size": 400}})
        assert r.status_code == 404
        assert r.json()["error"]["message"] == "Collection not found"


class TestDefault:
    async def test_creating_a_default_is_for_the_app_admin(
        self, alice: httpx.AsyncClient, runtime: Runtime
    ) -> None:
        name = uniq("dfl")
        r = await alice.post(
            "/kb", json={"name": name, "collection_name": name, "is_default": True, **MODEL}
        )
        assert r.status_code == 403
        assert fields(r) == ["is_default"]
        async with runtime.sessionmaker() as s:
            count = await s.execute(
                select(func.count())
                .select_from(KnowledgeBase)
                .where(KnowledgeBase.collection_name == name)
            )
        assert count.scalar() == 0

    async def test_the_app_admin_sets_and_unsets_it(
        self, alice: httpx.AsyncClient, admin: httpx.AsyncClient, runtime: Runtime
    ) -> None:
        kb = await create(alice, uniq("dfl"), "org")
        for value in (True, False):
            r = await alice.patch(f"/kb/{kb['id']}", json={"is_default": value})
            assert r.status_code == 403
            assert fields(r) == ["is_default"]
        r = await admin.patch(f"/kb/{kb['id']}", json={"is_default": True})
        assert r.status_code == 200, r.text
        assert r.json()["is_default"] is True
        # a default is emptied, not deleted
        assert (await alice.delete(f"/kb/{kb['id']}")).json()["knowledge_bases_emptied"] == 1
        assert (await alice.get(f"/kb/{kb['id']}")).status_code == 200
        r = await admin.patch(f"/kb/{kb['id']}", json={"is_default": False})
        assert r.status_code == 200
        assert r.json()["is_default"] is False
        assert (await alice.delete(f"/kb/{kb['id']}")).json()["knowledge_bases_deleted"] == 1
        assert (await alice.get(f"/kb/{kb['id']}")).status_code == 404
        async with runtime.sessionmaker() as s:
            actions = {
                a
                for (a,) in await s.execute(
                    select(AuditLog.action).where(AuditLog.target == kb["id"])
                )
            }
        assert {"kb.default_set", "kb.default_unset"} <= actions

    async def test_an_unknown_base_is_not_found_for_the_admin_too(
        self, admin: httpx.AsyncClient
    ) -> None:
        r = await admin.patch(f"/kb/{uuid.uuid4()}", json={"is_default": True})
        assert r.status_code == 404


class TestReindex:
    async def test_new_chunks_replace_the_old_and_search_never_goes_empty(
        self, alice: httpx.AsyncClient, runtime: Runtime
    ) -> None:
        kb = await create(alice, uniq("rx"), "org")
        assert (await upload(alice, kb["id"], "capy.txt", LONG)).status_code == 202
        await wait_complete(alice, kb["id"])
        before = await document(runtime, kb)
        assert await chunks(runtime, kb) == {before.vector_document_id: before.chunk_count}
        patch = {"ingestion_config": {"chunk_size": 300, "chunk_overlap": 30}}
        assert (await alice.patch(f"/kb/{kb['id']}", json=patch)).status_code == 200
        assert await chunks(runtime, kb) == {before.vector_document_id: before.chunk_count}

        seen: list[int] = []
        done = asyncio.Event()

        async def watch() -> None:
            while not done.is_set():
                seen.append(sum((await chunks(runtime, kb)).values()))
                await asyncio.sleep(0)

        watcher = asyncio.create_task(watch())
        r = await alice.post(f"/kb/{kb['id']}/reindex")
        assert r.status_code == 202, r.text
        assert r.json() == {
            "knowledge_base_id": kb["id"],
            "queued": 1,
            "skipped_no_original": 0,
            "skipped_unsupported": 0,
        }
        status = (await alice.get(f"/kb/{kb['id']}/ingestion")).json()
        assert (status["indexing_status"], status["processing_count"]) == ("indexing", 1)
        final = await wait_complete(alice, kb["id"])
        done.set()
        await watcher
        assert (final["indexed_count"], final["document_count"]) == (1, 1)
        assert seen and 0 not in seen

        after = await document(runtime, kb)
        assert after.id == before.id
        assert after.vector_document_id != before.vector_document_id
        assert after.chunk_count > before.chunk_count
        assert after.ingestion_config["chunk_size"] == 300
        assert await chunks(runtime, kb) == {after.vector_document_id: after.chunk_count}
        hits = await alice.post(
            "/rag/search",
            json={"query": "capybara river", "collections": [kb["collection_name"]]},
        )
        assert {h["vector_document_id"] for h in hits.json()["results"]} == {
            str(after.vector_document_id)
        }

    async def test_a_failed_reparse_keeps_the_old_chunks(
        self, alice: httpx.AsyncClient, runtime: Runtime
    ) -> None:
        kb = await create(alice, uniq("rxf"), "org")
        assert (await upload(alice, kb["id"], "capy.txt", LONG)).status_code == 202
        await wait_complete(alice, kb["id"])
        before = await document(runtime, kb)
        assert before.storage_path is not None
        await runtime.storage.delete(before.storage_path)  # the parser cannot read it again
        assert (await alice.post(f"/kb/{kb['id']}/reindex")).json()["queued"] == 1
        final = await wait_complete(alice, kb["id"])
        assert final["failed_count"] == 1
        after = await document(runtime, kb)
        assert after.status == DocumentStatus.ERROR
        assert after.vector_document_id == before.vector_document_id
        assert await chunks(runtime, kb) == {before.vector_document_id: before.chunk_count}

    async def test_synced_and_unreadable_documents_are_counted_not_queued(
        self, alice: httpx.AsyncClient, runtime: Runtime
    ) -> None:
        kb = await create(alice, uniq("rxs"), "org")
        name, kb_id = kb["collection_name"], uuid.UUID(kb["id"])
        async with runtime.sessionmaker() as s, s.begin():
            synced = tracking_row(
                name,
                kb_id,
                "a.md",
                DocumentStatus.DONE,
                source="s3",
                source_path="s3://bucket/a.md",
            )
            sheet = tracking_row(
                name, kb_id, "b.xlsx", DocumentStatus.DONE, storage_path=f"rag/{name}/x_b.xlsx"
            )
            s.add_all([synced, sheet])
        r = await alice.post(f"/kb/{kb['id']}/reindex")
        assert r.status_code == 202
        assert (r.json()["queued"], r.json()["skipped_no_original"]) == (0, 1)
        assert r.json()["skipped_unsupported"] == 1
        status = (await alice.get(f"/kb/{kb['id']}/ingestion")).json()
        assert (status["indexing_status"], status["indexed_count"]) == ("complete", 2)

    async def test_reindex_needs_edit(self, client: Client, alice: httpx.AsyncClient) -> None:
        kb = await create(alice, uniq("rxv"), "org")
        vera = client("vera", "acme", (VIEW,))
        r = await vera.post(f"/kb/{kb['id']}/reindex")
        assert r.status_code == 404
        assert r.json()["error"]["message"] == "Collection not found"
