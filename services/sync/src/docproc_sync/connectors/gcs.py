"""``gcs``: a bucket and a prefix of Google Cloud Storage, read as the source's own service account."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.errors import ClientFailedError, ConnectorError, Subject
from docproc_common.connectors.specs.gcs import (
    GcsConfig,
    GcsSpec,
)
from docproc_common.egress.pinned import check_url
from docproc_common.vault import GcpServiceAccountValue
from google.api_core.exceptions import GoogleAPICallError
from google.auth.exceptions import GoogleAuthError, RefreshError
from google.cloud.storage import Blob, Client
from google.cloud.storage.exceptions import DataCorruption
from google.oauth2 import service_account
from pydantic import ValidationError
from requests import RequestException

from docproc_sync.connectors.base import RemoteListing
from docproc_sync.connectors.http_retry import parse_retry_after
from docproc_sync.connectors.landing import open_landing
from docproc_sync.connectors.object_store import (
    TRANSIENT_STATUS,
    ObjectStoreConnector,
    StoredObject,
    TransientError,
)

GOOGLE_API = "https://storage.googleapis.com"
GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"
READ_ONLY = "https://www.googleapis.com/auth/devstorage.read_only"
#: Only what the listing decides with: the name, the size and the change signal.
LIST_FIELDS = "items(name,size,md5Hash,generation),nextPageToken"


def credentials_of(secret: Mapping[str, Any]) -> service_account.Credentials:
    """Read-only credentials signed with the secret's service-account key, and nothing else:
    never Application Default Credentials, the metadata server or ``GOOGLE_*`` variables."""
    try:
        value = GcpServiceAccountValue.model_validate(dict(secret))
        info = {"token_uri": GOOGLE_TOKEN_URI, **value.model_dump(exclude_none=True)}
        credentials: service_account.Credentials = (
            service_account.Credentials.from_service_account_info(  # type: ignore[no-untyped-call]
                info, scopes=[READ_ONLY]
            )
        )
        return credentials
    except (ValidationError, ValueError, KeyError) as exc:
        raise ConnectorError(
            "The source's gcp_service_account secret is not a usable service-account key "
            "(type, client_email, private_key)"
        ) from exc


def _failure(exc: Exception, subject: Subject) -> ClientFailedError:
    """The stored words of a failed call: the class Google's client raised (``Forbidden``,
    ``NotFound``, ``RefreshError`` for a revoked key); 429, 5xx and transport failures retry."""
    kind = type(exc).__name__
    if isinstance(exc, GoogleAPICallError):
        if exc.code not in TRANSIENT_STATUS:
            return ClientFailedError(kind, subject=subject)
        response = exc.response
        headers = getattr(response, "headers", None) or {}
        return TransientError(
            kind, subject=subject, retry_after=parse_retry_after(headers.get("Retry-After"))
        )
    if isinstance(exc, (RequestException, DataCorruption)) or (
        isinstance(exc, GoogleAuthError) and not isinstance(exc, RefreshError)
    ):
        return TransientError(kind, subject=subject)
    return ClientFailedError(kind, subject=subject)


class GcsConnector(GcsSpec, ObjectStoreConnector[GcsConfig]):
    """Objects under ``prefix`` in ``bucket``.

    Change signal: the object's ``md5Hash`` from ``objects.list`` — its ``generation``
    for an object that has none (a composite) — compared before the object is read, so a
    run over an unchanged bucket costs a listing, and an object rewritten with the same
    bytes is not fetched again.
    """

    SCHEME = "gs"
    CONTAINER_FIELD = "bucket"

    def __init__(
        self, config: GcsConfig, secret: Mapping[str, Any] | None, options: ConnectorOptions
    ) -> None:
        super().__init__(config, secret, options)
        # where the key is exchanged for a token is the secret's too: an address like any other
        self.token_uri = str(self.secret.get("token_uri") or GOOGLE_TOKEN_URI)
        if self.token_uri.startswith("http://") and not options.allow_plain_http:
            raise ConnectorError("The service account's token_uri must be an https:// URL")
        self.credentials = credentials_of(self.secret)
        # explicit endpoint, credentials and project: STORAGE_EMULATOR_HOST and the default
        # project lookup, which read the deployment's environment, are never consulted
        self.client = Client(
            project=self.secret.get("project_id"),
            credentials=self.credentials,
            client_options={"api_endpoint": config.endpoint_url or GOOGLE_API},
        )
        self.bucket = self.client.bucket(config.bucket)

    async def list_files(self) -> RemoteListing:
        allow = self.options.allow_private_networks
        if self.config.endpoint_url:
            await check_url(self.config.endpoint_url, allow_private=allow)
        await check_url(self.token_uri, allow_private=allow)
        return await super().list_files()

    @staticmethod
    def _version(blob: Blob) -> str | None:
        if blob.md5_hash:
            return f"md5:{blob.md5_hash}"
        return f"generation:{blob.generation}" if blob.generation else None

    def _list_page(self, token: str | None) -> tuple[list[StoredObject], str | None]:
        try:
            listing = self.client.list_blobs(
                self.bucket,
                prefix=self.prefix or None,
                page_size=self.PAGE_SIZE,
                page_token=token,
                fields=LIST_FIELDS,
                timeout=self.options.timeout_s,
                retry=None,  # retried by ObjectStoreConnector, honouring Retry-After
            )
            page: Iterable[Blob] = next(listing.pages, [])
            objects = [StoredObject(b.name, int(b.size or 0), self._version(b)) for b in page]
        except (GoogleAPICallError, GoogleAuthError, RequestException) as exc:
            raise _failure(exc, "source") from exc
        return objects, listing.next_page_token or None

    def _download(self, key: str, dest: Path) -> int:
        try:
            with open(open_landing(dest), "wb") as out:
                self.client.download_blob_to_file(
                    self.bucket.blob(key), out, timeout=self.options.timeout_s, retry=None
                )
                return out.tell()
        except (GoogleAPICallError, GoogleAuthError, RequestException, DataCorruption) as exc:
            raise _failure(exc, "document") from exc

    async def aclose(self) -> None:
        self.client.close()
