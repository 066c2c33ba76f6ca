"""Server directory: the configuration the API checks (the connector runs in ``docproc_sync.connectors.local``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from docproc_common.connectors.base import (
    ConfigRefusal,
    ConnectorOptions,
    ConnectorSpec,
)
from docproc_common.settings import docproc_home

#: The kernel's views of the machine: never a candidate, whatever ``SYNC__LOCAL_ROOTS`` says.
KERNEL_DIRS = (Path("/proc"), Path("/sys"), Path("/dev"))


def never_synced() -> tuple[Path, ...]:
    """Directories no local source reads, nor walks into from a folder above them: the
    kernel's, and docproc's own home (the embedded database, stored files of every tenant,
    the sync caches)."""
    return (*KERNEL_DIRS, docproc_home().resolve())


def local_refusal(directory: Path, roots: tuple[Path, ...]) -> str | None:
    """Why the resolved ``directory`` may not be synced, or None."""
    for never in never_synced():
        if directory.is_relative_to(never):
            return f"The path is inside {never}, which is never synced"
    if roots and not any(directory.is_relative_to(root.resolve()) for root in roots):
        shown = ", ".join(str(r) for r in roots)
        return f"The path is outside the directories local sync may read ({shown})"
    return None


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
    def validate_config(cls, config: object, options: ConnectorOptions) -> ConfigRefusal | None:
        assert isinstance(config, LocalConfig)
        path = Path(config.path)
        if not path.is_absolute() or not path.is_dir():
            return ConfigRefusal(
                "The path must be an existing absolute directory on the server", "path"
            )
        reason = local_refusal(path.resolve(), options.local_roots)
        return None if reason is None else ConfigRefusal(reason, "path")
