"""Amazon S3: the configuration the API checks (the connector runs in ``docproc_sync.connectors.s3``)."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from docproc_common.connectors.base import ConfigRefusal, ConnectorOptions
from docproc_common.connectors.specs.object_store import (
    ObjectStoreSpec,
    endpoint_field,
    endpoint_refusal,
    prefix_field,
)

BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]$")


class S3Config(BaseModel):
    model_config = ConfigDict(extra="forbid", title="Amazon S3 (or an S3-compatible store)")

    bucket: str = Field(description="The bucket's name")
    prefix: str = prefix_field(
        "Only keys starting with this prefix are synced (a literal prefix, not a pattern)"
    )
    region: str | None = Field(default=None, max_length=64, pattern=r"^[a-z0-9-]+$")
    endpoint_url: str | None = endpoint_field(
        "An S3-compatible endpoint (MinIO, Ceph); empty for AWS itself"
    )


class S3Spec(ObjectStoreSpec):
    NAME = "s3"
    TITLE = "Amazon S3"
    DESCRIPTION = "Objects under a prefix of an S3 bucket (or an S3-compatible store)"
    CONFIG_MODEL = S3Config
    SECRET_KIND = "aws_credentials"
    #: AWS addresses a bucket by host (<bucket>.s3.<region>.amazonaws.com), as does an endpoint
    DESTINATION_FIELDS = frozenset({"bucket", "region", "endpoint_url"})

    @classmethod
    def validate_config(cls, config: object, options: ConnectorOptions) -> ConfigRefusal | None:
        assert isinstance(config, S3Config)
        if not BUCKET_NAME.fullmatch(config.bucket) or ".." in config.bucket:
            return ConfigRefusal(
                "A bucket name is 3-63 lowercase letters, digits, dots and hyphens", "bucket"
            )
        if config.endpoint_url:
            return endpoint_refusal(config.endpoint_url, "endpoint_url", options)
        return None
