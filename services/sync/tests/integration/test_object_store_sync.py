"""Azure Blob (Azurite) and GCS (fake-gcs-server) sources over HTTP: the same run as S3's.

Each test runs once per store, through a :class:`FaultProxy` in front of the emulator
that counts requests and answers 429s and 503s when a test asks it to.
"""

from __future__ import annotations

import base64
import datetime as dt
import time
from pathlib import Path
from typing import Any

import pytest
from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.errors import RemoteNameRefusedError
from docproc_common.connectors.remote_names import MAX_COMPONENT_BYTES
from docproc_common.db.models import KnowledgeBase, SyncSource
from docproc_common.events import DocumentAccepted, DocumentDeleted
from docproc_sync.connectors import CONNECTORS
from docproc_sync.connectors.base import RemoteFile
from docproc_sync.connectors.object_store import ObjectStoreConnector
from docproc_sync.testing import SyncBed
from docproc_testing.stores import AzuriteStore, TokenServer

from .conftest import Client, ObjectStore
from .test_stored_errors import ADVICE, shown

pytestmark = pytest.mark.integration


async def store_source(
    bed: SyncBed, store: ObjectStore, *, prefix: str = "", secret: dict[str, str] | None = None
) -> tuple[KnowledgeBase, SyncSource]:
    kb = await bed.kb()
    secret_id = await bed.secret(store.secret_kind, secret or store.secret)
    return kb, await bed.source(kb, store.connector, store.config(prefix), secret_id=secret_id)


def connector(bed: SyncBed, store: ObjectStore) -> ObjectStoreConnector[Any]:
    cls = CONNECTORS[store.connector]
    assert issubclass(cls, ObjectStoreConnector)
    config = cls.CONFIG_MODEL.model_validate(store.config())
    return cls(config, store.secret, ConnectorOptions.of(bed.settings))


class TestRuns:
    async def test_full_then_incremental_fetches_only_the_changed_bytes(
        self, bed: SyncBed, object_store: ObjectStore
    ) -> None:
        corpus = {
            f"docs/{n // 10}/doc-{n:03}.md": f"# Doc {n}\n\nbody {n}".encode() for n in range(100)
        }
        object_store.store.put({**corpus, "docs/folder/": b"", "docs/logo.png": b"\x89PNG"})
        kb, src = await store_source(bed, object_store, prefix="docs/")
        first = await bed.run(src.id)
        assert first.status == "done", first.error_message
        assert (first.total_files, first.ingested, first.skipped) == (101, 100, 1)
        assert first.listing_complete is True
        assert first.bytes_fetched == sum(len(b) for b in corpus.values())
        docs = await bed.documents(kb.id)
        assert sorted(d.source_path or "" for d in docs) == sorted(
            object_store.address(k) for k in corpus
        )
        assert all(d.source == object_store.connector and d.storage_path is None for d in docs)
        assert object_store.proxy.most_in_flight <= bed.settings.concurrency
        await bed.finish_pipeline(kb.id)

        unchanged = await bed.run(src.id)
        assert (unchanged.skipped, unchanged.bytes_fetched, unchanged.ingested) == (101, 0, 0)

        since = await bed.last_event_id()
        changed = {"docs/4/doc-042.md": b"# Doc 42\n\nrewritten, one percent of the corpus"}
        object_store.store.put(changed)
        object_store.proxy.requests.clear()
        third = await bed.run(src.id)
        assert (third.updated, third.skipped, third.ingested) == (1, 100, 0)
        assert third.bytes_fetched == len(changed["docs/4/doc-042.md"])
        reads = [p for m, p in object_store.proxy.requests if m == "GET" and "doc-" in p]
        assert len(reads) == 1 and "doc-042.md" in reads[0], "one object read, the changed one"
        assert len(await bed.events(DocumentAccepted.TOPIC, since)) == 1

    async def test_a_file_deleted_remotely_loses_its_claim_and_its_document(
        self, bed: SyncBed, object_store: ObjectStore
    ) -> None:
        object_store.store.put({"keep.md": b"keep", "drop.md": b"drop"})
        kb, src = await store_source(bed, object_store)
        await bed.run(src.id)
        await bed.finish_pipeline(kb.id)
        dropped = next(d for d in await bed.documents(kb.id) if d.filename == "drop.md")
        object_store.store.delete("drop.md")
        since = await bed.last_event_id()
        log = await bed.run(src.id)
        assert (log.deleted, log.listing_complete) == (1, True)
        assert [d.filename for d in await bed.documents(kb.id)] == ["keep.md"]
        assert dropped.id not in {c.document_id for c in await bed.claims(src.id)}
        deleted = await bed.events(DocumentDeleted.TOPIC, since)
        assert [e["vector_document_ids"] for e in deleted] == [[str(dropped.vector_document_id)]]

    async def test_a_moved_file_is_matched_by_content_not_embedded_again(
        self, bed: SyncBed, object_store: ObjectStore
    ) -> None:
        object_store.store.put({"old/place.md": b"moving content"})
        kb, src = await store_source(bed, object_store)
        await bed.run(src.id)
        await bed.finish_pipeline(kb.id)
        (before,) = await bed.documents(kb.id)
        object_store.store.move("old/place.md", "new/place.md")
        since = await bed.last_event_id()
        log = await bed.run(src.id)
        assert (log.ingested, log.updated, log.skipped, log.deleted) == (0, 0, 1, 0)
        assert [d.id for d in await bed.documents(kb.id)] == [before.id]
        assert [c.document_id for c in await bed.claims(src.id)] == [before.id]
        assert await bed.events(DocumentAccepted.TOPIC, since) == []


class TestHostileNames:
    async def test_every_name_lands_inside_the_sync_directory_or_is_refused(
        self, bed: SyncBed, object_store: ObjectStore, tmp_path: Path
    ) -> None:
        long = "n" * 300 + ".md"
        names = {
            "a/b/c/path.md": "path.md",
            "\uff0e\uff0e\uff0fdots.md": "\uff0e\uff0e\uff0fdots.md",
            "%2e%2e%2fencoded.md": "%2e%2e%2fencoded.md",
            f"deep/{long}": "n" * (MAX_COMPONENT_BYTES - 3) + ".md",
        }
        climbing = "../../../../home/app/.ssh/authorized_keys.md"
        refused: list[str] = []
        unreadable: list[str] = []
        if isinstance(object_store.store, AzuriteStore):
            # Azure stores backslashes as slashes, so this is a blob named like ``climbing``;
            # the SDK resolves a name's dot segments before sending it, so no request can
            # read it: a failed file of its own, landed nowhere
            unreadable.append("..\\..\\..\\..\\home\\app\\.ssh\\authorized_keys.md")
        else:
            names[climbing] = "authorized_keys.md"
            refused += ["..", ".", "a/.."]
        object_store.store.put(
            {n: f"# {n[:20]}".encode() for n in [*names, *refused, *unreadable, "/"]}
        )
        kb, src = await store_source(bed, object_store)
        log = await bed.run(src.id)
        assert log.status == "done", log.error_message
        assert (log.ingested, log.failed) == (len(names), len(refused) + len(unreadable))
        docs = await bed.documents(kb.id)
        assert sorted(d.filename for d in docs if d.status != "error") == sorted(names.values())
        reasons = sorted(d.error_message or "" for d in docs if d.status == "error")
        not_found = f"The document could not be synced (ResourceNotFound) - {ADVICE}."
        expected = [f"The remote name {n!r} does not name a file" for n in refused]
        expected += [f"{not_found} The worker log has the full error."] * len(unreadable)
        assert reasons == sorted(expected)
        assert not (tmp_path.parent / "home").exists()

        # at the connector: whatever the name, the base decides where the bytes land
        conn = connector(bed, object_store)
        key, scratch = "a/b/c/path.md", tmp_path / "scratch"
        scratch.mkdir()
        try:
            for n, name in enumerate([climbing, "/etc/passwd", "..\\..\\boot.ini", long]):
                sync_dir = scratch / f"in{n}"
                sync_dir.mkdir()
                landed = await conn.fetch(RemoteFile(address="x", name=name, key=key), sync_dir)
                assert landed.parent == sync_dir.resolve()
                assert len(landed.name.encode()) <= MAX_COMPONENT_BYTES
            for name in ["..", ".", "/", "a/.."]:
                with pytest.raises(RemoteNameRefusedError):
                    await conn.fetch(RemoteFile(address="x", name=name, key=key), scratch)
        finally:
            await conn.aclose()
        assert sorted(p.name for p in scratch.iterdir()) == [f"in{n}" for n in range(4)]


class TestCredentials:
    async def test_an_expired_or_revoked_credential_is_an_error_without_client_text(
        self,
        client: Client,
        bed: SyncBed,
        object_store: ObjectStore,
        token_server: TokenServer,
    ) -> None:
        object_store.store.put({"a.md": b"a"})
        store = object_store.store
        if isinstance(store, AzuriteStore):
            expired = store.sas(expires_in=-dt.timedelta(hours=1))
            rotated = base64.b64encode(b"a key the account no longer has").decode()
            secrets = [
                {"sas_token": expired},
                {"account_name": store.account, "account_key": rotated},
            ]
            hidden = [expired, expired.split("sig=")[1], store.key, rotated]
        else:
            token_server.revoked = True  # the key deleted in IAM: Google answers invalid_grant
            secrets = [object_store.secret]
            hidden = [object_store.secret["private_key"][40:80], token_server.url]
        for secret in secrets:
            kb, src = await store_source(bed, object_store, secret=secret)
            log = await bed.run(src.id)
            assert log.status == "error"
            kind = (log.error_message or "").removeprefix("The source could not be synced (")
            assert kind.split(")")[0] in {
                "AuthenticationFailed",
                "AuthorizationFailure",
                "RefreshError",
            }
            assert log.error_message == (
                f"The source could not be synced ({kind.split(')')[0]}) - {ADVICE}. "
                "The worker log has the full error."
            )
            assert await bed.documents(kb.id) == []
            api = await shown(client, kb, src)
            for text in [*hidden, object_store.proxy.url.split("://")[1], store.container]:
                assert text not in api

    async def test_a_valid_sas_reads_the_container(
        self, bed: SyncBed, object_store: ObjectStore
    ) -> None:
        if not isinstance(object_store.store, AzuriteStore):
            pytest.skip("a SAS is Azure's")
        object_store.store.put({"a.md": b"a"})
        sas = object_store.store.sas(expires_in=dt.timedelta(hours=1))
        kb, src = await store_source(bed, object_store, secret={"sas_token": sas})
        log = await bed.run(src.id)
        assert (log.status, log.ingested) == ("done", 1), log.error_message


class TestThrottling:
    @pytest.fixture(autouse=True)
    def quick_retries(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(ObjectStoreConnector, "PAGE_SIZE", 3)
        monkeypatch.setattr(ObjectStoreConnector, "ATTEMPTS", 3)
        monkeypatch.setattr(ObjectStoreConnector, "BACKOFF_S", 0.01)

    async def test_a_listing_interrupted_midway_deletes_nothing(
        self, bed: SyncBed, object_store: ObjectStore
    ) -> None:
        object_store.store.put({f"f{n:02}.md": f"file {n}".encode() for n in range(10)})
        kb, src = await store_source(bed, object_store)
        first = await bed.run(src.id)
        assert (first.ingested, first.listing_complete) == (10, True)
        await bed.finish_pipeline(kb.id)
        object_store.store.delete("f09.md")

        def storm(method: str, path: str) -> tuple[int, dict[str, str]] | None:
            later_page = "marker=" in path or "pageToken=" in path
            return (503, {"Retry-After": "0"}) if method == "GET" and later_page else None

        object_store.proxy.fault = storm
        second = await bed.run(src.id)
        assert second.status == "done"
        assert (second.listing_complete, second.deleted, second.total_files) == (False, 0, 3)
        assert "Incomplete listing, nothing deleted" in (second.error_message or "")
        assert "3 tries" in (second.error_message or "")
        assert object_store.proxy.url.split("://")[1] not in (second.error_message or "")
        assert len(await bed.documents(kb.id)) == 10, "f09 stays until a complete listing"

        object_store.proxy.fault = lambda _m, _p: None
        third = await bed.run(src.id)
        assert (third.listing_complete, third.deleted) == (True, 1)

    async def test_429_and_503_are_waited_out_as_retry_after_says(
        self, bed: SyncBed, object_store: ObjectStore
    ) -> None:
        object_store.store.put({f"f{n}.md": f"file {n}".encode() for n in range(4)})
        kb, src = await store_source(bed, object_store)
        answered: dict[str, int] = {}

        def busy(method: str, path: str) -> tuple[int, dict[str, str]] | None:
            listing = method == "GET" and ("comp=list" in path or "/o?" in path)
            what = "read" if "f2.md" in path else "list" if listing else ""
            if what and answered.get(what, 0) < 1:
                answered[what] = answered.get(what, 0) + 1
                return (429, {"Retry-After": "1"}) if what == "list" else (503, {})
            return None

        object_store.proxy.fault = busy
        started = time.monotonic()
        log = await bed.run(src.id)
        assert (log.status, log.ingested, log.failed, log.listing_complete) == ("done", 4, 0, True)
        assert answered == {"list": 1, "read": 1}
        assert time.monotonic() - started >= 1.0, "the listing waited the Retry-After"
        assert log.bytes_fetched == sum(len(f"file {n}") for n in range(4))

    async def test_a_first_page_that_never_answers_fails_the_run(
        self, bed: SyncBed, object_store: ObjectStore
    ) -> None:
        object_store.store.put({"a.md": b"a"})
        kb, src = await store_source(bed, object_store)
        object_store.proxy.fault = lambda _m, _p: (429, {"Retry-After": "0"})
        log = await bed.run(src.id)
        assert log.status == "error"
        assert "could not be synced" in (log.error_message or "")
        assert await bed.documents(kb.id) == []
        listings = [p for _, p in object_store.proxy.requests if "comp=list" in p or "/o?" in p]
        assert len(listings) == ObjectStoreConnector.ATTEMPTS
