"""Sync sources synced through the real pipeline (services as processes on Kafka) into search:
an object store (S3 on moto, Azure Blob on Azurite, GCS on fake-gcs-server), a SharePoint
library on the Graph stand-in, a Confluence space on its stand-in, a Google Drive folder on
the Drive stand-in."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from docproc_common.auth import EDIT, SECRETS_VIEW, VIEW
from docproc_testing import api
from docproc_testing.api import wait_for
from docproc_testing.confluence_standin import running_confluence
from docproc_testing.documents import make_docx
from docproc_testing.drive_standin import DOC, DriveStandIn
from docproc_testing.graph_standin import GraphStandIn
from docproc_testing.infra import load_infra_env
from docproc_testing.stores import AzuriteStore, GcsStore, S3Store, Store, TokenServer

from tests.e2e.harness import Cluster

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

#: an app admin who may see secrets: a source's audience sentence names its secret to them
SECRETS_VIEWER = {"user_id": "root", "permissions": [VIEW, EDIT, SECRETS_VIEW], "app_admin": True}


@pytest.fixture(scope="module")
def token_server() -> Iterator[TokenServer]:
    with TokenServer() as server:
        yield server


def object_store(kind: str, cluster: Cluster, tokens: TokenServer) -> Store:
    """A fresh container of moto's S3, Azurite or fake-gcs-server (``scripts/infra.py``)."""
    if kind == "s3":
        return S3Store(cluster.env)
    emulators = load_infra_env(("azurite", "gcs"))
    return AzuriteStore(emulators) if kind == "azure_blob" else GcsStore(emulators, tokens)


def wait_run(client: httpx.Client, kb_id: str, source_id: str, log_id: str) -> dict[str, Any]:
    def finished() -> dict[str, Any] | None:
        page = client.get(f"/kb/{kb_id}/sync-sources/{source_id}/logs").json()
        log = next(i for i in page["items"] if i["id"] == log_id)
        return log if log["status"] not in {"queued", "running"} else None

    result: dict[str, Any] = wait_for(finished, 120, what="the sync run to finish")
    return result


def wait_indexed(client: httpx.Client, kb_id: str, documents: int) -> None:
    def done() -> bool:
        state = client.get(f"/kb/{kb_id}/ingestion").json()
        return bool(
            state["indexing_status"] == "complete"
            and state["document_count"] == documents
            and state["indexed_count"] == documents
        )

    wait_for(done, 240, what=f"{documents} documents indexed")


def create_kb(client: httpx.Client, prefix: str) -> tuple[str, str]:
    """A knowledge base of the whole deployment on the local model: its name (its collection's
    too) and its id."""
    kb = api.create_kb(client, prefix)
    return kb["name"], str(kb["id"])


def create_source(
    client: httpx.Client,
    kb_id: str,
    connector: str,
    config: dict[str, Any],
    secret: dict[str, Any],
) -> dict[str, Any]:
    """A sync source of ``connector`` on ``kb_id``, reading with a new ``secret`` (its name,
    kind and value)."""
    created_secret = client.post("/secrets", json=secret)
    assert created_secret.status_code == 201, created_secret.text
    created = client.post(
        f"/kb/{kb_id}/sync-sources",
        json={"connector": connector, "config": config, "secret_id": created_secret.json()["id"]},
    )
    assert created.status_code == 201, created.text
    source: dict[str, Any] = created.json()
    return source


def run_source(client: httpx.Client, kb_id: str, source_id: str) -> dict[str, Any]:
    """One run of the source, queued (202) and waited for: its sync log."""
    queued = client.post(f"/kb/{kb_id}/sync-sources/{source_id}/run")
    assert queued.status_code == 202, queued.text
    return wait_run(client, kb_id, source_id, queued.json()["sync_log_id"])


def search_settled(
    cluster: Cluster,
    collection: str,
    documents: int,
    query: str,
    what: str = "the replaced and the deleted documents' chunks to go",
) -> list[dict[str, Any]]:
    """Once the collection's chunks belong to exactly ``documents`` documents, ``query``'s hits
    over it (as the admin)."""
    table = f"rag_{collection}"

    def settled() -> bool:
        rows = cluster.query(f"SELECT count(DISTINCT document_id) FROM {table}")
        return bool(rows[0][0] == documents)

    wait_for(settled, 120, what=what)
    with cluster.admin() as client:
        return search(client, collection, query)


def search(client: httpx.Client, collection: str, query: str) -> list[dict[str, Any]]:
    response = client.post(
        "/rag/search", json={"query": query, "collections": [collection], "top_k": 3}
    )
    assert response.status_code == 200, response.text
    hits: list[dict[str, Any]] = response.json()["results"]
    return hits


def first_sync(
    client: httpx.Client, kb_id: str, source_id: str, collection: str, files: int, query: str
) -> list[dict[str, Any]]:
    """The source's first run ingests all its ``files``, they are indexed, and ``query``'s
    hits over the collection."""
    log = run_source(client, kb_id, source_id)
    assert (log["status"], log["ingested"], log["total_files"]) == ("done", files, files), log
    wait_indexed(client, kb_id, files)
    return search(client, collection, query)


@pytest.mark.parametrize("kind", ["s3", "azure_blob", "gcs"])
def test_object_store_source_synced_through_the_pipeline_is_searchable(
    cluster: Cluster, token_server: TokenServer, kind: str
) -> None:
    store = object_store(kind, cluster, token_server)
    store.put(
        {
            "a/readme.md": b"# Birds\n\nPenguins live in Antarctica.",
            "b/readme.md": b"# Rodents\n\nThe capybara is the largest rodent.",
            "notes.txt": b"Kafka carries the events.",
            "folder/": b"",
        }
    )

    # secrets:view: the audience sentence names the secret only to a caller who may see it
    with cluster.client(**SECRETS_VIEWER) as client:
        name, kb_id = create_kb(client, "e2e_sync")
        source = create_source(
            client,
            kb_id,
            store.connector,
            store.config(),
            {"name": "e2e store reader", "kind": store.secret_kind, "value": store.secret()},
        )
        assert source["audience"] == (
            f'The {store.secret_kind} secret "e2e store reader" can read whatever it has been '
            f"granted, and everything it ingests becomes searchable in {name} ({name}) by "
            "anyone in this deployment."
        )

        hits = first_sync(client, kb_id, source["id"], name, 3, "largest rodent")
        assert "capybara" in hits[0]["content"]
        assert hits[0]["filename"] == "readme.md"
        assert (
            hits[0]["metadata"]
            .get("source_path", store.address("b/readme.md"))
            .endswith("b/readme.md")
        )

        # unchanged: the change signal answers, nothing is downloaded
        log = run_source(client, kb_id, source["id"])
        assert (log["skipped"], log["bytes_fetched"], log["ingested"]) == (3, 0, 0)

        # one object changes, one goes: updated in place, the old chunks and the gone file retired
        changed = b"# Rodents\n\nThe capybara swims in rivers of South America."
        store.put({"b/readme.md": changed})
        store.delete("notes.txt")
        log = run_source(client, kb_id, source["id"])
        assert (log["updated"], log["skipped"], log["deleted"]) == (1, 1, 1)
        assert log["bytes_fetched"] == len(changed), "only the changed object was read"
        wait_indexed(client, kb_id, 2)

    hits = search_settled(cluster, name, 2, "where does the capybara swim")
    assert "rivers of South America" in hits[0]["content"]
    assert all("largest rodent" not in h["content"] for h in hits)
    assert all("Kafka carries" not in h["content"] for h in hits)
    paths = cluster.query(
        "SELECT source_path FROM rag_documents WHERE knowledge_base_id = $1 ORDER BY source_path",
        uuid.UUID(kb_id),
    )
    assert [r[0] for r in paths] == [store.address("a/readme.md"), store.address("b/readme.md")]


def test_sharepoint_source_synced_through_the_pipeline_is_searchable(
    cluster: Cluster, graph: GraphStandIn
) -> None:
    drive = graph.add_site("/sites/wildlife").drives[0]
    drive.put("Field notes/birds.md", b"# Birds\n\nThe kakapo is a flightless parrot.")
    drive.put("Field notes/rodents.md", b"# Rodents\n\nThe capybara is the largest rodent.")
    drive.put("Field notes/old.txt", b"Beavers build dams across streams.")
    drive.put("Drafts/unfinished.md", b"outside the folder, never synced")

    with cluster.admin() as client:
        name, kb_id = create_kb(client, "e2e_sp")
        source = create_source(
            client,
            kb_id,
            "sharepoint",
            {
                "hostname": graph.hostname,
                "site_path": "/sites/wildlife",
                "folder_path": "Field notes",
            },
            {"name": "wildlife app", "kind": "ms_graph_app", "value": graph.secret_value()},
        )

        hits = first_sync(client, kb_id, source["id"], name, 3, "largest rodent")
        assert "capybara" in hits[0]["content"]
        assert hits[0]["filename"] == "rodents.md"

        # one file changes, one is deleted: the kept delta link names exactly those two
        served = graph.bytes_served
        changed = drive.put(
            "Field notes/rodents.md", b"# Rodents\n\nThe capybara swims in South American rivers."
        )
        drive.delete("Field notes/old.txt")
        log = run_source(client, kb_id, source["id"])
        assert (log["updated"], log["skipped"], log["deleted"]) == (1, 1, 1), log
        assert log["bytes_fetched"] == graph.bytes_served - served == len(changed.content)
        wait_indexed(client, kb_id, 2)

    hits = search_settled(cluster, name, 2, "where does the capybara swim")
    assert "South American rivers" in hits[0]["content"]
    assert all("Beavers" not in h["content"] for h in hits)
    assert graph.violations == []


def test_confluence_space_synced_through_the_pipeline_is_searchable(cluster: Cluster) -> None:
    with running_confluence() as wiki:
        wiki.add_space("DOCS")
        birds = wiki.add_page("DOCS", "Birds", "<p>Penguins live in Antarctica.</p>")
        rodents = wiki.add_page(
            "DOCS",
            "Rodents",
            '<p>The capybara is the largest rodent.</p><ac:structured-macro ac:name="info">'
            '<ac:parameter ac:name="title">macro-parameter-text</ac:parameter>'
            "<ac:rich-text-body><p>It lives near water.</p></ac:rich-text-body>"
            "</ac:structured-macro>",
            parent=birds,
        )
        wiki.add_page(
            "DOCS", "Events", "<table><tr><td>Kafka</td><td>carries the events</td></tr></table>"
        )

        with cluster.admin() as client:
            name, kb_id = create_kb(client, "e2e_confluence")
            source = create_source(
                client,
                kb_id,
                "confluence",
                {"site_url": wiki.url, "space_key": "DOCS"},
                {
                    "name": "wiki reader",
                    "kind": "confluence_token",
                    "value": {"email": wiki.email, "api_token": wiki.api_token},
                },
            )
            assert (
                "(every page of the space it can see, restricted pages included)"
                in (source["audience"])
            )

            hits = first_sync(client, kb_id, source["id"], name, 3, "largest rodent")
            assert "capybara" in hits[0]["content"] and hits[0]["filename"] == "Rodents.md"
            assert all("macro-parameter-text" not in h["content"] for h in hits)

            # unchanged versions: no body is fetched
            wiki.reset_counts()
            log = run_source(client, kb_id, source["id"])
            assert (log["skipped"], log["bytes_fetched"], log["ingested"]) == (3, 0, 0)
            assert wiki.body_fetches == {}

            # one page revised, one deleted: updated in place, the gone page retired
            wiki.edit(rodents, body="<p>The capybara swims in rivers of South America.</p>")
            wiki.delete(birds)
            log = run_source(client, kb_id, source["id"])
            assert (log["updated"], log["skipped"], log["deleted"]) == (1, 1, 1)
            assert dict(wiki.body_fetches) == {rodents: 1}
            wait_indexed(client, kb_id, 2)

    hits = search_settled(
        cluster,
        name,
        2,
        "where does the capybara swim",
        what="the replaced and the deleted pages' chunks to go",
    )
    assert "rivers of South America" in hits[0]["content"]
    assert all("largest rodent" not in h["content"] for h in hits)
    assert all("Penguins" not in h["content"] for h in hits)


def test_drive_folder_synced_through_the_pipeline_is_searchable(
    cluster: Cluster, drive: DriveStandIn
) -> None:
    root = drive.folder("Field guide")
    sub = drive.folder("Mammals", root)
    drive.put("birds.md", root, b"# Birds\n\nThe kiwi cannot fly and lives in New Zealand.")
    guide = drive.put(
        "Otters",
        sub,
        mime=DOC,
        exports={
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document": make_docx(
                ["Sea otters hold hands while they sleep."]
            )
        },
    )
    # secrets:view: the caller is shown the audience sentence
    with cluster.client(**SECRETS_VIEWER) as client:
        name, kb_id = create_kb(client, "e2e_drive")
        source = create_source(
            client,
            kb_id,
            "google_drive",
            {"folder_id": root},
            {
                "name": "e2e drive reader",
                "kind": "gcp_service_account",
                "value": drive.service_account(),
            },
        )
        assert source["audience"] == (
            'The gcp_service_account secret "e2e drive reader" can read whatever it has been '
            f"granted, and everything it ingests becomes searchable in {name} ({name}) by "
            "anyone in this deployment."
        )

        hits = first_sync(client, kb_id, source["id"], name, 2, "which animal holds hands asleep")
        assert "Sea otters" in hits[0]["content"]
        assert hits[0]["filename"] == "Otters.docx"

        # the Changes API: one doc edited, one file gone; only the edit is exported again
        exported = drive.media_bytes
        new_guide = make_docx(["Sea otters use stones as tools to open shells."])
        drive.set_export(
            guide,
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            new_guide,
        )
        drive.delete(next(i for i, v in drive.items.items() if v.name == "birds.md"))
        log = run_source(client, kb_id, source["id"])
        assert (log["updated"], log["deleted"], log["bytes_fetched"]) == (1, 1, len(new_guide))
        assert drive.media_bytes - exported == len(new_guide)
        assert drive.calls["changes.list"] >= 1
        wait_indexed(client, kb_id, 1)

    hits = search_settled(cluster, name, 1, "how do otters open shells")
    assert "stones as tools" in hits[0]["content"]
    assert all("kiwi" not in h["content"] for h in hits)
