"""``azure_blob``: a container and a prefix of an Azure storage account, read with the source's own key or SAS."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.exceptions import AzureError, HttpResponseError
from azure.core.paging import PageIterator
from azure.storage.blob import BlobProperties, BlobServiceClient
from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.errors import ClientFailedError, ConnectorError, Subject
from docproc_common.connectors.specs.azure_blob import (
    AzureBlobConfig,
    AzureBlobSpec,
)
from docproc_common.egress.pinned import check_url
from docproc_common.vault import AzureStorageValue, connection_string_parts
from pydantic import ValidationError

from docproc_sync.connectors.base import RemoteListing
from docproc_sync.connectors.http_retry import parse_retry_after
from docproc_sync.connectors.landing import open_landing
from docproc_sync.connectors.object_store import (
    TRANSIENT_STATUS,
    ObjectStoreConnector,
    StoredObject,
    TransientError,
    failure_kind,
)


def credential_of(secret: Mapping[str, Any]) -> AzureNamedKeyCredential | AzureSasCredential:
    """The SDK credential of an ``azure_storage`` secret (a connection string's endpoints unused)."""
    try:
        value = AzureStorageValue.model_validate(dict(secret))
    except ValidationError as exc:
        raise ConnectorError(
            "The source's azure_storage secret holds neither a connection string, an account "
            "name and key, nor a SAS token"
        ) from exc
    if value.connection_string is not None:
        parts = connection_string_parts(value.connection_string)
        if "AccountKey" in parts:
            return AzureNamedKeyCredential(parts["AccountName"], parts["AccountKey"])
        return AzureSasCredential(parts["SharedAccessSignature"].lstrip("?"))
    if value.sas_token is not None:
        return AzureSasCredential(value.sas_token.lstrip("?"))
    assert value.account_name is not None  # the model's rule: the two go together
    assert value.account_key is not None
    return AzureNamedKeyCredential(value.account_name, value.account_key)


def _failure(exc: AzureError, subject: Subject) -> ClientFailedError:
    """The stored words of a failed call: Azure's error code (``AuthenticationFailed``,
    ``ContainerNotFound``) or the exception's class; 429, 5xx and transport failures retry."""
    status = getattr(exc, "status_code", None)
    kind = failure_kind(getattr(exc, "error_code", None), exc)
    if isinstance(exc, HttpResponseError) and status not in TRANSIENT_STATUS:
        return ClientFailedError(kind, subject=subject)
    response = getattr(exc, "response", None)
    asked = parse_retry_after(response.headers.get("Retry-After")) if response is not None else None
    return TransientError(kind, subject=subject, retry_after=asked)


class AzureBlobConnector(AzureBlobSpec, ObjectStoreConnector[AzureBlobConfig]):
    """Blobs under ``prefix`` in ``container`` of the storage account at ``account_url``.

    Change signal: the blob's ETag from ``List Blobs``, compared before ``Get Blob``, so a
    run over an unchanged container costs a listing (one request per 1,000 blobs).
    Addresses are ``azure://<account host>[/<path>]/<container>/<name>``: two accounts'
    containers of one name are two places.
    """

    SCHEME = "azure"
    CONTAINER_FIELD = "container"

    def __init__(
        self, config: AzureBlobConfig, secret: Mapping[str, Any] | None, options: ConnectorOptions
    ) -> None:
        super().__init__(config, secret, options)
        # The secret's credential only: nothing here reads the environment or a managed
        # identity, which are the deployment's, never a tenant's container name's.
        service = BlobServiceClient(
            config.account_url,
            credential=credential_of(self.secret),
            retry_total=0,  # retried by ObjectStoreConnector, honouring Retry-After
            connection_timeout=min(options.timeout_s, 10.0),
            read_timeout=options.timeout_s,
        )
        self.client = service.get_container_client(config.container)

    def address(self, key: str) -> str:
        account = urlsplit(self.config.account_url)
        return f"{self.SCHEME}://{account.netloc}{account.path.rstrip('/')}/{self.container}/{key}"

    async def list_files(self) -> RemoteListing:
        await check_url(self.config.account_url, allow_private=self.options.allow_private_networks)
        return await super().list_files()

    def _list_page(self, token: str | None) -> tuple[list[StoredObject], str | None]:
        try:
            pages = cast(
                "PageIterator[BlobProperties]",
                self.client.list_blobs(
                    name_starts_with=self.prefix or None, results_per_page=self.PAGE_SIZE
                ).by_page(continuation_token=token),
            )
            page: Iterable[BlobProperties] = next(pages, [])
            objects = [StoredObject(b.name, int(b.size or 0), b.etag) for b in page]
        except AzureError as exc:
            raise _failure(exc, "source") from exc
        return objects, pages.continuation_token or None

    def _download(self, key: str, dest: Path) -> int:
        written = 0
        try:
            stream = self.client.download_blob(key, max_concurrency=1)
            with open(open_landing(dest), "wb") as out:
                for chunk in stream.chunks():
                    out.write(chunk)
                    written += len(chunk)
        except AzureError as exc:
            raise _failure(exc, "document") from exc
        return written

    async def aclose(self) -> None:
        self.client.close()
