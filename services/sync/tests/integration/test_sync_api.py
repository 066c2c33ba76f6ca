"""The sync routes of the public API (``docproc_upload.sync_sources``) on a real database, in-process."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from docproc_common.auth import EDIT, VIEW
from docproc_common.db.models import (
    AuditLog,
    CollectionTeardown,
    KnowledgeBase,
    SyncLog,
    SyncSource,
)
from docproc_sync.testing import SyncBed
from docproc_testing.connectors import SHIPPED
from docproc_upload.sync_sources.service import audience_sentence
from sqlalchemy import delete, select, update

from .conftest import Client

pytestmark = pytest.mark.integration

KEYS = {"access_key_id": "AKIAEXAMPLE", "secret_access_key": "example"}
S3 = {"bucket": "acme-docs", "prefix": "handbook/"}


async def audit(bed: SyncBed, target: str) -> list[AuditLog]:
    async with bed.runtime.sessionmaker() as s:
        rows = await s.execute(
            select(AuditLog).where(AuditLog.target == target).order_by(AuditLog.id)
        )
        return list(rows.scalars())


async def create(c: httpx.AsyncClient, kb: KnowledgeBase, body: dict[str, Any]) -> httpx.Response:
    return await c.post(f"/kb/{kb.id}/sync-sources", json=body)


async def s3_source(bed: SyncBed, c: httpx.AsyncClient, kb: KnowledgeBase) -> dict[str, Any]:
    """An S3 source on ``kb`` reading with a new aws_credentials secret, created by ``c``."""
    secret = await bed.secret("aws_credentials", KEYS)
    r = await create(c, kb, {"connector": "s3", "config": S3, "secret_id": str(secret)})
    assert r.status_code == 201, r.text
    source: dict[str, Any] = r.json()
    return source


class TestConnectors:
    async def test_listing_publishes_schema_and_secret_kind(self, client: Client) -> None:
        listed = (await client().get("/rag/sync/connectors")).json()
        assert {c["name"] for c in listed} == SHIPPED - {"local"}
        s3 = next(c for c in listed if c["name"] == "s3")
        assert s3["secret_kind"] == "aws_credentials"
        assert "bucket" in s3["config_schema"]["properties"]
        kinds = {c["name"]: c["secret_kind"] for c in listed}
        assert (kinds["azure_blob"], kinds["gcs"]) == ("azure_storage", "gcp_service_account")
        admin = (await client(admin=True).get("/rag/sync/connectors")).json()
        assert "local" in {c["name"] for c in admin}


class TestCreate:
    async def test_a_credential_in_the_config_is_refused(
        self, client: Client, bed: SyncBed
    ) -> None:
        kb = await bed.kb()
        r = await create(
            client(),
            kb,
            {"connector": "s3", "config": {**S3, "aws_secret_access_key": "x"}},
        )
        assert r.status_code == 400
        error = r.json()["error"]
        assert "a credential does not go in a source's configuration" in error["message"].lower()
        assert error["details"]["fields"][0]["field"] == "config.aws_secret_access_key"

    async def test_validate_config_refusal_names_the_rooted_field(
        self, client: Client, bed: SyncBed
    ) -> None:
        kb = await bed.kb()
        secret = await bed.secret("aws_credentials", KEYS)
        r = await create(
            client(),
            kb,
            {"connector": "s3", "config": {"bucket": "x' or '1'='1"}, "secret_id": str(secret)},
        )
        assert r.status_code == 400
        assert r.json()["error"]["details"]["fields"][0]["field"] == "config.bucket"

    async def test_created_with_the_audience_sentence(self, client: Client, bed: SyncBed) -> None:
        kb = await bed.kb()
        secret = await bed.secret("aws_credentials", KEYS)
        r = await create(
            client(),
            kb,
            {
                "connector": "s3",
                "config": S3,
                "secret_id": str(secret),
                "schedule_seconds": 3600,
                "organizational_unit": " HR ",
            },
        )
        assert r.status_code == 201, r.text
        body = r.json()
        assert body["organizational_unit"] == "HR"
        assert body["secret_id"] == str(secret)
        assert body["audience"].startswith('The aws_credentials secret "aws_credentials-')
        assert body["audience"].endswith(
            f"becomes searchable in {kb.collection_name} ({kb.name}) by everyone in the "
            "organization acme who can view the collection."
        )
        entries = await audit(bed, body["id"])
        assert [e.action for e in entries] == ["sync_source.created"]
        assert entries[0].actor == "alice"
        assert entries[0].details["secret_id"] == str(secret)
        assert entries[0].details["connector"] == "s3"
        assert "config" not in entries[0].details and "acme-docs" not in str(entries[0].details)

    async def test_a_blank_organizational_unit_is_no_unit(
        self, client: Client, bed: SyncBed
    ) -> None:
        """Blank is not a value: recorded as no unit, so the facet never offers ``""``."""
        kb = await bed.kb()
        secret = await bed.secret("aws_credentials", KEYS)
        c = client()
        body = {"connector": "s3", "config": S3, "secret_id": str(secret)}
        r = await create(c, kb, {**body, "organizational_unit": "   "})
        assert r.status_code == 201, r.text
        assert r.json()["organizational_unit"] is None
        path = f"/kb/{kb.id}/sync-sources/{r.json()['id']}"
        named = await c.patch(path, json={"organizational_unit": " Legal "})
        assert named.json()["organizational_unit"] == "Legal"
        cleared = await c.patch(path, json={"organizational_unit": ""})
        assert cleared.status_code == 200, cleared.text
        assert cleared.json()["organizational_unit"] is None
        async with bed.runtime.sessionmaker() as s:
            row = await s.get(SyncSource, uuid.UUID(r.json()["id"]))
        assert row is not None and row.organizational_unit is None

    async def test_dry_run_answers_the_audience_and_saves_nothing(
        self, client: Client, bed: SyncBed
    ) -> None:
        kb = await bed.kb()
        secret = await bed.secret("aws_credentials", KEYS)
        body = {"connector": "s3", "config": S3, "secret_id": str(secret)}
        r = await client().post(f"/kb/{kb.id}/sync-sources?dry_run=true", json=body)
        assert r.status_code == 200, r.text
        checked = r.json()
        assert checked["audience"].endswith(
            f"becomes searchable in {kb.collection_name} ({kb.name}) by everyone in the "
            "organization acme who can view the collection."
        )
        assert (await client().get(f"/kb/{kb.id}/sync-sources")).json() == []
        assert await audit(bed, checked["id"]) == []
        refused = await client().post(
            f"/kb/{kb.id}/sync-sources?dry_run=true",
            json={**body, "config": {"bucket": "x' or '1'='1"}},
        )
        assert refused.status_code == 400
        assert refused.json()["error"]["details"]["fields"][0]["field"] == "config.bucket"

    async def test_audience_omitted_without_secrets_view_or_credential(
        self, client: Client, bed: SyncBed
    ) -> None:
        kb = await bed.kb()
        secret = await bed.secret("aws_credentials", KEYS)
        body = {"connector": "s3", "config": S3, "secret_id": str(secret)}
        editor = client(user="alice", perms=(VIEW, EDIT))
        r = await create(editor, kb, body)
        # alice sees her own secret without secrets:view, but the sentence is not shown
        assert r.status_code == 201, r.text
        assert r.json()["audience"] is None
        web = await create(
            client(), kb, {"connector": "web", "config": {"start_url": "https://example.com/"}}
        )
        assert web.status_code == 201, web.text
        assert web.json()["audience"] is None

    async def test_secret_checks(self, client: Client, bed: SyncBed) -> None:
        kb = await bed.kb()
        git_secret = await bed.secret("git_token", {"token": "t"})
        other_org = await bed.secret("aws_credentials", KEYS, organization_id="other")
        for secret_id, why in (
            (git_secret, "must be a aws_credentials"),
            (other_org, "no such secret"),
        ):
            r = await create(
                client(), kb, {"connector": "s3", "config": S3, "secret_id": str(secret_id)}
            )
            assert r.status_code == 400
            assert r.json()["error"]["details"]["fields"] == [
                {"field": "secret_id", "message": why}
            ]
        missing = await create(client(), kb, {"connector": "s3", "config": S3})
        assert missing.json()["error"]["details"]["fields"][0]["field"] == "secret_id"

    async def test_local_is_for_app_admins(
        self, client: Client, bed: SyncBed, tmp_path: Path
    ) -> None:
        kb = await bed.kb()
        r = await create(client(), kb, {"connector": "local", "config": {"path": str(tmp_path)}})
        assert r.status_code == 403

    async def test_personal_and_app_scopes_finish_the_sentence(self) -> None:
        personal = KnowledgeBase(
            name="Mine", collection_name="mine_1", scope="personal", owner_id="bob"
        )
        app = KnowledgeBase(name="All", collection_name="all_1", scope="app", owner_id="root")
        assert audience_sentence("git_token", "docs", personal).endswith(
            "searchable in mine_1 (Mine) by its owner, bob, only."
        )
        assert "by its owner, bob, and the 2 people given an explicit grant" in (
            audience_sentence("git_token", "docs", personal, grants=2)
        )
        assert audience_sentence("git_token", "docs", app).endswith("by anyone in this deployment.")
        assert "nothing can search what it ingests yet" in audience_sentence("git_token", "d", None)


class TestMoveAndClone:
    async def test_a_kb_route_refuses_a_move_the_rag_route_records_it(
        self, client: Client, bed: SyncBed
    ) -> None:
        kb, other = await bed.kb(), await bed.kb()
        c = client()
        src = await s3_source(bed, c, kb)
        refused = await c.patch(
            f"/kb/{kb.id}/sync-sources/{src['id']}", json={"collection_name": other.collection_name}
        )
        assert refused.status_code == 400
        assert refused.json()["error"]["details"]["fields"][0]["field"] == "collection_name"
        same = await c.patch(
            f"/kb/{kb.id}/sync-sources/{src['id']}",
            json={"collection_name": kb.collection_name, "sync_mode": "full"},
        )
        assert same.status_code == 200 and same.json()["sync_mode"] == "full"

        moved = await c.patch(
            f"/rag/sync/sources/{src['id']}", json={"collection_name": other.collection_name}
        )
        assert moved.status_code == 200, moved.text
        assert moved.json()["knowledge_base_id"] == str(other.id)
        assert other.collection_name in moved.json()["audience"]
        entries = await audit(bed, src["id"])
        assert [e.action for e in entries] == [
            "sync_source.created",
            "sync_source.updated",
            "sync_source.updated",
        ]
        assert entries[-1].details["previous_collection_name"] == kb.collection_name
        assert entries[-1].details["collection_name"] == other.collection_name
        assert "previous_collection_name" not in entries[1].details

    async def test_clone_copies_the_reference_and_is_audited_as_a_creation(
        self, client: Client, bed: SyncBed
    ) -> None:
        kb, other = await bed.kb(), await bed.kb()
        c = client()
        src = await s3_source(bed, c, kb)
        r = await c.post(
            f"/kb/{kb.id}/sync-sources/{src['id']}/clone", json={"knowledge_base_id": str(other.id)}
        )
        assert r.status_code == 201, r.text
        clone = r.json()
        assert clone["secret_id"] == src["secret_id"] and clone["config"] == src["config"]
        assert clone["knowledge_base_id"] == str(other.id)
        assert other.collection_name in clone["audience"]
        (entry,) = await audit(bed, clone["id"])
        assert entry.action == "sync_source.created"
        assert entry.details["cloned_from"] == src["id"]

    async def test_delete_is_audited(self, client: Client, bed: SyncBed) -> None:
        kb = await bed.kb()
        c = client()
        src = (
            await create(c, kb, {"connector": "web", "config": {"start_url": "https://e.com/"}})
        ).json()
        assert (await c.delete(f"/kb/{kb.id}/sync-sources/{src['id']}")).status_code == 204
        assert [e.action for e in await audit(bed, src["id"])][-1] == "sync_source.deleted"
        assert (await c.get(f"/rag/sync/sources/{src['id']}")).status_code == 404


class TestRunsAndLogs:
    async def test_run_cancel_and_logs_paginated_by_source(
        self, client: Client, bed: SyncBed
    ) -> None:
        kb, other = await bed.kb(), await bed.kb()
        c = client()
        body = {"connector": "web", "config": {"start_url": "https://e.com/"}}
        src = (await create(c, kb, body)).json()
        foreign = (await create(c, other, body)).json()
        first = await c.post(f"/kb/{kb.id}/sync-sources/{src['id']}/run")
        assert first.status_code == 202
        again = await c.post(f"/kb/{kb.id}/sync-sources/{src['id']}/run")
        assert again.json()["sync_log_id"] == first.json()["sync_log_id"], "one queued run"
        cancelled = await c.post(f"/kb/{kb.id}/sync-sources/{src['id']}/cancel")
        assert cancelled.json()["status"] == "cancelled"
        for _ in range(3):
            await c.post(f"/kb/{kb.id}/sync-sources/{src['id']}/run")
            await c.post(f"/kb/{kb.id}/sync-sources/{src['id']}/cancel")
        page = (await c.get(f"/kb/{kb.id}/sync-sources/{src['id']}/logs?limit=2")).json()
        assert page["total"] == 4 and len(page["items"]) == 2
        assert {i["source_id"] for i in page["items"]} == {src["id"]}
        wrong = await c.get(f"/kb/{kb.id}/sync-sources/{foreign['id']}/logs")
        assert wrong.status_code == 404
        everything = (await c.get(f"/rag/sync/logs?source_id={src['id']}")).json()
        assert everything["total"] == 4

    async def test_a_repointed_source_keeps_its_earlier_runs(
        self, client: Client, bed: SyncBed
    ) -> None:
        """A source's runs are read by its id: moved to another base, it lists the runs it
        made before under the collection name it had then, and ``limit`` and ``total``
        describe the same rows."""
        kb, other = await bed.kb(), await bed.kb()
        c = client()
        body = {"connector": "web", "config": {"start_url": "https://e.com/"}}
        src = (await create(c, kb, body)).json()
        await c.post(f"/kb/{kb.id}/sync-sources/{src['id']}/run")
        await c.post(f"/kb/{kb.id}/sync-sources/{src['id']}/cancel")
        moved = await c.patch(
            f"/rag/sync/sources/{src['id']}", json={"knowledge_base_id": str(other.id)}
        )
        assert moved.status_code == 200, moved.text
        await c.post(f"/kb/{other.id}/sync-sources/{src['id']}/run")
        logs = f"/kb/{other.id}/sync-sources/{src['id']}/logs"
        page = (await c.get(logs)).json()
        assert page["total"] == 2
        assert sorted(i["collection_name"] for i in page["items"]) == sorted(
            [kb.collection_name, other.collection_name]
        )
        first = (await c.get(f"{logs}?limit=1")).json()
        assert (first["total"], len(first["items"])) == (2, 1)
        assert (await c.get(f"/kb/{kb.id}/sync-sources/{src['id']}/logs")).status_code == 404

    async def test_logs_and_sources_are_invisible_to_another_organization(
        self, client: Client, bed: SyncBed
    ) -> None:
        kb = await bed.kb()
        src = (
            await create(
                client(), kb, {"connector": "web", "config": {"start_url": "https://e.com/"}}
            )
        ).json()
        await client().post(f"/kb/{kb.id}/sync-sources/{src['id']}/run")
        outsider = client(user="mallory", org="evil")
        assert (await outsider.get(f"/rag/sync/sources/{src['id']}")).status_code == 404
        assert (await outsider.get(f"/kb/{kb.id}/sync-sources")).status_code == 404
        logs = (await outsider.get(f"/rag/sync/logs?source_id={src['id']}")).json()
        assert logs["total"] == 0
        patch = await outsider.patch(f"/rag/sync/sources/{src['id']}", json={"sync_mode": "full"})
        assert patch.status_code == 404


class TestKnowledgeBaseDeleted:
    async def test_sources_are_unlinked_deactivated_and_not_inherited(
        self, client: Client, bed: SyncBed
    ) -> None:
        kb = await bed.kb()
        secret = await bed.secret("aws_credentials", KEYS)
        c = client()
        src = (
            await create(c, kb, {"connector": "s3", "config": S3, "secret_id": str(secret)})
        ).json()
        queued = (await c.post(f"/kb/{kb.id}/sync-sources/{src['id']}/run")).json()
        assert (await c.delete(f"/kb/{kb.id}")).status_code == 200
        async with bed.runtime.sessionmaker() as s:
            row = await s.get(SyncSource, uuid.UUID(src["id"]))
            log = await s.get(SyncLog, uuid.UUID(queued["sync_log_id"]))
        assert row is not None and log is not None
        assert (row.knowledge_base_id, row.collection_name, row.active) == (None, None, False)
        assert row.config == S3 and row.secret_id == secret
        assert log.status == "cancelled"

        again = await bed.kb()
        assert (await c.get(f"/kb/{again.id}/sync-sources")).json() == []
        orphan = (await c.get(f"/rag/sync/sources/{src['id']}")).json()
        assert "nothing can search what it ingests yet" in orphan["audience"]
        refused = await c.post(f"/rag/sync/sources/{src['id']}/run")
        assert refused.status_code == 409
        moved = await c.patch(
            f"/rag/sync/sources/{src['id']}", json={"knowledge_base_id": str(again.id)}
        )
        assert moved.status_code == 200, moved.text
        assert moved.json()["active"] is True
        assert moved.json()["collection_name"] == again.collection_name

    @pytest.mark.parametrize("route", ["/kb/{id}", "/rag/collections/{name}"])
    async def test_emptying_a_default_base_keeps_its_sources(
        self, client: Client, bed: SyncBed, route: str
    ) -> None:
        """A default base is emptied, not deleted, by either delete: its row stays as the
        sources' target, so they stay linked and active, and a run may still be queued (the
        seed: "Vaciar una base predeterminada conserva sus fuentes porque la fila de destino
        permanece")."""
        kb = await bed.kb()
        async with bed.runtime.sessionmaker() as s, s.begin():
            await s.execute(
                update(KnowledgeBase).where(KnowledgeBase.id == kb.id).values(is_default=True)
            )
        c = client()
        src = await s3_source(bed, c, kb)
        emptied = await c.delete(route.format(id=kb.id, name=kb.collection_name))
        assert emptied.status_code == 200, emptied.text
        assert emptied.json()["knowledge_bases_emptied"] == 1
        async with bed.runtime.sessionmaker() as s:
            row = await s.get(SyncSource, uuid.UUID(src["id"]))
        assert row is not None
        assert (row.knowledge_base_id, row.collection_name, row.active) == (
            kb.id,
            kb.collection_name,
            True,
        )
        listed = (await c.get(f"/kb/{kb.id}/sync-sources")).json()
        assert [s["id"] for s in listed] == [src["id"]]

    async def test_a_run_on_an_emptied_default_waits_for_its_teardown(
        self, client: Client, bed: SyncBed
    ) -> None:
        """The emptied default's name is reserved until its table is dropped: a run queued
        meanwhile is refused (409) instead of repopulating the table the teardown is about to
        drop (the seed's #1382), and is accepted once the reservation is released."""
        kb = await bed.kb()
        async with bed.runtime.sessionmaker() as s, s.begin():
            await s.execute(
                update(KnowledgeBase).where(KnowledgeBase.id == kb.id).values(is_default=True)
            )
        c = client()
        src = await s3_source(bed, c, kb)
        assert (await c.delete(f"/kb/{kb.id}")).status_code == 200
        refused = await c.post(f"/kb/{kb.id}/sync-sources/{src['id']}/run")
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["message"] == "The collection is being deleted"
        async with bed.runtime.sessionmaker() as s, s.begin():
            assert not (
                await s.execute(select(SyncLog).where(SyncLog.source_id == uuid.UUID(src["id"])))
            ).first()
            released = await s.execute(
                delete(CollectionTeardown).where(
                    CollectionTeardown.collection_name == kb.collection_name
                )
            )
            assert getattr(released, "rowcount", 0) == 1  # the teardown's reservation
        queued = await c.post(f"/kb/{kb.id}/sync-sources/{src['id']}/run")
        assert queued.status_code == 202, queued.text


class TestLocal:
    async def test_app_admin_only_and_a_source_per_directory(
        self, client: Client, bed: SyncBed, tmp_path: Path
    ) -> None:
        kb = await bed.kb(scope="app", organization_id=None)
        body = {"path": str(tmp_path), "knowledge_base_id": str(kb.id)}
        assert (await client().post("/rag/sync/local", json=body)).status_code == 403
        admin = client(user="root", org=None, admin=True)
        bad = await admin.post("/rag/sync/local", json={**body, "path": "relative"})
        assert bad.status_code == 400
        assert bad.json()["error"]["details"]["fields"][0]["field"] == "path"
        proc = await admin.post("/rag/sync/local", json={**body, "path": "/proc"})
        assert proc.status_code == 400
        assert proc.json()["error"]["details"]["fields"][0]["field"] == "path"
        first = await admin.post("/rag/sync/local", json=body)
        assert first.status_code == 202, first.text
        assert first.json()["status"] == "queued"
        await admin.post(f"/rag/sync/sources/{first.json()['source_id']}/cancel")
        second = await admin.post("/rag/sync/local", json={**body, "sync_mode": "full"})
        assert second.json()["source_id"] == first.json()["source_id"]
        async with bed.runtime.sessionmaker() as s:
            src = await s.get(SyncSource, uuid.UUID(first.json()["source_id"]))
        assert src is not None and src.sync_mode == "full"


class TestSharedName:
    """A name's sources go to one base of each organization, its oldest on the name (seed:
    "añadir una fuente a otra base del mismo nombre se rechaza con 400")."""

    async def test_a_second_base_on_the_name_takes_no_source(
        self, client: Client, bed: SyncBed
    ) -> None:
        first = await bed.kb()
        second = await bed.kb(collection_name=first.collection_name, scope="personal")
        other_org = await bed.kb(collection_name=first.collection_name, organization_id="globex")
        secret = await bed.secret("aws_credentials", KEYS)
        c = client()
        body = {"connector": "s3", "config": S3, "secret_id": str(secret)}
        refused = await create(c, second, body)
        assert refused.status_code == 400, refused.text
        error = refused.json()["error"]
        assert "takes its sync sources" in error["message"]
        assert str(first.id) not in error["message"]
        assert error["details"]["fields"][0]["field"] == "knowledge_base_id"
        async with bed.runtime.sessionmaker() as s:
            count = await s.execute(
                select(SyncSource).where(SyncSource.knowledge_base_id == second.id)
            )
        assert count.first() is None
        src = (await create(c, first, body)).json()
        # another organization's base on the name is its own organization's first
        bob_secret = await bed.secret("aws_credentials", KEYS, organization_id="globex")
        bob = client("bob", "globex")
        theirs = await create(bob, other_org, {**body, "secret_id": str(bob_secret)})
        assert theirs.status_code == 201, theirs.text

        for route in (f"/rag/sync/sources/{src['id']}", f"/kb/{first.id}/sync-sources/{src['id']}"):
            moved = await c.patch(route, json={"knowledge_base_id": str(second.id)})
            assert moved.status_code == 400, moved.text
            assert moved.json()["error"]["details"]["fields"][0]["field"] == "knowledge_base_id"
        cloned = await c.post(
            f"/rag/sync/sources/{src['id']}/clone", json={"knowledge_base_id": str(second.id)}
        )
        assert cloned.status_code == 400
        assert (await c.get(f"/kb/{second.id}/sync-sources")).json() == []
        assert (await c.get(f"/rag/sync/sources/{src['id']}")).json()["knowledge_base_id"] == str(
            first.id
        )

    async def test_a_kb_route_refuses_a_collection_name_edit_naming_another_base(
        self, client: Client, bed: SyncBed
    ) -> None:
        kb, other = await bed.kb(), await bed.kb()
        c = client()
        src = await s3_source(bed, c, kb)
        for name in (other.collection_name, None):
            r = await c.patch(
                f"/kb/{kb.id}/sync-sources/{src['id']}", json={"collection_name": name}
            )
            assert r.status_code == 400, r.text
            assert r.json()["error"]["details"]["fields"][0]["field"] == "collection_name"
        row = (await c.get(f"/kb/{kb.id}/sync-sources/{src['id']}")).json()
        assert row["collection_name"] == kb.collection_name


GUID = "0f8fad5b-d9cb-469f-a165-70867728950e"

#: connector -> (secret kind, value, config, a destination field re-pointed to another host)
REPOINTED: dict[str, tuple[str, dict[str, Any], dict[str, Any], str, str]] = {
    "s3": ("aws_credentials", KEYS, S3, "endpoint_url", "https://s3.attacker.example"),
    "git": (
        "git_token",
        {"token": "ghp_x"},
        {"repo_url": "https://git.example.com/acme/docs.git"},
        "repo_url",
        "https://attacker.example/acme/docs.git",
    ),
    "confluence": (
        "confluence_token",
        {"email": "a@acme.example", "api_token": "t"},
        {"site_url": "https://acme.atlassian.net", "space_key": "HB"},
        "site_url",
        "https://attacker.example",
    ),
    "azure_blob": (
        "azure_storage",
        {"sas_token": "sv=2024-01-01&sp=rl&sig=abc"},
        {"account_url": "https://acme.blob.core.windows.net", "container": "handbook"},
        "account_url",
        "https://attacker.example",
    ),
    "sharepoint": (
        "ms_graph_app",
        {"tenant_id": GUID, "client_id": GUID, "client_secret": "s"},
        {"hostname": "acme.sharepoint.com", "site_path": "/sites/handbook"},
        "hostname",
        "other.sharepoint.com",
    ),
}


class TestRepointingABoundSecret:
    """Changing where a bound secret is sent lends it again (seed: binding a key needs
    ``secrets:view``): a member who could not bind it cannot re-point it, on either route."""

    @pytest.mark.parametrize("connector", sorted(REPOINTED))
    async def test_refused_without_secrets_view_on_both_routes(
        self, client: Client, bed: SyncBed, connector: str
    ) -> None:
        kind, value, config, field, address = REPOINTED[connector]
        kb = await bed.kb()
        secret = await bed.secret(kind, value)  # alice's, shared with the organization
        created = await create(
            client(), kb, {"connector": connector, "config": config, "secret_id": str(secret)}
        )
        assert created.status_code == 201, created.text
        src = created.json()
        carol = client(user="carol", perms=(VIEW, EDIT))
        for route in (f"/kb/{kb.id}/sync-sources/{src['id']}", f"/rag/sync/sources/{src['id']}"):
            r = await carol.patch(route, json={"config": {**config, field: address}, "name": "x"})
            assert r.status_code == 403, r.text
            assert r.json()["error"]["details"]["fields"] == [
                {"field": f"config.{field}", "message": "re-points the bound secret"}
            ]
        async with bed.runtime.sessionmaker() as s:
            row = await s.get(SyncSource, uuid.UUID(src["id"]))
        assert row is not None
        assert (row.config, row.name, row.secret_id) == (src["config"], None, secret)
        assert (row.destination_changed_by, row.destination_changed_at) == (None, None)
        assert [e.action for e in await audit(bed, src["id"])] == ["sync_source.created"]

    async def test_a_change_that_keeps_the_destination_needs_no_sight_of_the_secret(
        self, client: Client, bed: SyncBed
    ) -> None:
        kb = await bed.kb()
        src = await s3_source(bed, client(), kb)
        carol = client(user="carol", perms=(VIEW, EDIT))
        narrower = {**S3, "prefix": "handbook/2024/"}
        r = await carol.patch(f"/kb/{kb.id}/sync-sources/{src['id']}", json={"config": narrower})
        assert r.status_code == 200, r.text
        assert r.json()["config"] == narrower
        assert r.json()["destination_changed_by"] is None

    async def test_with_secrets_view_it_is_recorded_who_and_when(
        self, client: Client, bed: SyncBed
    ) -> None:
        kb = await bed.kb()
        src = await s3_source(bed, client(), kb)
        dana = client(user="dana")  # collections:edit and secrets:view
        config = {**S3, "endpoint_url": "https://minio.acme.example"}
        r = await dana.patch(f"/rag/sync/sources/{src['id']}", json={"config": config})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["config"] == config
        assert body["destination_changed_by"] == "dana"
        assert body["destination_changed_at"] is not None
        entry = (await audit(bed, src["id"]))[-1]
        assert (entry.action, entry.actor) == ("sync_source.updated", "dana")
        assert entry.details["destination_changed"] == ["config.endpoint_url"]
        assert "minio.acme.example" not in str(entry.details)

    async def test_a_colleagues_private_secret_is_not_lent_even_with_secrets_view(
        self, client: Client, bed: SyncBed
    ) -> None:
        kb = await bed.kb()
        secret = await bed.secret("git_token", {"token": "t"}, visibility="private")
        config = {"repo_url": "https://git.example.com/acme/docs.git"}
        src = (
            await create(
                client(), kb, {"connector": "git", "config": config, "secret_id": str(secret)}
            )
        ).json()
        dana = client(user="dana")
        r = await dana.patch(
            f"/rag/sync/sources/{src['id']}",
            json={"config": {"repo_url": "https://attacker.example/r.git"}},
        )
        assert r.status_code == 403, r.text
        assert r.json()["error"]["details"]["fields"][0]["field"] == "config.repo_url"
        # unbinding the secret in the same change sends it nowhere: allowed
        r = await dana.patch(
            f"/rag/sync/sources/{src['id']}",
            json={"config": {"repo_url": "https://attacker.example/r.git"}, "secret_id": None},
        )
        assert r.status_code == 200, r.text
        assert r.json()["secret_id"] is None

    async def test_an_edit_grant_from_another_organization_lends_no_secret(
        self, client: Client, bed: SyncBed
    ) -> None:
        kb = await bed.kb()
        alice = client()
        src = await s3_source(bed, alice, kb)
        granted = await alice.put(
            f"/kb/{kb.id}/grants", json={"user_id": "mallory", "permission": "edit"}
        )
        assert granted.status_code in (200, 204), granted.text
        mallory = client(user="mallory", org="evil")  # secrets:view, in her own organization
        assert (await mallory.patch(f"/kb/{kb.id}/sync-sources/{src['id']}", json={})).is_success
        config = {**S3, "endpoint_url": "https://s3.evil.example"}
        r = await mallory.patch(f"/kb/{kb.id}/sync-sources/{src['id']}", json={"config": config})
        assert r.status_code == 403, r.text
        assert r.json()["error"]["details"]["fields"][0]["field"] == "config.endpoint_url"
