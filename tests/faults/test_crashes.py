"""Crashes at named points of the embedder and the outbox relay, and redelivered events (issue #14
F1, F2, F6, F10), on the five services as processes over Kafka, Postgres and moto S3.

One cluster for the module (its outbox relayed by the upload service alone); each scenario
arms its fault point in the running service (``docproc_testing.faults``), starts the
service again once it has crashed there (disarmed), and ends with the invariant checker over the whole
deployment: an object it stored that no row names is a violation at once (``settled``).
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient
from docproc_common.events import DocumentAccepted, DocumentParsed
from docproc_common.faultpoints import FAULT_EXIT
from docproc_common.settings import KafkaSettings
from docproc_testing import faults
from docproc_testing.api import create_kb, wait_for

from tests.e2e.harness import Cluster
from tests.e2e.test_metrics import scrape
from tests.e2e.test_pipeline import wait_complete
from tests.faults.invariants import assert_invariants, cluster_kafka, read_kafka

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.timeout(600)]


@pytest.fixture
def settled(cluster: Cluster) -> Callable[[], None]:
    """The invariant check of a scenario: no grace for an object it stored and no row names.
    The package's cluster is shared, and what another module's scenario left for the sweeper
    (a chunk set whose delete met an S3 fault, say) is judged by the sweep age, as there.
    Listings give whole seconds, hence the floor."""
    since = datetime.now(UTC).replace(microsecond=0)
    return lambda: assert_invariants(cluster, orphan_grace=timedelta(0), orphans_since=since)


def text_of(topic: str, paragraphs: int = 5) -> bytes:
    """About ``paragraphs`` chunks (2,500 characters each) about ``topic``."""
    return "\n\n".join(
        f"Part {i} on {topic}. " + " ".join(f"{topic} fact {i}.{j} is noted." for j in range(90))
        for i in range(paragraphs)
    ).encode()


def upload(cluster: Cluster, kb: dict[str, object], name: str, data: bytes) -> uuid.UUID:
    """The new document's id; the 202 may not reach us when the service dies at once after its
    commit (a relay fault point), and the row says what was accepted."""
    with cluster.admin() as client:
        try:
            response = client.post(f"/kb/{kb['id']}/documents", files={"file": (name, data)})
        except httpx.TransportError:
            pass
        else:
            assert response.status_code == 202, response.text
            return uuid.UUID(response.json()["tracking_id"])
    rows = cluster.query(
        "SELECT id FROM rag_documents WHERE knowledge_base_id = $1 AND filename = $2",
        uuid.UUID(str(kb["id"])),
        name,
    )
    assert len(rows) == 1, rows
    return uuid.UUID(str(rows[0][0]))


def document(cluster: Cluster, doc: uuid.UUID) -> dict[str, object]:
    rows = cluster.query(
        "SELECT status, chunk_count, vector_document_id, collection_name FROM rag_documents "
        "WHERE id = $1",
        doc,
    )
    return dict(rows[0])


def chunks(cluster: Cluster, collection: object, doc: uuid.UUID) -> list[tuple[object, ...]]:
    """The chunk rows of ``doc`` (id and creation time), none while its table does not exist."""
    table = f"rag_{collection}"
    if not cluster.query("SELECT to_regclass($1) IS NOT NULL", f"public.{table}")[0][0]:
        return []
    return [
        tuple(r)
        for r in cluster.query(
            f"SELECT id, created_at FROM {table} WHERE tracking_id = $1 ORDER BY id", doc
        )
    ]


def copies(cluster: Cluster, topic: str, doc: uuid.UUID) -> int:
    """How many times the outbox event of ``topic`` about ``doc`` is in Kafka."""
    (event_id,) = cluster.query(
        "SELECT event_id FROM outbox WHERE topic = $1 AND payload->>'document_id' = $2",
        topic,
        str(doc),
    )[0]
    since = cluster.query("SELECT min(created_at) FROM outbox")[0][0]
    log = asyncio.run(read_kafka(cluster_kafka(cluster.env), since))
    return sum(c.topic == topic for c in log.copies.get(str(event_id), []))


def test_f1_embedder_killed_after_its_commit_redelivery_is_a_no_op(
    cluster: Cluster, settled: Callable[[], None]
) -> None:
    with cluster.admin() as client:
        kb = create_kb(client)
    faults.arm(cluster, "embedder", "embedder.after_commit")
    doc = upload(cluster, kb, "f1.txt", text_of("walrus"))
    assert cluster.services["embedder"].wait_exit(180) == FAULT_EXIT
    row = document(cluster, doc)
    assert row["status"] == "done"  # committed; the offset was not
    written = chunks(cluster, row["collection_name"], doc)
    assert len(written) == row["chunk_count"] > 1
    cluster.restart("embedder")
    # the redelivered event is consumed (the checker waits for the group's commit) and
    # leaves the set as it was: the same rows, written once; its chunk file is removed
    settled()
    assert chunks(cluster, row["collection_name"], doc) == written
    assert document(cluster, doc) == row


@contextmanager
def sampling(sample: object) -> Iterator[list[object]]:
    """Call ``sample()`` over and over in a thread until the block ends; what it returned."""
    seen: list[object] = []
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            seen.append(sample())  # type: ignore[operator]
            stop.wait(0.05)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        thread.join(30)


def test_f2_embedder_killed_inside_its_transaction_writes_the_set_once(
    cluster: Cluster, settled: Callable[[], None]
) -> None:
    with cluster.admin() as client:
        kb = create_kb(client)
        collection = kb["collection_name"]

        def visible() -> tuple[int, int] | None:
            """(rows in the table, hits a search shows) of the document now; None when the
            set was committed while the search ran (rows counted before and after it
            differ), as the sample cannot tell which side of the commit the search saw."""
            before = len(chunks(cluster, collection, doc))
            hits = client.post(
                "/rag/search",
                json={"query": "narwhal fact", "collections": [collection], "top_k": 50},
            )
            found = hits.json()["results"] if hits.status_code == 200 else []
            after = len(chunks(cluster, collection, doc))
            return (after, len(found)) if before == after else None

        faults.arm(cluster, "embedder", "embedder.in_transaction")
        doc = upload(cluster, kb, "f2.txt", text_of("narwhal"))
        with sampling(visible) as seen:
            assert cluster.services["embedder"].wait_exit(180) == FAULT_EXIT
            assert document(cluster, doc)["status"] == "processing"
            assert chunks(cluster, collection, doc) == []  # rolled back, table and all
            cluster.restart("embedder")
            wait_complete(client, kb["id"])
            seen.append(visible())
    count = document(cluster, doc)["chunk_count"]
    assert isinstance(count, int) and count > 1
    judged = {sample for sample in seen if sample is not None}
    assert judged <= {(0, 0), (count, count)}, sorted(judged)
    assert seen[-1] == (count, count)
    settled()


def test_f10_relay_killed_before_publish_loses_nothing(
    cluster: Cluster, settled: Callable[[], None]
) -> None:
    with cluster.admin() as client:
        kb = create_kb(client)
    faults.arm(cluster, "upload", "relay.before_publish")
    doc = upload(cluster, kb, "f10a.txt", text_of("puffin", 2))
    faults.crashed(cluster, "upload")
    with cluster.admin() as client:
        wait_complete(client, kb["id"])
    assert copies(cluster, DocumentAccepted.TOPIC, doc) == 1
    settled()


def test_f10_relay_killed_after_publish_the_duplicate_is_absorbed(
    cluster: Cluster, settled: Callable[[], None]
) -> None:
    with cluster.admin() as client:
        kb = create_kb(client)
    faults.arm(cluster, "upload", "relay.after_publish")
    doc = upload(cluster, kb, "f10b.txt", text_of("gannet", 2))
    faults.crashed(cluster, "upload")
    with cluster.admin() as client:
        wait_complete(client, kb["id"])
    assert copies(cluster, DocumentAccepted.TOPIC, doc) == 2  # published, not marked: again
    row = document(cluster, doc)
    assert len(chunks(cluster, row["collection_name"], doc)) == row["chunk_count"]
    settled()


def test_f6_an_event_twice_and_a_replay_from_offset_zero_are_no_ops(
    cluster: Cluster, settled: Callable[[], None]
) -> None:
    with cluster.admin() as client:
        kb = create_kb(client)
        doc = upload(cluster, kb, "f6.txt", text_of("dugong", 3))
        wait_complete(client, kb["id"])
    row = document(cluster, doc)
    written = chunks(cluster, row["collection_name"], doc)
    events = cluster.query("SELECT count(*) FROM outbox")[0][0]

    # the same DocumentParsed delivered again: the relay publishes its row a second time
    faults.redeliver(
        cluster, "topic = $1 AND payload->>'document_id' = $2", DocumentParsed.TOPIC, str(doc)
    )
    wait_for(lambda: copies(cluster, DocumentParsed.TOPIC, doc) == 2, what="the second copy")
    settled()

    # every topic replayed from offset 0 by the parser and embedder groups
    for name in ("parser", "embedder"):
        cluster.services[name].stop()
    asyncio.run(rewind_groups(cluster_kafka(cluster.env), ["parser", "embedder"]))
    for name in ("parser", "embedder"):
        cluster.restart(name)
    settled()  # consumed again, to the end
    parsed = cluster.query("SELECT count(*) FROM outbox WHERE topic = $1", DocumentParsed.TOPIC)
    accepted = cluster.query("SELECT count(*) FROM outbox WHERE topic = $1", DocumentAccepted.TOPIC)
    embedder, parser = scrape(cluster, "embedder"), scrape(cluster, "parser")
    # every event was handled again, and none parsed, embedded or wrote anything
    assert handled(embedder, "embedder", DocumentParsed.TOPIC) >= parsed[0][0]
    assert handled(parser, "parser", DocumentAccepted.TOPIC) >= accepted[0][0]
    assert not any(
        k.startswith("docproc_embedder_stage_seconds_count") and v for k, v in embedder.items()
    )
    assert not any(
        k.startswith("docproc_parser_stage_seconds_count") and v for k, v in parser.items()
    )
    assert cluster.query("SELECT count(*) FROM outbox")[0][0] == events
    assert chunks(cluster, row["collection_name"], doc) == written


def handled(series: dict[str, float], service: str, topic: str) -> float:
    return sum(
        v
        for k, v in series.items()
        if k.startswith(f"docproc_{service}_messages_total") and topic in k and 'outcome="ok"' in k
    )


async def rewind_groups(settings: KafkaSettings, groups: list[str]) -> None:
    """Set each (stopped) group back to the start of every partition it consumed: it reads
    the topics again from offset 0, as a fresh group would."""
    for group in groups:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=settings.bootstrap_servers,
            group_id=settings.on_broker(group),
            enable_auto_commit=False,
        )
        await consumer.start()
        try:
            admin = AIOKafkaAdminClient(bootstrap_servers=settings.bootstrap_servers)
            await admin.start()
            try:
                tps = list(await admin.list_consumer_group_offsets(settings.on_broker(group)))
            finally:
                await admin.close()
            consumer.assign(tps)
            starts = await consumer.beginning_offsets(tps)
            await consumer.commit({tp: starts[tp] for tp in tps})
        finally:
            await consumer.stop()
