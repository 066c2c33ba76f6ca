"""``s3``: a bucket and a prefix of any S3-compatible store, read with the source's own keys."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.errors import ClientFailedError, ConnectorError
from docproc_common.egress.pinned import check_url
from pydantic import BaseModel, ConfigDict, Field

from docproc_sync.connectors.base import RemoteListing
from docproc_sync.connectors.landing import open_landing
from docproc_sync.connectors.object_store import ObjectStoreConnector, StoredObject

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
from docproc_common.connectors.specs.s3 import (
    S3Config,
    S3Spec,
)

ERROR_CODE = re.compile(r"^[A-Za-z0-9.]{1,64}$")


def failure_kind(exc: ClientError | BotoCoreError) -> str:
    """What a failed call says in a sync log: the S3 error code (``AccessDenied``,
    ``NoSuchBucket``) or botocore's exception class, never its message (which holds the
    endpoint URL, the bucket and the request's query string). A code that is no AWS-style
    symbol (an S3-compatible server can answer anything) is only its class."""
    if isinstance(exc, ClientError):
        code = str(exc.response.get("Error", {}).get("Code", ""))
        if ERROR_CODE.fullmatch(code):
            return code
    return type(exc).__name__


class S3Secret(BaseModel):
    """The ``aws_credentials`` secret's value."""

    model_config = ConfigDict(extra="ignore")

    access_key_id: str = Field(min_length=1)
    secret_access_key: str = Field(min_length=1)
    session_token: str | None = None


class S3Connector(S3Spec, ObjectStoreConnector[S3Config]):
    """Objects under ``prefix`` in ``bucket``.

    Change signal: the ETag from ``ListObjectsV2``, compared before ``GetObject``,
    so a nightly run over an unchanged bucket costs a listing, not the bucket.
    """

    SCHEME = "s3"
    CONTAINER_FIELD = "bucket"

    def __init__(
        self, config: S3Config, secret: Mapping[str, Any] | None, options: ConnectorOptions
    ) -> None:
        super().__init__(config, secret, options)
        try:
            keys = S3Secret.model_validate(dict(self.secret))
        except ValueError as exc:
            raise ConnectorError(
                "The source's aws_credentials secret lacks access_key_id or secret_access_key"
            ) from exc
        # Explicit keys only: boto3's default chain (environment, instance profile) is the
        # deployment's identity, which a tenant's bucket name must never borrow.
        session = boto3.session.Session(
            aws_access_key_id=keys.access_key_id,
            aws_secret_access_key=keys.secret_access_key,
            aws_session_token=keys.session_token,
            region_name=config.region or "us-east-1",
        )
        self.client: S3Client = session.client(
            "s3",
            endpoint_url=config.endpoint_url or None,
            config=Config(
                connect_timeout=min(options.timeout_s, 10.0),
                read_timeout=options.timeout_s,
                retries={"mode": "standard", "max_attempts": 3},
            ),
        )

    async def list_files(self) -> RemoteListing:
        if self.config.endpoint_url:
            await check_url(
                self.config.endpoint_url, allow_private=self.options.allow_private_networks
            )
        return await super().list_files()

    def _list_page(self, token: str | None) -> tuple[list[StoredObject], str | None]:
        kwargs: dict[str, Any] = {"Bucket": self.container, "Prefix": self.prefix}
        if token:
            kwargs["ContinuationToken"] = token
        try:
            page = self.client.list_objects_v2(**kwargs)
        except (ClientError, BotoCoreError) as exc:
            raise ClientFailedError(failure_kind(exc), subject="source") from exc
        objects = [
            StoredObject(o["Key"], int(o.get("Size", 0)), o.get("ETag"))
            for o in page.get("Contents", [])
        ]
        more = page.get("IsTruncated") and page.get("NextContinuationToken")
        return objects, str(more) if more else None

    def _download(self, key: str, dest: Path) -> int:
        written = 0
        try:
            body = self.client.get_object(Bucket=self.container, Key=key)["Body"]
            with open(open_landing(dest), "wb") as out:
                for chunk in body.iter_chunks(1 << 20):  # a dropped stream raises here
                    out.write(chunk)
                    written += len(chunk)
        except (ClientError, BotoCoreError) as exc:
            raise ClientFailedError(failure_kind(exc), subject="document") from exc
        return written

    async def aclose(self) -> None:
        self.client.close()
