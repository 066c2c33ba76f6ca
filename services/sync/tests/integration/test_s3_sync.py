"""S3 sources against moto's server: change signals, claims, deletion, modes, hostile keys."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import pytest
from docproc_common.connectors.base import ConnectorOptions
from docproc_common.db.models import DocumentStatus, KnowledgeBase, SyncLog, SyncSource
from docproc_common.events import DocumentAccepted, DocumentDeleted
from docproc_common.runtime import Runtime
from docproc_common.settings import LimitSettings
from docproc_sync.connectors.base import RemoteFile
from docproc_sync.connectors.s3 import S3Config, S3Connector
from docproc_sync.service import run_source
from docproc_sync.testing import SyncBed

pytestmark = pytest.mark.integration

KEYS = {"access_key_id": "testing", "secret_access_key": "testing"}


def put(client: Any, bucket: str, objects: dict[str, bytes]) -> None:
    for key, body in objects.items():
        client.put_object(Bucket=bucket, Key=key, Body=body)


async def s3_source(
    bed: SyncBed,
    infra: dict[str, str],
    bucket: str,
    *,
    kb: KnowledgeBase | None = None,
    prefix: str = "",
    mode: str = "new_only",
    secret_org: str | None = "acme",
) -> tuple[KnowledgeBase, SyncSource]:
    kb = kb or await bed.kb()
    secret = await bed.secret("aws_credentials", KEYS, organization_id=secret_org)
    config = {"bucket": bucket, "prefix": prefix, "endpoint_url": infra["STORAGE__S3_ENDPOINT_URL"]}
    return kb, await bed.source(kb, "s3", config, secret_id=secret, sync_mode=mode)


async def synced(
    bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str, objects: dict[str, bytes]
) -> tuple[KnowledgeBase, SyncSource, SyncLog]:
    """A new source of ``bucket`` holding ``objects``, run once (its log), what it accepted
    through the pipeline."""
    put(s3_client, bucket, objects)
    kb, src = await s3_source(bed, infra, bucket)
    log = await bed.run(src.id)
    await bed.finish_pipeline(kb.id)
    return kb, src, log


class TestChangeSignal:
    async def test_second_run_downloads_only_what_changed(
        self, bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str
    ) -> None:
        put(
            s3_client,
            bucket,
            {
                "a/readme.md": b"# A\n\nalpha",
                "b/readme.md": b"# B\n\nbravo",
                "notes.txt": b"charlie",
                "docs/": b"",
                "logo.png": b"\x89PNG",
            },
        )
        kb, src = await s3_source(bed, infra, bucket)
        first = await bed.run(src.id)
        assert first.status == "done", first.error_message
        assert (first.total_files, first.ingested, first.updated, first.skipped) == (4, 3, 0, 1)
        assert first.listing_complete is True
        docs = await bed.documents(kb.id)
        assert sorted(d.source_path or "" for d in docs) == [
            f"s3://{bucket}/a/readme.md",
            f"s3://{bucket}/b/readme.md",
            f"s3://{bucket}/notes.txt",
        ]
        assert {d.filename for d in docs} == {"readme.md", "notes.txt"}
        assert all(d.source == "s3" and d.storage_path is None for d in docs)
        await bed.finish_pipeline(kb.id)

        second = await bed.run(src.id)
        assert (second.ingested, second.updated, second.skipped, second.failed) == (0, 0, 4, 0)
        assert second.bytes_fetched == 0

        since = await bed.last_event_id()
        put(s3_client, bucket, {"b/readme.md": b"# B\n\nbravo, changed"})
        third = await bed.run(src.id)
        assert (third.ingested, third.updated, third.skipped) == (0, 1, 3)
        assert third.bytes_fetched == len(b"# B\n\nbravo, changed")
        rows = await bed.documents(kb.id)
        assert len(rows) == 4, "the replaced row stays live until its replacement is done"
        old = next(d for d in rows if d.source_path.endswith("b/readme.md") and d.status == "done")  # type: ignore[union-attr]
        await bed.finish_pipeline(kb.id)
        rows = await bed.documents(kb.id)
        assert len(rows) == 3
        assert old.id not in {d.id for d in rows}
        deleted = await bed.events(DocumentDeleted.TOPIC, since)
        assert [e["vector_document_ids"] for e in deleted] == [[str(old.vector_document_id)]]
        assert len(await bed.events(DocumentAccepted.TOPIC, since)) == 1

    async def test_same_name_in_two_prefixes_both_survive(
        self, bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str
    ) -> None:
        kb, src, log = await synced(
            bed, infra, s3_client, bucket, {"a/readme.md": b"same", "b/readme.md": b"same"}
        )
        assert log.ingested == 2, "identical bytes at two listed addresses are two documents"
        put(s3_client, bucket, {"b/readme.md": b"different now"})
        changed = await bed.run(src.id)
        assert (changed.updated, changed.skipped) == (1, 1)
        await bed.finish_pipeline(kb.id)
        rows = await bed.documents(kb.id)
        paths = sorted(d.source_path or "" for d in rows)
        assert paths == [f"s3://{bucket}/a/readme.md", f"s3://{bucket}/b/readme.md"]
        assert all(d.status == DocumentStatus.DONE for d in rows)

    async def test_a_moved_object_is_matched_by_content_not_embedded_again(
        self, bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str
    ) -> None:
        kb, src, _ = await synced(
            bed, infra, s3_client, bucket, {"old/place.md": b"moving content"}
        )
        (before,) = await bed.documents(kb.id)
        s3_client.copy_object(
            Bucket=bucket, Key="new/place.md", CopySource={"Bucket": bucket, "Key": "old/place.md"}
        )
        s3_client.delete_object(Bucket=bucket, Key="old/place.md")
        log = await bed.run(src.id)
        assert (log.ingested, log.updated, log.skipped, log.deleted) == (0, 0, 1, 0)
        assert [d.id for d in await bed.documents(kb.id)] == [before.id]
        assert [c.document_id for c in await bed.claims(src.id)] == [before.id]

    async def test_distinct_contents_under_one_name_are_two_documents(
        self, bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str
    ) -> None:
        kb, src, log = await synced(
            bed, infra, s3_client, bucket, {"a/readme.md": b"first", "b/readme.md": b"second"}
        )
        assert log.ingested == 2
        again = await bed.run(src.id)
        assert again.skipped == 2
        assert len(await bed.documents(kb.id)) == 2

    async def test_a_change_before_the_reconciler_came_by_keeps_the_newest_done(
        self, bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str
    ) -> None:
        kb, src, _ = await synced(bed, infra, s3_client, bucket, {"x.md": b"v1"})
        put(s3_client, bucket, {"x.md": b"v2"})
        await bed.run(src.id)
        await bed.finish_pipeline(kb.id, reconcile=False)  # v2 done, still pending in the claim
        put(s3_client, bucket, {"x.md": b"v3"})
        log = await bed.run(src.id)
        assert log.updated == 1
        rows = {d.content_hash: d.status for d in await bed.documents(kb.id)}
        h = {v: hashlib.sha256(v).hexdigest() for v in (b"v1", b"v2", b"v3")}
        assert rows == {h[b"v2"]: "done", h[b"v3"]: "processing"}, "v1 retired, v2 stays live"
        await bed.finish_pipeline(kb.id)
        assert [d.content_hash for d in await bed.documents(kb.id)] == [h[b"v3"]]


class TestDeletion:
    async def test_an_object_gone_from_a_complete_listing_is_deleted(
        self, bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str
    ) -> None:
        kb, src, _ = await synced(
            bed, infra, s3_client, bucket, {"keep.md": b"keep", "drop.md": b"drop"}
        )
        s3_client.delete_object(Bucket=bucket, Key="drop.md")
        since = await bed.last_event_id()
        log = await bed.run(src.id)
        assert log.deleted == 1
        assert [d.filename for d in await bed.documents(kb.id)] == ["keep.md"]
        assert len(await bed.events(DocumentDeleted.TOPIC, since)) == 1

    async def test_two_sources_claiming_one_document(
        self, bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str
    ) -> None:
        put(s3_client, bucket, {"shared/x.md": b"shared", "other/y.md": b"other"})
        kb, narrow = await s3_source(bed, infra, bucket, prefix="shared/")
        _, wide = await s3_source(bed, infra, bucket, kb=kb)
        assert (await bed.run(narrow.id)).ingested == 1
        await bed.finish_pipeline(kb.id)
        both = await bed.run(wide.id)
        assert (both.ingested, both.skipped) == (1, 1)
        await bed.finish_pipeline(kb.id)
        shared = next(d for d in await bed.documents(kb.id) if d.filename == "x.md")
        assert {c.document_id for c in await bed.claims(narrow.id)} == {shared.id}
        assert shared.id in {c.document_id for c in await bed.claims(wide.id)}

        # the narrow source stops listing it: its claim goes, the document stays (wide claims it)
        await bed.set_source(narrow.id, config={**narrow.config, "prefix": "nothing/"})
        narrowed = await bed.run(narrow.id)
        assert narrowed.deleted == 0
        assert shared.id in {d.id for d in await bed.documents(kb.id)}
        assert await bed.claims(narrow.id) == []

        # nobody lists it any more: deleted
        s3_client.delete_object(Bucket=bucket, Key="shared/x.md")
        gone = await bed.run(wide.id)
        assert gone.deleted == 1
        assert [d.filename for d in await bed.documents(kb.id)] == ["y.md"]

    async def test_a_cancelled_run_deletes_nothing(
        self, bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str
    ) -> None:
        kb, src, _ = await synced(bed, infra, s3_client, bucket, {"a.md": b"a", "b.md": b"b"})
        s3_client.delete_object(Bucket=bucket, Key="a.md")
        log_id = await bed.queue(src.id)
        async with bed.runtime.sessionmaker() as s, s.begin():
            log = await s.get(SyncLog, log_id)
            assert log is not None
            log.status = "cancelling"
        await run_source(bed.runtime, bed.settings, src.id, log_id)
        assert (await bed.log(log_id)).status == "cancelled"
        assert len(await bed.documents(kb.id)) == 2


class TestModes:
    async def test_update_only_ignores_new_files_before_downloading(
        self, bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str
    ) -> None:
        kb, src, _ = await synced(bed, infra, s3_client, bucket, {"old.md": b"old"})
        await bed.set_source(src.id, sync_mode="update_only")
        put(s3_client, bucket, {"new.md": b"new", "old.md": b"old, changed"})
        log = await bed.run(src.id)
        assert (log.ingested, log.updated, log.skipped) == (0, 1, 1)
        assert log.bytes_fetched == len(b"old, changed")

    async def test_full_replaces_everything_that_matches(
        self, bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str
    ) -> None:
        kb, src, _ = await synced(bed, infra, s3_client, bucket, {"one.md": b"1", "two.md": b"2"})
        await bed.set_source(src.id, sync_mode="full")
        log = await bed.run(src.id)
        assert (log.ingested, log.updated, log.skipped) == (0, 2, 0)
        await bed.finish_pipeline(kb.id)
        rows = await bed.documents(kb.id)
        assert len(rows) == 2 and all(d.status == "done" for d in rows)

    async def test_a_failed_document_is_fetched_again_and_only_it(
        self, bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str
    ) -> None:
        put(s3_client, bucket, {f"doc{n}.md": f"body {n}".encode() for n in range(5)})
        kb, src = await s3_source(bed, infra, bucket)
        await bed.run(src.id)
        await bed.finish_pipeline(kb.id, fail={"doc3.md"})
        retry = await bed.run(src.id)
        assert (retry.ingested, retry.skipped) == (1, 4)
        assert retry.bytes_fetched == len(b"body 3")
        await bed.finish_pipeline(kb.id)
        rows = await bed.documents(kb.id)
        assert len(rows) == 5, "the failed attempt's row was retired by the retry"
        assert all(d.status == "done" for d in rows)


class TestInterrupted:
    async def test_rerun_after_a_crash_ingests_nothing_twice(
        self, bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str
    ) -> None:
        put(s3_client, bucket, {f"f{n:03}.md": f"file {n}".encode() for n in range(40)})
        kb, src = await s3_source(bed, infra, bucket)
        log_id = await bed.queue(src.id)
        task = asyncio.create_task(run_source(bed.runtime, bed.settings, src.id, log_id))
        for _ in range(400):
            if len(await bed.documents(kb.id)) >= 8:
                break
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        partial = len(await bed.documents(kb.id))
        assert 0 < partial < 40, "the run was not interrupted half-way"
        # the redelivered event runs the same log again
        await run_source(bed.runtime, bed.settings, src.id, log_id)
        log = await bed.log(log_id)
        assert log.status == "done"
        assert log.ingested == 40 - partial
        assert log.skipped == partial
        rows = await bed.documents(kb.id)
        assert len(rows) == 40
        assert len({d.source_path for d in rows}) == 40


class TestCredentials:
    async def test_a_source_without_its_secret_does_not_run(
        self, bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str
    ) -> None:
        put(s3_client, bucket, {"a.md": b"a"})
        kb = await bed.kb()
        config = {"bucket": bucket, "endpoint_url": infra["STORAGE__S3_ENDPOINT_URL"]}
        src = await bed.source(kb, "s3", config)
        log = await bed.run(src.id)
        assert log.status == "error"
        assert "aws_credentials" in (log.error_message or "")
        assert await bed.documents(kb.id) == []

    async def test_a_secret_of_another_organization_is_not_opened(
        self, bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str
    ) -> None:
        put(s3_client, bucket, {"a.md": b"a"})
        kb, src = await s3_source(bed, infra, bucket, secret_org="other-org")
        log = await bed.run(src.id)
        assert log.status == "error"
        assert "cannot be opened" in (log.error_message or "")
        assert await bed.documents(kb.id) == []


class TestHostileKeys:
    async def test_a_path_shaped_key_lands_inside(
        self, bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str, tmp_path: Path
    ) -> None:
        hostile = "../../../../home/app/.ssh/authorized_keys"
        put(s3_client, bucket, {hostile: b"ssh-rsa AAAA attacker", f"{hostile}.md": b"# keys"})
        kb, src = await s3_source(bed, infra, bucket)
        log = await bed.run(src.id)
        assert log.status == "done"
        assert (log.ingested, log.skipped) == (1, 1)  # no extension: unsupported, never fetched
        (doc,) = await bed.documents(kb.id)
        assert doc.filename == "authorized_keys.md"
        assert doc.source_path == f"s3://{bucket}/{hostile}.md"

        # and at the connector: every spelling lands inside the sync directory
        connector = S3Connector(
            S3Config(bucket=bucket, endpoint_url=infra["STORAGE__S3_ENDPOINT_URL"]),
            KEYS,
            ConnectorOptions.of(bed.settings),
        )
        spellings = [hostile, "..%2F..%2Fetc%2Fpasswd", "..\\..\\boot.ini", "\u2025\uff0fx"]
        put(s3_client, bucket, dict.fromkeys(spellings, b"x"))
        for n, key in enumerate(spellings):
            sync_dir = tmp_path / f"d{n}"
            sync_dir.mkdir()
            remote = RemoteFile(address=f"s3://{bucket}/{key}", name=key, key=key)
            landed = await connector.fetch(remote, sync_dir)
            assert landed.parent == sync_dir.resolve()
            assert landed.read_bytes() == b"x"
        await connector.aclose()
        assert not (tmp_path.parent / "home").exists()

    async def test_a_prefix_with_a_quote_cannot_widen_the_listing(
        self, bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str
    ) -> None:
        put(s3_client, bucket, {"x'/a.md": b"a", "x/b.md": b"b", "y/c.md": b"c"})
        kb, src = await s3_source(bed, infra, bucket, prefix="x' or '1'='1")
        assert (await bed.run(src.id)).total_files == 0
        await bed.set_source(src.id, config={**src.config, "prefix": "x'"})
        log = await bed.run(src.id)
        assert log.total_files == 1
        assert [d.filename for d in await bed.documents(kb.id)] == ["a.md"]


class TestLimits:
    async def test_a_file_too_large_has_its_own_row_and_reason(
        self, bed: SyncBed, infra: dict[str, str], s3_client: Any, bucket: str, runtime: Runtime
    ) -> None:
        runtime.settings.limits = LimitSettings(max_upload_size_mb=1)
        put(s3_client, bucket, {"big.md": b"x" * (1024 * 1024 + 1), "small.md": b"small"})
        kb, src = await s3_source(bed, infra, bucket)
        log = await bed.run(src.id)
        assert (log.ingested, log.failed) == (1, 1)
        assert log.bytes_fetched == len(b"small")
        failed = [d for d in await bed.documents(kb.id) if d.status == "error"]
        assert [d.filename for d in failed] == ["big.md"]
        assert "larger than the 1 MB limit" in (failed[0].error_message or "")
        again = await bed.run(src.id)
        assert again.failed == 1
        errors = [d for d in await bed.documents(kb.id) if d.status == "error"]
        assert len(errors) == 1 and errors[0].id != failed[0].id, "one row per failed file"
