"""Poison messages (issue #14 F7) and ``docproc dlq list`` / ``docproc dlq replay``.

Put on the parser's and the embedder's topics beside real uploads: invalid JSON on every
partition, an event of an unknown ``schema_version``, an event for a document that does not
exist, and an event whose work always fails (its chunk set is not in storage). Each is
dead-lettered with its origin, failure, attempts and trace context, or (the missing
document) consumed as a no-op; the document whose work always fails ends ``error`` after
its bounded attempts; the partitions keep flowing; and the unknown version's document,
waiting meanwhile, is indexed once its corrected message is replayed, once. Then a file
whose parse always kills the parse child: tried again after the bus's delay, never in place,
then dead-lettered, its row ``error``, the files after it indexed.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from docproc_common.bus.delivery import retry_topic
from docproc_common.events import DocumentAccepted, DocumentParsed
from docproc_testing.api import create_kb, wait_for

from tests.e2e.harness import Cluster
from tests.e2e.test_pipeline import wait_complete
from tests.faults.conftest import CRASHING_FILE
from tests.faults.invariants import (
    DLQ_HEADERS,
    assert_invariants,
    check_invariants,
    cluster_kafka,
    cluster_storage,
    read_kafka,
)

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def docproc(cluster: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("docproc", path=str(Path(sys.executable).parent)) or "docproc"
    return subprocess.run(
        [exe, *args], env=cluster.env, capture_output=True, text=True, timeout=120, check=False
    )


def dead_letters(cluster: Cluster) -> list[dict[str, Any]]:
    listed = docproc(cluster, "dlq", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]


def waiting_copy(cluster: Cluster, of: uuid.UUID, filename: str) -> tuple[uuid.UUID, uuid.UUID]:
    """A new document row like ``of``, waiting for its first attempt: (id, attempt)."""
    doc, attempt = uuid.uuid4(), uuid.uuid4()
    cluster.query(
        "INSERT INTO rag_documents (id, collection_name, knowledge_base_id, organization_id, "
        "uploaded_by, filename, filesize, filetype, status, storage_path, source, writer_kind, "
        "ingestion_config, attempt_id, chunk_count) SELECT $1, collection_name, "
        "knowledge_base_id, organization_id, uploaded_by, $3, filesize, filetype, 'processing', "
        "$4, source, writer_kind, ingestion_config, $2, 0 FROM rag_documents WHERE id = $5",
        doc,
        attempt,
        filename,
        f"stored/{doc}_{filename}",
        of,
    )
    return doc, attempt


def payload_of(cluster: Cluster, topic: str, doc: uuid.UUID) -> dict[str, Any]:
    row = cluster.query(
        "SELECT payload FROM outbox WHERE topic = $1 AND payload->>'document_id' = $2",
        topic,
        str(doc),
    )[0][0]
    return dict(json.loads(row) if isinstance(row, str) else row)


async def produce(cluster: Cluster, messages: list[tuple[str, bytes, str, int | None]]) -> None:
    """(topic, value, event id, partition) each, with a traceparent, on the cluster's broker."""
    settings = cluster_kafka(cluster.env)
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap_servers)
    await producer.start()
    try:
        for topic, value, event_id, partition in messages:
            await producer.send_and_wait(
                settings.on_broker(topic),
                value,
                key=event_id.encode(),
                partition=partition,
                headers=[("event-id", event_id.encode()), ("traceparent", TRACEPARENT.encode())],
            )
    finally:
        await producer.stop()


@pytest.mark.timeout(900)
def test_f7_poison_messages_are_dead_lettered_and_a_fixed_one_replayed_once(
    cluster: Cluster, tmp_path: Path
) -> None:
    with cluster.admin() as client:
        kb = create_kb(client)
        first = client.post(f"/kb/{kb['id']}/documents", files={"file": ("c.txt", b"Okapi.")})
        assert first.status_code == 202
        wait_complete(client, kb["id"])
    model = uuid.UUID(first.json()["tracking_id"])
    accepted = payload_of(cluster, DocumentAccepted.TOPIC, model)
    parsed = payload_of(cluster, DocumentParsed.TOPIC, model)
    storage = cluster_storage(cluster.env)

    # a document waiting for a parse whose message a newer producer wrote (schema_version 2)
    future, future_attempt = waiting_copy(cluster, model, "future.txt")
    storage.put(f"stored/{future}_future.txt", b"The kiwi is a flightless bird.")
    fixed = {
        **accepted,
        "document_id": str(future),
        "attempt_id": str(future_attempt),
        "storage_path": f"stored/{future}_future.txt",
        "filename": "future.txt",
    }
    # a document whose embedding always fails: its chunk set is not in storage
    doomed, doomed_attempt = waiting_copy(cluster, model, "doomed.txt")
    storage.put(f"stored/{doomed}_doomed.txt", b"doomed")
    doomed_event = {
        **parsed,
        "document_id": str(doomed),
        "attempt_id": str(doomed_attempt),
        "chunks_path": f"rag/{kb['collection_name']}/chunks/{doomed}/{doomed_attempt}.json",
    }
    ids = {name: str(uuid.uuid4()) for name in ("json0", "json1", "json2", "v2", "gone", "doom")}
    letters = {n: ids[n] for n in ("json0", "json1", "json2", "v2", "doom")}
    # the package's cluster is shared, and its scenarios run in any order: the letters the
    # others left (a crashing parse's, say) are counted, not mistaken for this one's
    earlier = dead_letters(cluster)
    gone = {**accepted, "document_id": str(uuid.uuid4()), "attempt_id": str(uuid.uuid4())}
    asyncio.run(
        produce(
            cluster,
            [
                *(
                    (DocumentAccepted.TOPIC, b'{"document_id": ', ids[f"json{p}"], p)
                    for p in range(3)
                ),
                (
                    DocumentAccepted.TOPIC,
                    json.dumps({**fixed, "schema_version": 2}).encode(),
                    ids["v2"],
                    None,
                ),
                (DocumentAccepted.TOPIC, json.dumps(gone).encode(), ids["gone"], None),
                (DocumentParsed.TOPIC, json.dumps(doomed_event).encode(), ids["doom"], None),
            ],
        )
    )
    # the partitions keep flowing: uploads after the poison are indexed
    with cluster.admin() as client:
        for i in range(3):
            r = client.post(f"/kb/{kb['id']}/documents", files={"file": (f"n{i}.txt", b"Quokka.")})
            assert r.status_code == 202

    def five() -> dict[str, dict[str, Any]] | None:
        found = {d["headers"]["event-id"]: d for d in dead_letters(cluster)}
        return found if set(letters.values()) <= set(found) else None

    by_event: dict[str, dict[str, Any]] = wait_for(
        five, timeout=300, interval=2, what="five dead letters"
    )
    assert set(by_event) - {d["headers"]["event-id"] for d in earlier} == set(letters.values())
    for name, letter in ((n, by_event[event]) for n, event in letters.items()):
        headers = letter["headers"]
        assert all(h in headers for h in DLQ_HEADERS), (name, headers)
        assert headers["traceparent"] == TRACEPARENT
        if name == "doom":
            assert letter["service"] == "embedder"
            assert headers["x-attempt"] == "5"  # KAFKA__MAX_ATTEMPTS, each retried in place
            assert headers["x-error-class"] == "NoSuchKey"  # the missing chunk set
        else:
            assert letter["service"] == "parser"
            assert headers["x-attempt"] == "1"  # a message that cannot decode is not retried
            assert headers["x-error-class"] == "PermanentError"
            assert headers["x-original-topic"] == cluster_kafka(cluster.env).on_broker(
                DocumentAccepted.TOPIC
            )
    for p in range(3):
        assert by_event[ids[f"json{p}"]]["headers"]["x-original-partition"] == str(p)
    assert "schema_version: value_error" in by_event[ids["v2"]]["headers"]["x-error-message"]

    with cluster.admin() as client:

        def indexed(count: int) -> dict[str, Any] | None:
            state = dict(client.get(f"/kb/{kb['id']}/ingestion").json())
            return state if state["indexed_count"] == count else None

        state = wait_for(lambda: indexed(4), timeout=300, what="the uploads after the poison")
    assert state["failed_count"] == 1  # the doomed document
    ((status, message),) = cluster.query(
        "SELECT status, error_message FROM rag_documents WHERE id = $1", doomed
    )
    assert status == "error" and "failed 5 times" in message
    log = asyncio.run(read_kafka(cluster_kafka(cluster.env), accepted_since(cluster)))
    assert log.consumed(ids["gone"], DocumentAccepted.TOPIC, "parser")  # a no-op, not a letter
    # the waiting document's event is spent: the checker says so, until the replay
    found = asyncio.run(check_invariants(cluster.database_url, storage, cluster_kafka(cluster.env)))
    assert {v.kind for v in found if str(future) in v.detail} == {"processing-without-event"}

    listed = docproc(cluster, "dlq", "list")
    assert listed.returncode == 0 and f"{len(earlier) + 5} dead letter(s)" in listed.stdout, (
        listed.stdout
    )
    address = by_event[ids["v2"]]["address"]
    body = tmp_path / "fixed.json"
    body.write_text(json.dumps(fixed))
    replay = docproc(cluster, "dlq", "replay", address, "--payload", str(body))
    assert replay.returncode == 0, replay.stdout + replay.stderr
    with cluster.admin() as client:
        wait_for(lambda: indexed(5), timeout=300, what="the replayed document")
    again = docproc(cluster, "dlq", "replay", address, "--payload", str(body))
    assert again.returncode == 1 and "replayed already" in again.stdout
    assert docproc(cluster, "dlq", "replay", "nonsense").returncode == 1
    assert_invariants(cluster)


def accepted_since(cluster: Cluster) -> Any:
    return cluster.query("SELECT min(created_at) FROM outbox")[0][0]


def test_f7_a_file_whose_parse_always_crashes_is_retried_then_dead_lettered(
    cluster: Cluster,
) -> None:
    """The parse child dies on every attempt (``CRASHING_FILE``): each attempt after the bus's
    delay, none in place; past the last, the row ends ``error`` saying so and the event is
    dead-lettered with its origin, failure, attempts and trace; the files after it are
    indexed meanwhile."""
    logged = len(cluster.services["parser"].log_path.read_text(errors="replace"))
    with cluster.admin() as client:
        kb = create_kb(client)
        r = client.post(
            f"/kb/{kb['id']}/documents",
            files={"file": (CRASHING_FILE, b"The okapi is a forest giraffe.")},
            headers={"traceparent": TRACEPARENT},
        )
        assert r.status_code == 202, r.text
        doomed = uuid.UUID(r.json()["tracking_id"])
        for i in range(2):
            r = client.post(f"/kb/{kb['id']}/documents", files={"file": (f"a{i}.txt", b"Tapir.")})
            assert r.status_code == 202
        state = wait_complete(client, kb["id"], timeout=300)
    assert (state["indexed_count"], state["failed_count"]) == (2, 1), state
    ((status, message),) = cluster.query(
        "SELECT status, error_message FROM rag_documents WHERE id = $1", doomed
    )
    assert status == "error"
    assert message.startswith("The document could not be parsed (ParserCrashed) - "), message
    ((event_id, headers),) = cluster.query(
        "SELECT event_id, headers FROM outbox WHERE topic = $1 AND payload->>'document_id' = $2",
        DocumentAccepted.TOPIC,
        str(doomed),
    )
    sent = dict(json.loads(headers) if isinstance(headers, str) else headers)

    def letter() -> dict[str, Any] | None:
        found = [d for d in dead_letters(cluster) if d["headers"]["event-id"] == str(event_id)]
        return found[0] if found else None

    dead = wait_for(letter, timeout=120, interval=2, what="the dead letter")
    assert dead["service"] == "parser"
    headers = dead["headers"]
    assert all(h in headers for h in DLQ_HEADERS), headers
    assert headers["x-attempt"] == "5"  # KAFKA__MAX_ATTEMPTS, none of them in place
    assert headers["x-error-class"] == "ParserCrashed"
    kafka = cluster_kafka(cluster.env)
    assert headers["x-original-topic"] == kafka.on_broker(
        retry_topic(DocumentAccepted.TOPIC, "parser")
    )
    assert headers.get("traceparent") == sent.get("traceparent")
    log = cluster.services["parser"].log_path.read_text(errors="replace")[logged:]
    assert log.count("fault point parser.child reached") == 5
    assert_invariants(cluster)
