"""The broker and the database themselves failing (issue #14 F3, F4), on the five services as
processes.

The module runs one cluster on a Kafka broker and a Postgres server of its own
(``docproc_testing.private_infra``: started from the cached binaries under a temporary
directory, stopped and removed however the module ends), so killing, freezing and
restarting them never touches the shared ones; storage is the shared moto S3. Each
service reaches Postgres through a ``TcpFaultProxy`` of its own, so a fault is armed on
one worker's connections; the outbox is relayed by the upload service alone, so a worker
sends COMMIT only for its own units of work.

- F4, worker side: a worker's connection dropped mid-write (the backend terminated with
  ``pg_terminate_backend``, or the proxy's reset, as the chunk COPY is sent) and around
  COMMIT (reset before it reaches the server; sent and its answer lost, the outcome
  unknown to the worker): the unit is retried whole, and a commit that landed is never
  applied twice (one chunk set, I2).
- F4, Postgres restarted: while it is down the API answers 503 with ``Retry-After`` and
  keeps nothing of the refused upload; afterwards the work accepted before resumes.
- F3: the broker SIGKILLed while documents flow and started again after 20 s on the same
  port and log dirs; and frozen (SIGSTOP) for 30 s, then SIGCONT. Uploads answer 202
  throughout (the outbox holds the events), no service dies, the consumers resume and
  their lag drains (every event consumed: I4), every document is indexed once.

Each scenario ends with the invariant checker over the whole deployment.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import asyncpg
import pytest
from docproc_common.events import DocumentAccepted, DocumentIndexed, DocumentParsed
from docproc_testing.api import create_kb, wait_for
from docproc_testing.db import plain_dsn
from docproc_testing.private_infra import (
    PrivateKafka,
    PrivatePostgres,
    private_kafka,
    private_postgres,
)
from docproc_testing.proxies import Action, TcpFaultProxy
from docproc_testing.stores import S3Store

from tests.e2e.harness import SERVICES, Cluster, running_cluster
from tests.e2e.test_pipeline import wait_complete
from tests.e2e.test_sync import SECRETS_VIEWER, create_source, run_source, wait_indexed
from tests.e2e.test_sync import create_kb as create_sync_kb
from tests.e2e.test_teardown import table_exists
from tests.faults.conftest import ONE_RELAY
from tests.faults.invariants import assert_invariants
from tests.faults.test_crashes import document, text_of, upload

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.timeout(900)]

KAFKA_DOWN_S = 20.0
#: a source on moto (127.0.0.1, plain http); the scheduler and the reconciler wait: the sync
#: service's only COMMITs are then its runs'
SYNC_ENV = {
    "SYNC__ALLOW_PRIVATE_NETWORKS": "true",
    "SYNC__ALLOW_PLAIN_HTTP": "true",
    "SYNC__SCHEDULER_INTERVAL_S": "3600",
    "SYNC__RECONCILE_INTERVAL_S": "3600",
}
KAFKA_FROZEN_S = 30.0


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateKafka]:
    with private_kafka(Path(tmp_path_factory.mktemp("kafka"))) as broker:
        yield broker


@pytest.fixture(scope="module")
def postgres() -> Iterator[PrivatePostgres]:
    with private_postgres() as server:
        yield server


@pytest.fixture(scope="module")
def proxies(postgres: PrivatePostgres) -> Iterator[dict[str, TcpFaultProxy]]:
    port = postgres.admin_url.rsplit(":", 1)[1].split("/")[0]
    made = {name: TcpFaultProxy("127.0.0.1", int(port)) for name in SERVICES}
    yield made
    for proxy in made.values():
        proxy.close()


@pytest.fixture(scope="module")
def cluster(
    kafka: PrivateKafka,
    postgres: PrivatePostgres,
    proxies: dict[str, TcpFaultProxy],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Cluster]:
    with running_cluster(
        Path(tmp_path_factory.mktemp("cluster")),
        env_for={name: {**ONE_RELAY.get(name, {}), **SYNC_ENV} for name in SERVICES},
        infra_env={
            "KAFKA__BOOTSTRAP_SERVERS": kafka.bootstrap_servers,
            "DATABASE__URL": postgres.admin_url,
        },
        database_via={name: proxy.port for name, proxy in proxies.items()},
    ) as c:
        yield c


@pytest.fixture(autouse=True)
def disarmed(proxies: dict[str, TcpFaultProxy]) -> Iterator[None]:
    yield
    for proxy in proxies.values():
        proxy.disarm()


def all_running(cluster: Cluster) -> None:
    """No service died of the fault (nothing here restarts a process)."""
    for name, svc in cluster.services.items():
        assert svc.process is not None
        assert svc.process.poll() is None, f"{name} exited:\n{svc.log_path.read_text()[-3000:]}"


def terminator(cluster: Cluster, proxy: TcpFaultProxy) -> Callable[[], None]:
    """``pg_terminate_backend`` of the backends serving ``proxy``'s clients in an open
    transaction (the worker's unit of work), from the side."""

    async def terminate() -> None:
        conn = await asyncpg.connect(plain_dsn(cluster.database_url))
        try:
            await conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE client_port = ANY($1::int[]) AND state LIKE 'idle in transaction%'",
                proxy.upstream_ports(),
            )
        finally:
            await conn.close()

    return lambda: asyncio.run(terminate())


def chunk_rows(cluster: Cluster, collection: object, doc: uuid.UUID) -> int:
    """The rows of ``doc``'s chunk set in its collection's table."""
    return int(
        cluster.query(f"SELECT count(*) FROM rag_{collection} WHERE tracking_id = $1", doc)[0][0]
    )


#: For each way a connection is lost, what it meets in each worker's unit of work: the
#: parser's COMMIT; the embedder's chunk COPY or its COMMIT; the teardown's DROP TABLE or
#: its COMMIT. One document, then its base's deletion, meet all three.
WORKER_FAULTS: dict[str, dict[str, tuple[bytes, str]]] = {
    # the backend terminated with the unit's transaction open, from the side
    "terminated": {
        "parser": (b"COMMIT", "terminate"),
        "embedder": (b"FROM STDIN", "terminate"),
        "teardown": (b"DROP TABLE", "terminate"),
    },
    # the connection reset before the statement or the COMMIT reaches the server
    "reset": {
        "parser": (b"COMMIT", "reset_before"),
        "embedder": (b"FROM STDIN", "reset_before"),
        "teardown": (b"COMMIT", "reset_before"),
    },
    # the COMMIT reaches Postgres and lands; the connection is reset before its answer, so
    # the worker cannot know it did (an ambiguous commit)
    "commit-outcome-lost": {
        "parser": (b"COMMIT", "reset_after"),
        "embedder": (b"COMMIT", "reset_after"),
        "teardown": (b"COMMIT", "reset_after"),
    },
}


def arm(cluster: Cluster, proxy: TcpFaultProxy, pattern: bytes, how: str) -> None:
    if how == "terminate":
        proxy.arm(pattern, "call", on_match=terminator(cluster, proxy))
    else:
        action: Action = "reset_before" if how == "reset_before" else "reset_after"
        proxy.arm(pattern, action)


def events_about(cluster: Cluster, doc: uuid.UUID) -> list[str]:
    rows = cluster.query(
        "SELECT topic FROM outbox WHERE payload->>'document_id' = $1 ORDER BY id", str(doc)
    )
    return [r[0] for r in rows]


@pytest.mark.parametrize("fault", list(WORKER_FAULTS))
def test_f4_a_workers_connection_lost_mid_write_or_at_commit_retries_the_unit_whole(
    cluster: Cluster, proxies: dict[str, TcpFaultProxy], fault: str
) -> None:
    faults = WORKER_FAULTS[fault]
    matched = {service: proxies[service].matched for service in faults}
    for service in ("parser", "embedder"):
        arm(cluster, proxies[service], *faults[service])
    with cluster.admin() as client:
        kb = create_kb(client)
        name = str(kb["collection_name"])
        doc = upload(cluster, kb, f"{fault}.txt", text_of(fault.replace("-", ""), 3))
        wait_complete(client, kb["id"])
        for service in ("parser", "embedder"):
            assert proxies[service].matched == matched[service] + 1, service  # met its unit
        row = document(cluster, doc)
        assert row["status"] == "done", row
        assert isinstance(row["chunk_count"], int) and row["chunk_count"] > 1
        assert chunk_rows(cluster, name, doc) == row["chunk_count"]
        # each unit's writes applied once: one event from each stage, one chunk set
        assert events_about(cluster, doc) == [
            DocumentAccepted.TOPIC,
            DocumentParsed.TOPIC,
            DocumentIndexed.TOPIC,
        ]
        assert_invariants(cluster)

        arm(cluster, proxies["teardown"], *faults["teardown"])
        assert client.delete(f"/kb/{kb['id']}").status_code == 200
    reserved = "SELECT count(*) FROM collection_teardowns WHERE collection_name = $1"
    wait_for(
        lambda: not table_exists(cluster, name) and not cluster.query(reserved, name)[0][0],
        what="the teardown to finish",
    )
    assert proxies["teardown"].matched == matched["teardown"] + 1
    all_running(cluster)
    assert_invariants(cluster, torn_down=[name])


def test_f3_broker_killed_while_documents_flow_then_restarted(
    cluster: Cluster, kafka: PrivateKafka
) -> None:
    broker_outage(cluster, kafka, "f3kill", frozen=False)


def test_f3_broker_frozen_while_documents_flow_then_resumed(
    cluster: Cluster, kafka: PrivateKafka
) -> None:
    broker_outage(cluster, kafka, "f3stop", frozen=True)


def broker_outage(cluster: Cluster, kafka: PrivateKafka, topic: str, *, frozen: bool) -> None:
    with cluster.admin() as client:
        kb = create_kb(client)
        docs = [upload(cluster, kb, f"before-{i}.txt", text_of(f"{topic}{i}", 2)) for i in range(2)]
        down_s = KAFKA_FROZEN_S if frozen else KAFKA_DOWN_S
        if frozen:
            kafka.pause()
        else:
            kafka.kill()
        started = time.monotonic()
        try:
            # the outbox absorbs the outage: every upload is accepted meanwhile
            for i in range(3):
                docs.append(upload(cluster, kb, f"during-{i}.txt", text_of(f"{topic}d{i}", 2)))
            time.sleep(max(0.0, down_s - (time.monotonic() - started)))
        finally:
            if frozen:
                kafka.resume()
            else:
                kafka.start()
        state = wait_complete(client, kb["id"], timeout=600)
        assert state["indexed_count"] == len(docs), state
    for doc in docs:
        row = document(cluster, doc)
        assert row["status"] == "done", row
        assert chunk_rows(cluster, row["collection_name"], doc) == row["chunk_count"]
        assert events_about(cluster, doc) == [
            DocumentAccepted.TOPIC,
            DocumentParsed.TOPIC,
            DocumentIndexed.TOPIC,
        ]
    all_running(cluster)
    assert_invariants(cluster, within_s=180)


def test_f4_postgres_restarted_the_api_answers_503_then_work_resumes(
    cluster: Cluster, postgres: PrivatePostgres
) -> None:
    with cluster.admin() as client:
        kb = create_kb(client)
        accepted = upload(cluster, kb, "before.txt", text_of("restart", 2))
        postgres.stop()
        try:
            refused = client.post(
                f"/kb/{kb['id']}/documents", files={"file": ("down.txt", text_of("down", 1))}
            )
            assert refused.status_code == 503, refused.text
            assert int(refused.headers["Retry-After"]) >= 1
            assert refused.json()["error"]["code"] == "UNAVAILABLE"
            listed = client.get(f"/kb/{kb['id']}/documents")
            assert listed.status_code == 503, listed.text
            assert int(listed.headers["Retry-After"]) >= 1
        finally:
            postgres.start()

        def accepting() -> bool:
            r = client.get(f"/kb/{kb['id']}/ingestion")
            return r.status_code == 200

        wait_for(accepting, 120, what="the API to answer again")
        after = upload(cluster, kb, "after.txt", text_of("resumed", 2))
        state = wait_complete(client, kb["id"], timeout=300)
        assert state["indexed_count"] == 2, state
    names = cluster.query(
        "SELECT filename FROM rag_documents WHERE knowledge_base_id = $1", uuid.UUID(str(kb["id"]))
    )
    assert sorted(r[0] for r in names) == ["after.txt", "before.txt"]  # nothing of down.txt
    for doc in (accepted, after):
        assert document(cluster, doc)["status"] == "done"
    all_running(cluster)
    assert_invariants(cluster, within_s=120)


def in_transaction_after(cluster: Cluster, statement: str) -> Callable[[int], bool]:
    """Whether the backend behind a proxy's connection (its ``client_port``) is in a
    transaction whose last statement began with ``statement``: which unit commits."""

    async def last(port: int) -> str:
        conn = await asyncpg.connect(plain_dsn(cluster.database_url))
        try:
            found = await conn.fetchval(
                "SELECT query FROM pg_stat_activity "
                "WHERE client_port = $1 AND state LIKE 'idle in transaction%'",
                port,
            )
        finally:
            await conn.close()
        return str(found or "")

    return lambda port: asyncio.run(last(port)).startswith(statement)


#: The sync run's units: a file's acceptance (its tracking row, its ``DocumentAccepted`` and
#: the source's claim on it), and the run's end (its log row and the delivery's claim)
ACCEPTED = "UPDATE rag_document_claims SET pending_document_id"
FINISHED = "UPDATE sync_logs SET status"
SYNC_FAULTS = {
    "acceptance-terminated": (ACCEPTED, "terminate"),
    "acceptance-outcome-lost": (ACCEPTED, "reset_after"),
    "finish-outcome-lost": (FINISHED, "reset_after"),
}


@pytest.mark.parametrize("fault", list(SYNC_FAULTS))
def test_f4_the_sync_connection_lost_at_a_commit_leaves_one_document_per_file(
    cluster: Cluster, proxies: dict[str, TcpFaultProxy], fault: str
) -> None:
    statement, how = SYNC_FAULTS[fault]
    proxy = proxies["sync"]
    matched = proxy.matched
    when = in_transaction_after(cluster, statement)
    if how == "terminate":
        proxy.arm(b"COMMIT", "call", on_match=terminator(cluster, proxy), when=when)
    else:
        action: Action = "reset_before" if how == "reset_before" else "reset_after"
        proxy.arm(b"COMMIT", action, when=when)
    store = S3Store(cluster.env)
    files = {"a.txt": text_of("synca", 1), "b/b.txt": text_of("syncb", 1)}
    store.put(files)
    with cluster.client(**SECRETS_VIEWER) as client:
        name, kb_id = create_sync_kb(client, "f4sync")
        secret = {"name": "f4 reader", "kind": store.secret_kind, "value": store.secret()}
        source = create_source(client, kb_id, store.connector, store.config(), secret)
        log = run_source(client, kb_id, source["id"])
        assert proxy.matched == matched + 1  # the fault met its unit
        # the run was retried whole, not ended ``error`` with a file left for the next run
        assert log["status"] == "done", log
        wait_indexed(client, kb_id, len(files))
    rows = cluster.query(
        "SELECT source_path, count(*) FROM rag_documents WHERE knowledge_base_id = $1 "
        "GROUP BY source_path",
        uuid.UUID(kb_id),
    )
    assert sorted(r[1] for r in rows) == [1] * len(files), rows
    all_running(cluster)
    assert_invariants(cluster)
