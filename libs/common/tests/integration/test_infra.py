"""The real test infrastructure from scripts/infra.py answers: Kafka, Postgres + pgvector, S3."""

from __future__ import annotations

import base64
import uuid
from pathlib import Path

import pytest
from docproc_testing.infra import free_port, load_infra_env
from docproc_testing.private_infra import infra_script

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def infra_env() -> dict[str, str]:
    return load_infra_env()


def test_env_has_every_setting(infra_env: dict[str, str]) -> None:
    for key in (
        "DATABASE__URL",
        "KAFKA__BOOTSTRAP_SERVERS",
        "STORAGE__S3_ENDPOINT_URL",
        "STORAGE__S3_BUCKET",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_DEFAULT_REGION",
    ):
        assert infra_env.get(key), key
    assert infra_env["KAFKA__BOOTSTRAP_SERVERS"].startswith("127.0.0.1:")
    # already up: a second call does not restart anything
    assert load_infra_env() == infra_env


async def test_kafka_produce_consume_group_commit(infra_env: dict[str, str]) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    bootstrap = infra_env["KAFKA__BOOTSTRAP_SERVERS"]
    topic = f"infra-test-{uuid.uuid4().hex[:8]}"
    group = f"infra-test-group-{uuid.uuid4().hex[:8]}"
    payload = uuid.uuid4().bytes

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        meta = await producer.send_and_wait(topic, payload, key=b"k")
    finally:
        await producer.stop()

    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        msg = await consumer.getone()
        assert msg.value == payload
        assert (msg.partition, msg.offset) == (meta.partition, meta.offset)
        await consumer.commit()
        tp = TopicPartition(topic, msg.partition)
        assert await consumer.committed(tp) == msg.offset + 1
    finally:
        await consumer.stop()


async def test_postgres_pgvector(infra_env: dict[str, str]) -> None:
    import asyncpg

    dsn = infra_env["DATABASE__URL"].replace("postgresql+asyncpg://", "postgresql://", 1)
    conn = await asyncpg.connect(dsn)
    try:
        version = await conn.fetchval(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        )
        assert version
        dist = await conn.fetchval("SELECT '[1,2,3]'::vector <=> '[1,2,4]'::vector")
        assert 0.0 < float(dist) < 0.01
    finally:
        await conn.close()


def test_s3_put_get(infra_env: dict[str, str]) -> None:
    import boto3

    s3 = boto3.client(
        "s3",
        endpoint_url=infra_env["STORAGE__S3_ENDPOINT_URL"],
        region_name=infra_env["AWS_DEFAULT_REGION"],
        aws_access_key_id=infra_env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=infra_env["AWS_SECRET_ACCESS_KEY"],
    )
    bucket = infra_env["STORAGE__S3_BUCKET"]
    key = f"infra-test/{uuid.uuid4().hex}.txt"
    s3.put_object(Bucket=bucket, Key=key, Body=b"hello docproc")
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == b"hello docproc"
    s3.delete_object(Bucket=bucket, Key=key)


def test_a_cluster_id_that_starts_with_a_dash_formats(tmp_path: Path) -> None:
    """One id in 64 drawn as url-safe base64 starts with ``-``; passed after ``-t`` the
    storage tool read it as an option and the broker never started."""
    infra = infra_script()
    assert not any(infra.kafka_cluster_id().startswith("-") for _ in range(2000))
    dashed = base64.urlsafe_b64encode(b"\xf8" + bytes(15)).decode().rstrip("=")
    assert dashed.startswith("-")
    port, cport = free_port(), free_port()
    props = tmp_path / "server.properties"
    props.write_text(
        "process.roles=broker,controller\n"
        "node.id=1\n"
        f"controller.quorum.bootstrap.servers=127.0.0.1:{cport}\n"
        f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}\n"
        "controller.listener.names=CONTROLLER\n"
        f"log.dirs={tmp_path / 'data'}\n"
    )
    infra.kafka_format(infra.DEFAULT_KAFKA_VERSION, tmp_path, props, dashed)
    meta = (tmp_path / "data" / "meta.properties").read_text()
    assert f"cluster.id={dashed}\n" in meta
