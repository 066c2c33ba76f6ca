"""The object stores as tests, the e2e suite and ``bench/sync.py`` drive them.

``scripts/infra.py`` runs moto's S3, Azurite (``AZURITE_*``) and fake-gcs-server
(``GCS_EMULATOR_ENDPOINT``); each store class here makes a fresh container, fills it
(with the test's own admin client, on the emulator's development account or
unauthenticated, never the connector's) and says how a source names it (``config``,
``secret``, ``address``); around them:

* :class:`TokenServer` is Google's OAuth token endpoint for a service account: the
  connector signs its JWT with the key of a service-account JSON made here, exchanges
  it at ``token_uri`` and sends the token to fake-gcs-server, exactly its production
  path (fake-gcs-server checks no token; :attr:`TokenServer.revoked` refuses the key as
  Google refuses a deleted one, ``invalid_grant``).
* :class:`FaultProxy` stands between a connector and its store: it passes requests on,
  counts them and the most in flight at once, and answers what ``fault`` decides for a
  request instead (a 429 with ``Retry-After``, a 503 storm on the listing's second page).
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import uuid
from collections.abc import Callable
from typing import ClassVar
from urllib.parse import urlsplit

import boto3
from azure.core.credentials import AzureNamedKeyCredential
from azure.storage.blob import BlobServiceClient, ContainerSasPermissions, generate_container_sas
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage

from docproc_testing.servers import KeepAliveHandler, ThreadedServer
from docproc_testing.service_accounts import service_account_key

#: ``fault(method, path)``: None passes the request on; ``(status, headers)`` answers instead.
Fault = Callable[[str, str], "tuple[int, dict[str, str]] | None"]


class TokenServer(ThreadedServer):
    """``POST /token``: an access token for any signed JWT assertion, unless ``revoked``."""

    def __init__(self) -> None:
        self.revoked = False
        self.exchanged = 0
        owner = self

        class Handler(KeepAliveHandler):
            def do_POST(self) -> None:  # noqa: N802
                form = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                body: dict[str, object]
                if owner.revoked or "assertion=" not in form:
                    status = 400
                    body = {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
                else:
                    owner.exchanged += 1
                    status = 200
                    body = {"access_token": uuid.uuid4().hex, "expires_in": 3600}
                data = json.dumps({**body, "token_type": "Bearer"}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        super().__init__(Handler)

    def service_account(self, project: str = "docproc-test") -> dict[str, str]:
        """A service-account JSON key exchanged here."""
        return service_account_key(f"{self.url}/token", project)


class FaultProxy(ThreadedServer):
    """An HTTP proxy in front of ``upstream`` (``http://host:port``) that can answer for it."""

    def __init__(self, upstream: str) -> None:
        self.fault: Fault = lambda _method, _path: None
        self.requests: list[tuple[str, str]] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self._lock = threading.Lock()
        target = urlsplit(upstream)
        owner = self

        class Handler(KeepAliveHandler):
            def _relay(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
                with owner._lock:
                    owner.requests.append((self.command, self.path))
                    owner.in_flight += 1
                    owner.most_in_flight = max(owner.most_in_flight, owner.in_flight)
                try:
                    answer = owner.fault(self.command, self.path)
                    if answer is not None:
                        status, headers = answer
                        self.send_response(status)
                        for name, value in headers.items():
                            self.send_header(name, value)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.relay(target.netloc, body, timeout=30)
                finally:
                    with owner._lock:
                        owner.in_flight -= 1

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _relay  # noqa: N815

        super().__init__(Handler)


class AzuriteStore:
    """A fresh container on Azurite's development account, read with its key."""

    connector = "azure_blob"
    secret_kind = "azure_storage"

    def __init__(self, env: dict[str, str]) -> None:
        self.endpoint = env["AZURITE_BLOB_ENDPOINT"]
        self.account = env["AZURITE_ACCOUNT_NAME"]
        self.key = env["AZURITE_ACCOUNT_KEY"]
        self.container = f"sync-{uuid.uuid4().hex[:12]}"
        service = BlobServiceClient(
            self.endpoint, credential=AzureNamedKeyCredential(self.account, self.key)
        )
        self.client = service.get_container_client(self.container)
        self.client.create_container()

    def _account_url(self, via: FaultProxy | None) -> str:
        return self.endpoint if via is None else f"{via.url}{urlsplit(self.endpoint).path}"

    def config(self, prefix: str = "", via: FaultProxy | None = None) -> dict[str, str]:
        return {
            "account_url": self._account_url(via),
            "container": self.container,
            "prefix": prefix,
        }

    def address(self, key: str, via: FaultProxy | None = None) -> str:
        return f"azure://{self._account_url(via).split('://', 1)[1]}/{self.container}/{key}"

    def secret(self) -> dict[str, str]:
        return {"account_name": self.account, "account_key": self.key}

    def sas(self, *, expires_in: dt.timedelta) -> str:
        """A container SAS (read and list) that expires ``expires_in`` from now (negative: ago)."""
        now = dt.datetime.now(dt.UTC)
        return generate_container_sas(
            self.account,
            self.container,
            account_key=self.key,
            permission=ContainerSasPermissions(read=True, list=True),
            start=now - dt.timedelta(hours=2),
            expiry=now + expires_in,
        )

    def put(self, objects: dict[str, bytes]) -> None:
        for name, body in objects.items():
            self.client.upload_blob(name, body, overwrite=True)

    def delete(self, name: str) -> None:
        self.client.delete_blob(name)

    def move(self, old: str, new: str) -> None:
        self.put({new: self.client.download_blob(old).readall()})
        self.delete(old)


class _BucketStore:
    """A store a source names by bucket, prefix and endpoint (GCS, S3)."""

    scheme: ClassVar[str]
    endpoint: str
    container: str

    def config(self, prefix: str = "", via: FaultProxy | None = None) -> dict[str, str]:
        endpoint = self.endpoint if via is None else via.url
        return {"bucket": self.container, "prefix": prefix, "endpoint_url": endpoint}

    def address(self, key: str, via: FaultProxy | None = None) -> str:  # noqa: ARG002
        return f"{self.scheme}://{self.container}/{key}"


class GcsStore(_BucketStore):
    """A fresh bucket on fake-gcs-server, read as a service account exchanged at ``tokens``
    (filled unauthenticated: the emulator checks no token)."""

    scheme = "gs"
    connector = "gcs"
    secret_kind = "gcp_service_account"

    def __init__(self, env: dict[str, str], tokens: TokenServer) -> None:
        self.endpoint = env["GCS_EMULATOR_ENDPOINT"]
        self.tokens = tokens
        self.container = f"sync-{uuid.uuid4().hex[:12]}"
        self.client = storage.Client(
            project="docproc-test",
            credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
            client_options={"api_endpoint": self.endpoint},
        )
        self.bucket = self.client.create_bucket(self.container)
        self.key = tokens.service_account()

    def secret(self) -> dict[str, str]:
        return self.key

    def put(self, objects: dict[str, bytes]) -> None:
        for name, body in objects.items():
            self.bucket.blob(name).upload_from_string(body)

    def delete(self, name: str) -> None:
        self.bucket.blob(name).delete()

    def move(self, old: str, new: str) -> None:
        self.bucket.rename_blob(self.bucket.blob(old), new)


class S3Store(_BucketStore):
    """A fresh bucket on moto's S3 server."""

    scheme = "s3"
    connector = "s3"
    secret_kind = "aws_credentials"

    def __init__(self, env: dict[str, str]) -> None:
        self.endpoint = env["STORAGE__S3_ENDPOINT_URL"]
        self.container = f"sync-{uuid.uuid4().hex[:12]}"
        self.client = boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        )
        self.client.create_bucket(Bucket=self.container)

    def secret(self) -> dict[str, str]:
        return {"access_key_id": "testing", "secret_access_key": "testing"}

    def put(self, objects: dict[str, bytes]) -> None:
        for key, body in objects.items():
            self.client.put_object(Bucket=self.container, Key=key, Body=body)

    def delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.container, Key=key)

    def move(self, old: str, new: str) -> None:
        self.client.copy_object(
            Bucket=self.container, Key=new, CopySource={"Bucket": self.container, "Key": old}
        )
        self.delete(old)


Store = AzuriteStore | GcsStore | S3Store
