"""The S3 backend encrypts every object it writes (SSE-S3 by default, SSE-KMS with a key),
checked on moto's S3 server with head_object; ``docproc doctor`` reports backend and encryption."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import chat_inputs as gen
import pytest
from chat_support import auth, chat_api
from docproc_cli.main import app as cli
from docproc_common.settings import get_settings
from docproc_common.storage import S3Storage
from typer.testing import CliRunner

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def kms_key(infra: dict[str, str]) -> str:
    kms = boto3.client(
        "kms", endpoint_url=infra["STORAGE__S3_ENDPOINT_URL"], region_name="us-east-1"
    )
    return str(kms.create_key(Description="docproc chat test")["KeyMetadata"]["KeyId"])


def head(storage: S3Storage, key: str) -> dict[str, Any]:
    full = f"{storage.prefix}/{key}" if storage.prefix else key
    return dict(storage.client.head_object(Bucket=storage.bucket, Key=full))


@pytest.mark.parametrize("mode", ["sse-s3", "sse-kms"])
async def test_every_object_is_written_with_server_side_encryption(
    database_url: str, infra: dict[str, str], tmp_path: Path, kms_key: str, mode: str
) -> None:
    options: dict[str, Any] = (
        {} if mode == "sse-s3" else {"s3_sse": "aws:kms", "s3_kms_key_id": kms_key}
    )
    user = f"u-{uuid.uuid4().hex[:8]}"
    async with chat_api(database_url, infra, "s3", tmp_path, options) as api:
        storage = api.runtime.storage.sync
        assert isinstance(storage, S3Storage)
        body = (await api.upload(user, "q.pdf", gen.make_pdf(["x"]), "application/pdf")).json()
        agent = {"has_workspace": True, "agent_id": "a", "conversation_id": "c"}
        rendered = await api.client.post(
            "/api/v1/files/render",
            json={"file_ids": [body["id"]], "agent": agent},
            headers=auth(user),
        )
        assert rendered.status_code == 200
        keys = api.stored(user) + [
            f"workspaces/{user}/a/c/{k}" for k in api.workspace(user, "a", "c")
        ]
        assert len(keys) == 3  # the upload, its workspace copy, the extracted-text sibling
        for key in keys:
            meta = head(storage, key)
            if mode == "sse-s3":
                assert meta["ServerSideEncryption"] == "AES256"
                assert "SSEKMSKeyId" not in meta
            else:
                assert meta["ServerSideEncryption"] == "aws:kms"
                assert str(meta["SSEKMSKeyId"]).endswith(kms_key)
        assert head(storage, api.stored(user)[0])["ContentType"] == "application/pdf"


@pytest.fixture
def fresh_settings() -> Iterator[None]:
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.mark.usefixtures("fresh_settings")
@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (
            {"STORAGE__BACKEND": "local"},
            ["storage backend: local", "encryption at rest: the volume's own (local backend)"],
        ),
        (
            {"STORAGE__BACKEND": "s3"},
            ["storage backend: s3", "encryption at rest: on, AES256"],
        ),
        (
            {
                "STORAGE__BACKEND": "s3",
                "STORAGE__S3_SSE": "aws:kms",
                "STORAGE__S3_KMS_KEY_ID": "k-123",
            },
            ["storage backend: s3", "encryption at rest: on, aws:kms (KMS key k-123)"],
        ),
    ],
)
def test_doctor_reports_backend_and_encryption(
    infra: dict[str, str], tmp_path: Path, env: dict[str, str], expected: list[str]
) -> None:
    base = {
        "STORAGE__S3_BUCKET": infra["STORAGE__S3_BUCKET"],
        "STORAGE__S3_ENDPOINT_URL": infra["STORAGE__S3_ENDPOINT_URL"],
        "STORAGE__MEDIA_DIR": str(tmp_path / "media"),
        "DOCPROC_HOME": str(tmp_path / "home"),
    }
    result = CliRunner().invoke(cli, ["doctor"], env={**base, **env})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for line in expected:
        assert line in lines
