"""The invariant checker fails a doctored deployment, one broken rule at a time.

One fresh database and local storage for the module; each test builds its own indexed
document in its own collection, breaks one thing, and looks for the violation naming it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import boto3
import pytest
from aiokafka import AIOKafkaProducer, TopicPartition
from docproc_common.bus.delivery import dlq_topic, retry_topic
from docproc_common.db.models import RagDocument
from docproc_common.events import DocumentAccepted, DocumentIndexed
from docproc_common.runtime import Runtime
from docproc_common.settings import KafkaSettings, StorageSettings
from docproc_common.storage import S3Storage
from docproc_common.vectorstore import ensure_table
from docproc_testing.infra import load_infra_env
from docproc_testing.runtime import fresh_runtime
from sqlalchemy import func, insert, text
from sqlalchemy.sql.dml import Insert

from tests.faults.invariants import (
    DLQ_HEADERS,
    Copy,
    KafkaLog,
    Violation,
    check_invariants,
    list_storage,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
async def runtime(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Runtime]:
    async with fresh_runtime(Path(tmp_path_factory.mktemp("media"))) as rt:
        yield rt


@pytest.fixture(scope="module")
def kafka() -> KafkaSettings:
    return KafkaSettings(bootstrap_servers=load_infra_env()["KAFKA__BOOTSTRAP_SERVERS"])


async def sql(runtime: Runtime, statement: str, **params: object) -> None:
    async with runtime.sessionmaker() as session, session.begin():
        await session.execute(text(statement), params)


async def indexed(runtime: Runtime, chunks: int = 3) -> tuple[str, uuid.UUID, uuid.UUID]:
    """A ``done`` document of a new collection, as the pipeline leaves it: its original and
    parsed text stored, ``chunks`` rows under its vector document id. (collection, id, vdid)"""
    collection = f"inv_{uuid.uuid4().hex[:10]}"
    doc, vdid = uuid.uuid4(), uuid.uuid4()
    original, parsed = f"rag/{collection}/{doc}_a.txt", f"rag/{collection}/parsed/{doc}.txt"
    await runtime.storage.put(original, b"alpha beta")
    await runtime.storage.put(parsed, b"alpha beta")
    async with runtime.sessionmaker() as session, session.begin():
        await ensure_table(session, collection, 3)
        await session.execute(
            document(
                id=doc,
                collection_name=collection,
                status="done",
                vector_document_id=vdid,
                chunk_count=chunks,
                storage_path=original,
                parsed_path=parsed,
                attempt_id=uuid.uuid4(),
            )
        )
        for i in range(chunks):
            await add_chunk(session, collection, vdid, doc, i)
    return collection, doc, vdid


def document(**values: object) -> Insert:
    """A ``rag_documents`` row with the model's defaults."""
    return insert(RagDocument).values(filename="a.txt", filetype="txt", **values)


async def add_chunk(session: object, collection: str, vdid: uuid.UUID, doc: object, i: int) -> None:
    await session.execute(  # type: ignore[attr-defined]
        text(
            f"INSERT INTO rag_{collection} (id, document_id, chunk_no, content, embedding, "
            "tracking_id) VALUES (:id, :d, :i, 'x', '[0,0,1]', :t)"
        ),
        {"id": uuid.uuid4(), "d": vdid, "i": i, "t": doc},
    )


async def insert_document(runtime: Runtime, **values: object) -> None:
    async with runtime.sessionmaker() as session, session.begin():
        await session.execute(document(**values))


async def violations(runtime: Runtime, about: object, **options: object) -> list[Violation]:
    found = await check_invariants(
        runtime.settings.database.url,
        runtime.storage.sync,
        options.pop("kafka", None),  # type: ignore[arg-type]
        **options,  # type: ignore[arg-type]
    )
    return [v for v in found if str(about) in v.detail]


def kinds(found: list[Violation]) -> set[str]:
    return {v.kind for v in found}


async def test_an_intact_document_has_no_violation(runtime: Runtime) -> None:
    collection, doc, _ = await indexed(runtime)
    assert await violations(runtime, collection, orphan_grace=timedelta(0)) == []
    assert await violations(runtime, doc, orphan_grace=timedelta(0)) == []


async def test_a_chunk_without_its_document(runtime: Runtime) -> None:
    collection, doc, _ = await indexed(runtime)
    await sql(runtime, "DELETE FROM rag_documents WHERE id = :d", d=doc)
    found = await violations(runtime, f"rag_{collection}")
    assert kinds(found) == {"chunk-without-document"}, found


async def test_a_chunk_of_a_replaced_set(runtime: Runtime) -> None:
    collection, doc, _ = await indexed(runtime)
    old = uuid.uuid4()
    async with runtime.sessionmaker() as session, session.begin():
        await add_chunk(session, collection, old, doc, 0)
    found = await violations(runtime, old)
    assert kinds(found) == {"chunk-of-dead-set"}, found


async def test_a_count_mismatch(runtime: Runtime) -> None:
    collection, doc, vdid = await indexed(runtime)
    await sql(
        runtime, f"DELETE FROM rag_{collection} WHERE document_id = :v AND chunk_no = 2", v=vdid
    )
    found = await violations(runtime, doc)
    assert kinds(found) == {"chunk-count"}, found
    assert "chunk_count 3, 2 rows" in found[0].detail


async def test_a_duplicate_chunk(runtime: Runtime) -> None:
    collection, doc, vdid = await indexed(runtime)
    await sql(runtime, f"ALTER TABLE rag_{collection} DROP CONSTRAINT rag_{collection}_chunk_key")
    async with runtime.sessionmaker() as session, session.begin():
        await add_chunk(session, collection, vdid, doc, 1)
    found = await violations(runtime, f"rag_{collection}")
    assert kinds(found) == {"duplicate-chunk", "chunk-count"}, found
    assert f"({vdid}, 1) 2 times" in next(v.detail for v in found if v.kind == "duplicate-chunk")


async def test_a_row_naming_a_missing_object(runtime: Runtime) -> None:
    collection, doc, _ = await indexed(runtime)
    await runtime.storage.delete(f"rag/{collection}/parsed/{doc}.txt")
    found = await violations(runtime, doc)
    assert kinds(found) == {"missing-object"}, found
    assert "parsed_path" in found[0].detail


async def test_an_old_orphan_object_and_a_half_written_file(runtime: Runtime) -> None:
    collection, _, _ = await indexed(runtime)
    await runtime.storage.put(f"rag/{collection}/stray.txt", b"nobody's")
    media = Path(runtime.settings.storage.media_dir)
    (media / "rag" / collection / ".a.txt.0123.tmp").write_bytes(b"half")
    assert await violations(runtime, f"{collection}/stray") == []  # younger than the sweep age
    found = await violations(runtime, collection, orphan_grace=timedelta(0))
    assert kinds(found) == {"orphan-object", "half-written"}, found


async def test_an_orphan_stored_before_a_scenario_is_judged_by_the_sweep_age(
    runtime: Runtime,
) -> None:
    collection, _, _ = await indexed(runtime)
    await runtime.storage.put(f"rag/{collection}/earlier.txt", b"another scenario's")
    since = datetime.now(UTC) + timedelta(seconds=5)  # as if stored before this scenario
    strict = {"orphan_grace": timedelta(0)}
    assert await violations(runtime, collection, **strict, orphans_since=since) == []
    found = await violations(runtime, collection, **strict, orphans_since=since - timedelta(60))
    assert kinds(found) == {"orphan-object"}, found


async def test_an_in_progress_chunk_set_is_no_orphan(runtime: Runtime) -> None:
    doc, attempt = uuid.uuid4(), uuid.uuid4()
    collection = f"inv_{uuid.uuid4().hex[:10]}"
    await runtime.storage.put(f"rag/{collection}/chunks/{doc}/{attempt}.json", b"[]")
    await insert_document(runtime, id=doc, collection_name=collection, attempt_id=attempt)
    assert await violations(runtime, collection, orphan_grace=timedelta(0)) == []
    await sql(
        runtime,
        "UPDATE rag_documents SET status = 'error', error_message = 'x' WHERE id = :d",
        d=doc,
    )
    found = await violations(runtime, collection, orphan_grace=timedelta(0))
    assert kinds(found) == {"orphan-object"}, found


async def test_a_stale_processing_row_and_an_error_without_message(runtime: Runtime) -> None:
    stale, silent = uuid.uuid4(), uuid.uuid4()
    await insert_document(
        runtime, id=stale, collection_name="inv_stale", created_at=func.now() - timedelta(hours=2)
    )
    await insert_document(runtime, id=silent, collection_name="inv_stale", status="error")
    assert kinds(await violations(runtime, stale)) == {"stale-processing"}
    assert kinds(await violations(runtime, silent)) == {"error-without-message"}


async def test_a_replace_that_left_the_old_row(runtime: Runtime) -> None:
    collection, old, _ = await indexed(runtime)
    _, new, _ = await indexed(runtime)
    await sql(
        runtime,
        "UPDATE rag_documents SET collection_name = :c, knowledge_base_id = :k, "
        "replace_by_name = (id = :n) WHERE id IN (:o, :n)",
        c=collection,
        k=uuid.uuid4(),
        o=old,
        n=new,
    )
    found = await violations(runtime, new)
    assert "replace-left-rows" in kinds(found), found


async def test_a_table_recreated_after_its_teardown(runtime: Runtime) -> None:
    collection, doc, _ = await indexed(runtime)
    assert await violations(runtime, f"rag_{collection} exists", torn_down=[collection]) == []
    await sql(runtime, "DELETE FROM rag_documents WHERE id = :d", d=doc)
    await sql(runtime, f"DELETE FROM rag_{collection}")
    found = await violations(runtime, f"rag_{collection} exists", torn_down=[collection])
    assert kinds(found) == {"table-recreated"}, found


async def test_a_processing_row_whose_event_is_not_pending(
    runtime: Runtime, kafka: KafkaSettings
) -> None:
    doc = uuid.uuid4()
    await insert_document(runtime, id=doc, collection_name="inv_lost")
    assert kinds(await violations(runtime, doc, kafka=kafka)) == {"processing-without-event"}
    await outbox_row(runtime, DocumentAccepted.TOPIC, {"document_id": str(doc)}, published=False)
    assert await violations(runtime, doc, kafka=kafka) == []


async def outbox_row(
    runtime: Runtime, topic: str, payload: dict[str, str], *, published: bool
) -> uuid.UUID:
    event_id = uuid.uuid4()
    await sql(
        runtime,
        "INSERT INTO outbox (event_id, topic, key, payload, headers, published_at) VALUES "
        f"(:e, :t, 'k', CAST(:p AS jsonb), '{{}}', {'now()' if published else 'NULL'})",
        e=event_id,
        t=topic,
        p=json.dumps(payload),
    )
    return event_id


async def test_a_published_event_missing_from_kafka(runtime: Runtime, kafka: KafkaSettings) -> None:
    sent = await outbox_row(runtime, DocumentIndexed.TOPIC, {}, published=True)
    lost = await outbox_row(runtime, DocumentIndexed.TOPIC, {}, published=True)
    producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers)
    await producer.start()
    try:
        await producer.send_and_wait(
            DocumentIndexed.TOPIC, b"{}", headers=[("event-id", str(sent).encode())]
        )
    finally:
        await producer.stop()
    assert await violations(runtime, sent, kafka=kafka) == []
    assert kinds(await violations(runtime, lost, kafka=kafka)) == {"published-not-in-kafka"}


def test_consumed_means_committed_past_every_copy_or_dead_lettered() -> None:
    topic, group = DocumentAccepted.TOPIC, "parser"
    log = KafkaLog()
    log.copies["e"] = [Copy(topic, 0, 5, {}), Copy(retry_topic(topic, group), 1, 7, {})]
    log.committed[group] = {TopicPartition(topic, 0): 6}
    assert not log.consumed("e", topic, group)  # its retry copy is still to be handled
    log.committed[group][TopicPartition(retry_topic(topic, group), 1)] = 8
    assert log.consumed("e", topic, group)
    assert not log.consumed("e", topic, "embedder")
    log.copies["d"] = [Copy(topic, 0, 9, {}), Copy(dlq_topic(topic, group), 0, 1, {})]
    assert not log.consumed("d", topic, group)  # a dead letter without its headers
    log.copies["d"][1] = Copy(dlq_topic(topic, group), 0, 1, dict.fromkeys(DLQ_HEADERS, "x"))
    assert log.consumed("d", topic, group)


def test_an_unfinished_multipart_upload_is_half_written() -> None:
    infra = load_infra_env()
    settings = StorageSettings(
        backend="s3",
        s3_bucket=infra["STORAGE__S3_BUCKET"],
        s3_prefix=f"inv-{uuid.uuid4().hex[:8]}",
        s3_endpoint_url=infra["STORAGE__S3_ENDPOINT_URL"],
    )
    client = boto3.client(
        "s3",
        endpoint_url=settings.s3_endpoint_url,
        region_name="us-east-1",
        aws_access_key_id=infra["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=infra["AWS_SECRET_ACCESS_KEY"],
    )
    storage = S3Storage(settings, client)
    storage.put("rag/c/kept.txt", b"x")
    upload = client.create_multipart_upload(Bucket=storage.bucket, Key=storage._key("rag/c/big"))
    try:
        objects, partial = list_storage(storage)
        assert [o.key for o in objects] == ["rag/c/kept.txt"]
        assert partial == ["rag/c/big"]
    finally:
        client.abort_multipart_upload(
            Bucket=storage.bucket, Key=storage._key("rag/c/big"), UploadId=upload["UploadId"]
        )
        storage.delete_prefix("rag")
