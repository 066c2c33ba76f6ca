"""Sync connectors as the API knows them: the spec every connector is (``base``), what a
remote name may become (``remote_names``), each connector's configuration and checks
(``specs``, which ask ``docproc_common.egress`` which hosts a source may name) and the registry.

Shared by the API (which lists connectors and checks a source's configuration where it is
submitted) and the sync service, whose implementations (``docproc_sync.connectors``: the
running side, ``BaseSyncConnector``, where fetched bytes land)
subclass these specs.
"""

from __future__ import annotations

from docproc_common.connectors.base import ConnectorSpec
from docproc_common.connectors.specs.azure_blob import AzureBlobSpec
from docproc_common.connectors.specs.confluence import ConfluenceSpec
from docproc_common.connectors.specs.gcs import GcsSpec
from docproc_common.connectors.specs.gdrive import GoogleDriveSpec
from docproc_common.connectors.specs.git import GitSpec
from docproc_common.connectors.specs.local import LocalSpec
from docproc_common.connectors.specs.s3 import S3Spec
from docproc_common.connectors.specs.sharepoint import SharePointSpec
from docproc_common.connectors.specs.web import WebSpec

CONNECTORS: dict[str, type[ConnectorSpec]] = {
    c.NAME: c
    for c in (
        LocalSpec,
        S3Spec,
        AzureBlobSpec,
        GcsSpec,
        WebSpec,
        GitSpec,
        GoogleDriveSpec,
        SharePointSpec,
        ConfluenceSpec,
    )
}

__all__ = ["CONNECTORS"]
