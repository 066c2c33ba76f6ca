"""Server directory: the configuration the API checks (the connector runs in ``docproc_sync.connectors.local``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from docproc_common.connectors.base import (
    ConfigRefusal,
    ConnectorOptions,
    ConnectorSpec,
)


class LocalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", title="Server directory")

    path: str = Field(
        min_length=1, max_length=4096, description="An absolute directory on the server"
    )


class LocalSpec(ConnectorSpec):
    NAME = "local"
    TITLE = "Server directory"
    DESCRIPTION = "A directory on the docproc server itself; app admins only"
    CONFIG_MODEL = LocalConfig
    SECRET_KIND = None
    DESTINATION_FIELDS = frozenset({"path"})
    ADMIN_ONLY = True
    CHANGE_SIGNAL = "mtime and size"

    @classmethod
    def validate_config(cls, config: object, options: ConnectorOptions) -> ConfigRefusal | None:  # noqa: ARG003
        assert isinstance(config, LocalConfig)
        path = Path(config.path)
        if not path.is_absolute() or not path.is_dir():
            return ConfigRefusal(
                "The path must be an existing absolute directory on the server", "path"
            )
        return None
