from enum import StrEnum


class SourceCreateConnector(StrEnum):
    AZURE_BLOB = "azure_blob"
    CONFLUENCE = "confluence"
    GCS = "gcs"
    GIT = "git"
    GOOGLE_DRIVE = "google_drive"
    LOCAL = "local"
    S3 = "s3"
    SHAREPOINT = "sharepoint"
    WEB = "web"

    def __str__(self) -> str:
        return str(self.value)
