"""Google Cloud Storage: the configuration the API checks (the connector runs in ``docproc_sync.connectors.gcs``)."""

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

#: 3-63 lowercase letters, digits, dots, hyphens and underscores, a letter or digit at each end.
BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$")


class GcsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", title="Google Cloud Storage")

    bucket: str = Field(description="The bucket's name")
    prefix: str = prefix_field(
        "Only objects whose names start with this prefix are synced (a literal prefix)"
    )
    endpoint_url: str | None = endpoint_field(
        "A GCS-compatible JSON API endpoint; empty for Google itself"
    )


class GcsSpec(ObjectStoreSpec):
    NAME = "gcs"
    TITLE = "Google Cloud Storage"
    DESCRIPTION = "Objects under a prefix of a Google Cloud Storage bucket"
    CONFIG_MODEL = GcsConfig
    SECRET_KIND = "gcp_service_account"
    DESTINATION_FIELDS = frozenset({"endpoint_url"})  # the bucket is a path on that host
    CHANGE_SIGNAL = "md5Hash (generation)"

    @classmethod
    def validate_config(cls, config: object, options: ConnectorOptions) -> ConfigRefusal | None:
        assert isinstance(config, GcsConfig)
        if (
            not BUCKET_NAME.fullmatch(config.bucket)
            or ".." in config.bucket
            or config.bucket.startswith("goog")
        ):
            return ConfigRefusal(
                "A bucket name is 3-63 lowercase letters, digits, dots, hyphens and underscores",
                "bucket",
            )
        if config.endpoint_url:
            return endpoint_refusal(config.endpoint_url, "endpoint_url", options)
        return None
