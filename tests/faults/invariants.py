"""The promises of issue #14 as one check over Postgres, storage and Kafka, run after a fault.

``check_invariants`` returns every violation it finds (empty when docproc kept its word):

* **I1 terminal**: every accepted document is ``done`` or ``error`` with a message; one
  still ``processing`` is a violation once it is older than ``processing_bound`` or when no
  event for it is pending (unpublished in the outbox, or published and not yet consumed).
* **I2 exactly once**: a ``done`` document has exactly ``chunk_count`` rows in
  ``rag_<collection>`` under its ``vector_document_id``; ``(document_id, chunk_no)`` is
  unique; a ``replace`` leaves one ``done`` row per (knowledge base, filename).
* **I3 referential**: every chunk names a live ``done`` row that owns its set; every key a
  row names is stored; an object nothing names is older than ``orphan_grace`` only if it
  is a chunk set of a document still in progress (one stored before ``orphans_since``, on a
  cluster other scenarios share, is theirs: judged by the sweep age instead); no
  half-written file (a local ``.tmp``, an S3 multipart upload) remains.
* **I4 log**: every outbox row marked published is in Kafka, and each subscribed group
  consumed it (committed past it and past its retry copies) or dead-lettered it with the
  origin and failure headers.
* **I5 tenancy**: for each name in ``torn_down`` with no knowledge base, no pending
  teardown and no ``done`` document left (unfiled content may outlive its bases), no
  ``rag_<name>`` table exists: a late write did not create it again.

Each violation says which invariant, what kind, and the ids to look at. A scenario on
the processes of ``tests.e2e.harness`` ends with ``assert_invariants(cluster)``.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import boto3
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from docproc_common.bus.delivery import dlq_topic, retry_topic
from docproc_common.bus.outbox import EVENT_ID_HEADER
from docproc_common.bus.topics import SUBSCRIBERS
from docproc_common.db.vector_tables import is_vector_table
from docproc_common.settings import KafkaSettings, StorageSettings
from docproc_common.storage import LocalStorage, S3Storage, Storage, create_storage
from docproc_testing.db import plain_dsn

from tests.e2e.harness import Cluster

SWEEP_AGE = timedelta(hours=1)  # docproc_teardown.service.SWEEP_AFTER
DLQ_HEADERS = (
    "x-original-topic",
    "x-original-partition",
    "x-original-offset",
    "x-error-class",
    "x-error-message",
)


@dataclass(frozen=True, slots=True)
class Violation:
    invariant: str  # "I1" .. "I5"
    kind: str  # a short name for the broken rule
    detail: str  # the ids and values to debug it with

    def __str__(self) -> str:
        return f"{self.invariant} {self.kind}: {self.detail}"


@dataclass(frozen=True, slots=True)
class Copy:
    """One message in Kafka carrying an event id."""

    topic: str
    partition: int
    offset: int
    headers: dict[str, str]


@dataclass
class KafkaLog:
    copies: dict[str, list[Copy]] = field(default_factory=lambda: defaultdict(list))
    committed: dict[str, dict[TopicPartition, int]] = field(default_factory=dict)

    def consumed(self, event_id: str, topic: str, group: str) -> bool:
        """Whether ``group`` is done with the event: committed past every copy of it on the
        topic and its retry topic, or dead-lettered it with its headers."""
        copies = self.copies.get(event_id, [])
        if any(
            c.topic == dlq_topic(topic, group) and all(h in c.headers for h in DLQ_HEADERS)
            for c in copies
        ):
            return True
        offsets = self.committed.get(group, {})
        mine = [c for c in copies if c.topic in (topic, retry_topic(topic, group))]
        return bool(mine) and all(
            offsets.get(TopicPartition(c.topic, c.partition), -1) > c.offset for c in mine
        )


async def read_kafka(kafka: KafkaSettings, since: datetime, timeout_s: float = 60.0) -> KafkaLog:
    """Every message of docproc's topics (and their retry and DLQ topics) produced since
    ``since``, by event id and by the topic's name in the code (without the namespace), and
    each subscribed group's committed offsets."""
    topics = set(SUBSCRIBERS)
    for topic, groups in SUBSCRIBERS.items():
        for group in groups:
            topics |= {retry_topic(topic, group), dlq_topic(topic, group)}
    found = KafkaLog()
    on_broker = {kafka.on_broker(t): t for t in topics}
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)
    await admin.start()
    try:
        present = sorted(set(on_broker) & set(await admin.list_topics()))
        tps = [
            TopicPartition(t["topic"], p["partition"])
            for t in (await admin.describe_topics(present) if present else [])
            for p in t["partitions"]
        ]
        for group in {g for groups in SUBSCRIBERS.values() for g in groups}:
            offsets = await admin.list_consumer_group_offsets(kafka.on_broker(group))
            found.committed[group] = {
                TopicPartition(on_broker[tp.topic], tp.partition): meta.offset
                for tp, meta in offsets.items()
                if tp.topic in on_broker
            }
    finally:
        await admin.close()
    if not tps:
        return found
    consumer = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        enable_auto_commit=False,
        group_id=None,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        starts = await consumer.offsets_for_times(
            {tp: int((since.timestamp() - 60) * 1000) for tp in tps}
        )
        todo = {}
        for tp in tps:
            start = starts.get(tp)
            if start is None or start.offset >= ends[tp]:
                consumer.pause(tp)
                continue
            consumer.seek(tp, start.offset)
            todo[tp] = ends[tp]
        deadline = time.monotonic() + timeout_s
        while todo and time.monotonic() < deadline:
            batches = await consumer.getmany(timeout_ms=500, max_records=1000)
            for tp, records in batches.items():
                for r in records:
                    if r.offset >= todo.get(tp, 0):
                        continue
                    headers = {k: v.decode(errors="replace") for k, v in r.headers or ()}
                    event_id = headers.get(EVENT_ID_HEADER)
                    if event_id:
                        found.copies[event_id].append(
                            Copy(on_broker[tp.topic], tp.partition, r.offset, headers)
                        )
            for tp in list(todo):
                if await consumer.position(tp) >= todo[tp]:
                    consumer.pause(tp)
                    del todo[tp]
        if todo:
            raise TimeoutError(f"Kafka not read to its end in {timeout_s}s: {sorted(todo)}")
    finally:
        await consumer.stop()
    return found


@dataclass(frozen=True, slots=True)
class StoredObject:
    key: str
    modified: datetime


def list_storage(storage: Storage) -> tuple[list[StoredObject], list[str]]:
    """Blocking: every stored object (keys as docproc names them) and every half-written one."""
    objects: list[StoredObject] = []
    partial: list[str] = []
    if isinstance(storage, LocalStorage):
        root = Path(storage.root)
        for path in root.rglob("*") if root.exists() else ():
            if not path.is_file():
                continue
            key = path.relative_to(root).as_posix()
            if path.name.startswith(".") and path.name.endswith(".tmp"):
                partial.append(key)
                continue
            modified = datetime.fromtimestamp(path.stat().st_mtime, UTC)
            objects.append(StoredObject(key, modified))
        return objects, partial
    assert isinstance(storage, S3Storage), storage
    prefix = f"{storage.prefix}/" if storage.prefix else ""
    paginator = storage.client.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=storage.bucket, Prefix=prefix):
        for obj in page.get("Contents", []):
            objects.append(StoredObject(obj["Key"][len(prefix) :], obj["LastModified"]))
    uploads = storage.client.list_multipart_uploads(Bucket=storage.bucket, Prefix=prefix)
    partial += [u["Key"][len(prefix) :] for u in uploads.get("Uploads", [])]
    return objects, partial


async def check_invariants(
    database_url: str,
    storage: Storage,
    kafka: KafkaSettings | None,
    *,
    processing_bound: timedelta = timedelta(minutes=10),
    orphan_grace: timedelta = SWEEP_AGE,
    orphans_since: datetime | None = None,
    torn_down: Iterable[str] = (),
) -> list[Violation]:
    """I1-I5 over one deployment's database, storage and (when given) Kafka."""
    conn = await asyncpg.connect(plain_dsn(database_url))
    try:
        return await _check(
            conn,
            storage,
            kafka,
            processing_bound=processing_bound,
            orphan_grace=orphan_grace,
            orphans_since=orphans_since,
            torn_down=list(torn_down),
        )
    finally:
        await conn.close()


async def _check(
    conn: asyncpg.Connection,
    storage: Storage,
    kafka: KafkaSettings | None,
    *,
    processing_bound: timedelta,
    orphan_grace: timedelta,
    orphans_since: datetime | None,
    torn_down: list[str],
) -> list[Violation]:
    out: list[Violation] = []
    now = await conn.fetchval("SELECT now()")
    docs = await conn.fetch(
        "SELECT id, collection_name, knowledge_base_id, filename, status, error_message, "
        "vector_document_id, chunk_count, storage_path, parsed_path, attempt_id, "
        "replace_by_name, created_at FROM rag_documents"
    )
    by_id = {d["id"]: d for d in docs}
    outbox = await conn.fetch(
        "SELECT event_id, topic, payload, published_at, created_at FROM outbox ORDER BY id"
    )

    # I4 first: I1 asks which events are still pending.
    pending_docs: set[str] = set()
    kafka_log: KafkaLog | None = None
    if kafka is not None and outbox:
        since = min(r["created_at"] for r in outbox)
        kafka_log = await read_kafka(kafka, since)
    for row in outbox:
        event_id, topic = str(row["event_id"]), row["topic"]
        payload = row["payload"]
        payload = json.loads(payload) if isinstance(payload, str) else payload
        subject = str(payload.get("document_id", ""))
        if row["published_at"] is None:
            pending_docs.add(subject)
            continue
        if kafka_log is None:
            continue
        if not any(c.topic == topic for c in kafka_log.copies.get(event_id, [])):
            out.append(
                Violation(
                    "I4", "published-not-in-kafka", f"event {event_id} on {topic} ({subject})"
                )
            )
            continue
        for group in SUBSCRIBERS.get(topic, ()):
            if not kafka_log.consumed(event_id, topic, group):
                pending_docs.add(subject)
                copies = [
                    f"{c.topic}[{c.partition}]@{c.offset}" for c in kafka_log.copies[event_id]
                ]
                out.append(
                    Violation(
                        "I4",
                        "not-consumed",
                        f"event {event_id} on {topic} ({subject}) not consumed or "
                        f"dead-lettered by {group}; copies {copies}",
                    )
                )

    # I1
    for d in docs:
        if d["status"] == "processing":
            age = now - d["created_at"]
            if age > processing_bound:
                out.append(
                    Violation("I1", "stale-processing", f"document {d['id']} processing for {age}")
                )
            elif kafka is not None and str(d["id"]) not in pending_docs:
                out.append(
                    Violation(
                        "I1", "processing-without-event", f"document {d['id']}: no event pending"
                    )
                )
        elif d["status"] == "error" and not (d["error_message"] or "").strip():
            out.append(Violation("I1", "error-without-message", f"document {d['id']}"))

    # I2 and I3 over the vector tables
    tables = [
        r["tablename"]
        for r in await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        if is_vector_table(r["tablename"])
    ]
    sets: dict[tuple[str, uuid.UUID], int] = {}
    for table in tables:
        collection = table[len("rag_") :]
        for r in await conn.fetch(
            f'SELECT document_id, chunk_no, count(*) AS n FROM "{table}" '
            "GROUP BY document_id, chunk_no HAVING count(*) > 1"
        ):
            out.append(
                Violation(
                    "I2",
                    "duplicate-chunk",
                    f"{table}: ({r['document_id']}, {r['chunk_no']}) {r['n']} times",
                )
            )
        for r in await conn.fetch(
            f'SELECT document_id, tracking_id, count(*) AS n FROM "{table}" '
            "GROUP BY document_id, tracking_id"
        ):
            sets[(collection, r["document_id"])] = r["n"]
            owner = by_id.get(r["tracking_id"])
            if owner is None:
                out.append(
                    Violation(
                        "I3",
                        "chunk-without-document",
                        f"{table}: set {r['document_id']} ({r['n']} chunks) names tracking row "
                        f"{r['tracking_id']}, which does not exist",
                    )
                )
            elif owner["status"] != "done" or owner["vector_document_id"] != r["document_id"]:
                out.append(
                    Violation(
                        "I3",
                        "chunk-of-dead-set",
                        f"{table}: set {r['document_id']} ({r['n']} chunks) of document "
                        f"{owner['id']} ({owner['status']}, its set "
                        f"{owner['vector_document_id']})",
                    )
                )
    table_names = {t[len("rag_") :] for t in tables}
    for d in docs:
        if d["status"] != "done":
            continue
        if d["collection_name"] not in table_names:
            out.append(
                Violation(
                    "I2", "done-without-table", f"document {d['id']} in {d['collection_name']}"
                )
            )
            continue
        have = sets.get((d["collection_name"], d["vector_document_id"]), 0)
        if have != d["chunk_count"]:
            out.append(
                Violation(
                    "I2",
                    "chunk-count",
                    f"document {d['id']}: chunk_count {d['chunk_count']}, "
                    f"{have} rows in rag_{d['collection_name']}",
                )
            )
    done_replacing = [d for d in docs if d["status"] == "done" and d["replace_by_name"]]
    for d in done_replacing:
        older = [
            o["id"]
            for o in docs
            if o["id"] != d["id"]
            and o["status"] == "done"
            and o["knowledge_base_id"] == d["knowledge_base_id"]
            and o["filename"] == d["filename"]
            and o["created_at"] <= d["created_at"]
        ]
        if older:
            out.append(
                Violation(
                    "I2",
                    "replace-left-rows",
                    f"{d['filename']!r} in {d['knowledge_base_id']}: {d['id']} and {older}",
                )
            )

    # I3 storage
    objects, partial = await asyncio.to_thread(list_storage, storage)
    stored = {o.key for o in objects}
    named: set[str] = set()
    for d in docs:
        for column in ("storage_path", "parsed_path"):
            key = d[column]
            if key is None:
                continue
            named.add(key)
            if key not in stored:
                out.append(
                    Violation(
                        "I3", "missing-object", f"document {d['id']} {column} {key} is not stored"
                    )
                )
    for r in await conn.fetch("SELECT id, storage_path FROM chat_files"):
        named.add(r["storage_path"])
        if r["storage_path"] not in stored:
            out.append(
                Violation(
                    "I3", "missing-object", f"chat file {r['id']} {r['storage_path']} is not stored"
                )
            )
    for r in await conn.fetch("SELECT storage_paths FROM collection_teardowns"):
        paths = r["storage_paths"]
        named |= set(json.loads(paths) if isinstance(paths, str) else paths)
    # a document in progress owns its chunk set and a sync's staged copy (named by its events)
    in_progress = {
        f"rag/{d['collection_name']}/chunks/{d['id']}/{d['attempt_id']}.json"
        for d in docs
        if d["status"] == "processing"
    }
    for row in outbox:
        payload = row["payload"]
        payload = json.loads(payload) if isinstance(payload, str) else payload
        owner = by_id.get(_uuid(payload.get("document_id")))
        if owner is not None and owner["status"] == "processing":
            in_progress |= {payload[k] for k in ("storage_path", "chunks_path") if payload.get(k)}
    journals = {f"rag/{d['collection_name']}/llamaparse/{d['id']}/" for d in docs}
    for o in objects:
        earlier = orphans_since is not None and o.modified < orphans_since
        if o.key in named or o.key in in_progress or now - o.modified <= orphan_grace:
            continue
        if earlier and now - o.modified <= SWEEP_AGE:
            continue  # another scenario's, which the sweeper reclaims
        if any(o.key.startswith(j) for j in journals):
            continue  # a cloud parse's job id, kept beside its document
        out.append(
            Violation("I3", "orphan-object", f"{o.key} (stored {o.modified}) is named by no row")
        )
    out += [Violation("I3", "half-written", key) for key in partial]

    # I5
    for name in torn_down:
        live = await conn.fetchval(
            "SELECT (SELECT count(*) FROM knowledge_bases WHERE collection_name = $1) + "
            "(SELECT count(*) FROM collection_teardowns WHERE collection_name = $1) + "
            "(SELECT count(*) FROM rag_documents WHERE collection_name = $1 AND status = 'done')",
            name,
        )
        if not live and name in table_names:
            out.append(
                Violation("I5", "table-recreated", f"rag_{name} exists after its teardown finished")
            )
    return out


def _uuid(value: object) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


async def settled_invariants(
    database_url: str,
    storage: Storage,
    kafka: KafkaSettings | None,
    *,
    within_s: float = 60.0,
    **options: Any,
) -> list[Violation]:
    """``check_invariants`` again until it finds nothing or ``within_s`` passes (offsets are
    committed a moment after the rows they follow): the last answer."""
    deadline = time.monotonic() + within_s
    while True:
        found = await check_invariants(database_url, storage, kafka, **options)
        if not found or time.monotonic() > deadline:
            return found
        await asyncio.sleep(1.0)


def cluster_storage(env: dict[str, str]) -> Storage:
    """The storage a cluster's services use, from their environment (``Cluster.env``)."""
    settings = StorageSettings(
        backend=env.get("STORAGE__BACKEND", "local"),
        media_dir=Path(env.get("STORAGE__MEDIA_DIR", ".")),
        s3_bucket=env.get("STORAGE__S3_BUCKET", ""),
        s3_prefix=env.get("STORAGE__S3_PREFIX", ""),
        s3_endpoint_url=env.get("STORAGE__S3_ENDPOINT_URL"),
    )
    if settings.backend == "s3":
        client = boto3.client(
            "s3",
            endpoint_url=settings.s3_endpoint_url,
            region_name=settings.s3_region,
            aws_access_key_id=env.get("AWS_ACCESS_KEY_ID"),
            aws_secret_access_key=env.get("AWS_SECRET_ACCESS_KEY"),
        )
        return S3Storage(settings, client)
    return create_storage(settings)


def cluster_kafka(env: dict[str, str]) -> KafkaSettings:
    """The broker and namespace a cluster's services use, from their environment."""
    return KafkaSettings(
        bootstrap_servers=env["KAFKA__BOOTSTRAP_SERVERS"],
        namespace=env.get("KAFKA__NAMESPACE", ""),
    )


def cluster_violations(
    cluster: Cluster, *, within_s: float = 60.0, **options: Any
) -> list[Violation]:
    """``settled_invariants`` over the cluster's database, storage and broker."""
    return asyncio.run(
        settled_invariants(
            cluster.database_url,
            cluster_storage(cluster.env),
            cluster_kafka(cluster.env),
            within_s=within_s,
            **options,
        )
    )


def assert_invariants(cluster: Cluster, *, within_s: float = 60.0, **options: Any) -> None:
    """Fail with every violation once ``within_s`` passes without the cluster settling."""
    found = cluster_violations(cluster, within_s=within_s, **options)
    assert not found, "invariants broken:\n" + "\n".join(map(str, found))
