"""The connectors that run: each subclasses its spec (``docproc_common.connectors.specs``),
which the API validates a source's configuration by, and lists and fetches a source's files.
"""

from __future__ import annotations

from typing import Any

from docproc_sync.connectors.azure_blob import AzureBlobConnector
from docproc_sync.connectors.base import BaseSyncConnector
from docproc_sync.connectors.confluence import ConfluenceConnector
from docproc_sync.connectors.gcs import GcsConnector
from docproc_sync.connectors.gdrive import GoogleDriveConnector
from docproc_sync.connectors.git import GitConnector
from docproc_sync.connectors.local import LocalConnector
from docproc_sync.connectors.s3 import S3Connector
from docproc_sync.connectors.sharepoint import SharePointConnector
from docproc_sync.connectors.web import WebConnector

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
