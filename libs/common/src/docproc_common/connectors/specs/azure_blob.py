"""Azure Blob Storage: the configuration the API checks (the connector runs in ``docproc_sync.connectors.azure_blob``)."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from docproc_common.connectors.base import ConfigRefusal, ConnectorOptions
from docproc_common.connectors.specs.object_store import (
    ObjectStoreSpec,
    endpoint_refusal,
    prefix_field,
)

#: 3-63 lowercase letters, digits and single hyphens, starting and ending with a letter or digit.
CONTAINER_NAME = re.compile(r"^(?!.*--)[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$")


class AzureBlobConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", title="Azure Blob Storage")

    account_url: str = Field(
        max_length=500,
        description=(
            "The storage account's blob endpoint, https://<account>.blob.core.windows.net "
            "(or an Azure Stack / Azurite endpoint)"
        ),
    )
    container: str = Field(description="The container's name")
    prefix: str = prefix_field(
        "Only blobs whose names start with this prefix are synced (a literal prefix)"
    )


class AzureBlobSpec(ObjectStoreSpec):
    NAME = "azure_blob"
    TITLE = "Azure Blob Storage"
    DESCRIPTION = "Blobs under a prefix of an Azure Blob Storage container"
    CONFIG_MODEL = AzureBlobConfig
    SECRET_KIND = "azure_storage"
    DESTINATION_FIELDS = frozenset({"account_url"})  # the container is a path on that host

    @classmethod
    def validate_config(cls, config: object, options: ConnectorOptions) -> ConfigRefusal | None:
        assert isinstance(config, AzureBlobConfig)
        if not CONTAINER_NAME.fullmatch(config.container):
            return ConfigRefusal(
                "A container name is 3-63 lowercase letters, digits and single hyphens",
                "container",
            )
        return endpoint_refusal(config.account_url, "account_url", options)
