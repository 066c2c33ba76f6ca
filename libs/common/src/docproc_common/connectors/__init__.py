"""Sync connectors: the framework (``base``), the landing rule (``remote_names``) and the registry.

Shared by the API (which lists connectors and checks a source's configuration
where it is submitted) and the sync service (which runs them).
"""

from __future__ import annotations

from typing import Any

from docproc_common.connectors.azure_blob import AzureBlobConnector
from docproc_common.connectors.base import BaseSyncConnector
from docproc_common.connectors.confluence import ConfluenceConnector
from docproc_common.connectors.gcs import GcsConnector
from docproc_common.connectors.gdrive import GoogleDriveConnector
from docproc_common.connectors.git import GitConnector
from docproc_common.connectors.local import LocalConnector
from docproc_common.connectors.s3 import S3Connector
from docproc_common.connectors.sharepoint import SharePointConnector
from docproc_common.connectors.web import WebConnector

CONNECTORS: dict[str, type[BaseSyncConnector[Any]]] = {
    c.NAME: c
    for c in (
        LocalConnector,
        S3Connector,
        AzureBlobConnector,
        GcsConnector,
        WebConnector,
        GitConnector,
        GoogleDriveConnector,
        SharePointConnector,
        ConfluenceConnector,
    )
}

__all__ = ["CONNECTORS"]
