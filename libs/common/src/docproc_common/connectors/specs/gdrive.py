"""Google Drive: the configuration the API checks (the connector runs in ``docproc_sync.connectors.gdrive``)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from docproc_common.connectors.base import (
    ConfigRefusal,
    ConnectorOptions,
    ConnectorSpec,
)
from docproc_common.connectors.errors import ConnectorError

_FOLDER_ID = re.compile(r"[A-Za-z0-9_-]{1,256}")
_MIME = re.compile(r"[a-z0-9][a-z0-9.+-]{0,126}/(\*|[A-Za-z0-9][A-Za-z0-9.+_-]{0,126})")


def checked_drive_folder_id(folder_id: str) -> str:
    """``folder_id`` when it is an id Google could have emitted (letters, digits, ``-``, ``_``).

    Asked for the configured folder (``validate_config``) and wherever a ``'<id>' in
    parents`` query is built, which every subfolder id goes through: ``x' in parents or
    name contains 'salary`` would otherwise be a well-formed, wider query. It names no
    field: of its three askers only one was sent a form to mark.
    """
    if not _FOLDER_ID.fullmatch(folder_id):
        raise ConnectorError("A Drive folder id is letters, digits, '-' and '_' only")
    return folder_id


class GoogleDriveConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", title="Google Drive folder")

    folder_id: str = Field(
        max_length=256,
        description="The folder's id (the last part of its drive.google.com/drive/folders/ URL)",
    )
    include_shared_drives: bool = Field(
        default=False, description="The folder may be in a shared drive"
    )
    recursive: bool = Field(default=True, description="Also sync the folder's subfolders")
    mime_types: list[str] = Field(
        default_factory=list,
        max_length=50,
        description="Only files of these Drive MIME types (type/* for a family); empty: all",
    )
    exclude_mime_types: list[str] = Field(
        default_factory=list, max_length=50, description="Never files of these Drive MIME types"
    )
    export_format: Literal["office", "pdf"] = Field(
        default="office",
        description="Google Docs/Sheets/Slides as DOCX/XLSX/PPTX (office) or as PDF",
    )
    max_files: int = Field(
        default=10_000, ge=1, le=200_000, description="Files listed at most per run"
    )


class GoogleDriveSpec(ConnectorSpec):
    NAME = "google_drive"
    TITLE = "Google Drive"
    DESCRIPTION = "Files of a Drive folder shared with a service account (Docs exported)"
    CONFIG_MODEL = GoogleDriveConfig
    SECRET_KIND = "gcp_service_account"
    #: Google is always the host: the folder, and whether shared drives are reached, are the drive
    DESTINATION_FIELDS = frozenset({"folder_id", "include_shared_drives"})
    CHANGE_SIGNAL = "md5Checksum / modifiedTime, from the Changes API"

    @classmethod
    def validate_config(cls, config: object, options: ConnectorOptions) -> ConfigRefusal | None:  # noqa: ARG003
        assert isinstance(config, GoogleDriveConfig)
        try:
            checked_drive_folder_id(config.folder_id)
        except ConnectorError as exc:
            return ConfigRefusal(exc.message, "folder_id")
        for name in ("mime_types", "exclude_mime_types"):
            for mime in getattr(config, name):
                if not _MIME.fullmatch(mime):
                    return ConfigRefusal(
                        "A MIME type is type/subtype (or type/* for a family)", name
                    )
        return None
