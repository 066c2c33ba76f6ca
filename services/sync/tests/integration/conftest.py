"""Real Postgres (a database per session, migrated to heads), moto's S3, Azurite and
fake-gcs-server (``object_store``), local HTTP and git servers, and the public API's routes
in-process (``client``)."""

from __future__ import annotations

import asyncio
import ipaddress
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import boto3
import httpx
import pytest
from docproc_common.auth import EDIT, SECRETS_VIEW, VIEW, mint_token
from docproc_common.blocking import BlockingPool
from docproc_common.connectors.base import ConnectorOptions
from docproc_common.db.engine import create_engine, create_sessionmaker
from docproc_common.db.migrate import upgrade
from docproc_common.egress import pinned, rules
from docproc_common.runtime import Runtime, build_app
from docproc_common.settings import DatabaseSettings, Settings, StorageSettings, SyncSettings
from docproc_common.storage import AsyncStorage, create_storage
from docproc_sync.testing import SyncBed, plain_dsn
from docproc_testing.auth import DEV_AUTH
from docproc_testing.infra import load_infra_env
from docproc_testing.stores import AzuriteStore, FaultProxy, GcsStore, TokenServer
from docproc_upload.app import build

#: ``client(user=..., org=..., perms=..., admin=...)``: the public API in-process, as that caller.
Client = Callable[..., httpx.AsyncClient]


@pytest.fixture(scope="session")
def infra() -> dict[str, str]:
    return load_infra_env(("postgres", "s3"))


@pytest.fixture(scope="session")
def database_url(infra: dict[str, str]) -> str:
    name = f"docproc_sync_{uuid.uuid4().hex[:10]}"

    async def create() -> None:
        conn = await asyncpg.connect(plain_dsn(infra["DATABASE__URL"]))
        try:
            await conn.execute(f"CREATE DATABASE {name}")
        finally:
            await conn.close()

    asyncio.run(create())
    url = f"{infra['DATABASE__URL'].rsplit('/', 1)[0]}/{name}"
    upgrade(url)
    return url


@pytest.fixture(scope="session")
def sync_settings(tmp_path_factory: pytest.TempPathFactory) -> SyncSettings:
    return SyncSettings(
        allow_private_networks=True,
        allow_plain_http=True,
        concurrency=4,
        timeout_s=10,
        state_dir=tmp_path_factory.mktemp("sync-state"),
    )


@pytest.fixture
async def runtime(database_url: str, tmp_path: Path) -> AsyncIterator[Runtime]:
    settings = Settings(
        database=DatabaseSettings(url=database_url, pool_size=5, max_overflow=5),
        storage=StorageSettings(media_dir=tmp_path / "media"),
    )
    engine = create_engine(settings.database)
    pool = BlockingPool(4, name="test-io")
    rt = Runtime(
        settings=settings,
        engine=engine,
        sessionmaker=create_sessionmaker(engine),
        storage=AsyncStorage(create_storage(settings.storage), pool),
        pool=pool,
    )
    try:
        yield rt
    finally:
        await rt.close()


@pytest.fixture
async def client(runtime: Runtime) -> AsyncIterator[Client]:
    spec = build(runtime)
    app = build_app(runtime, [spec], [], "sync-api-test")
    opened: list[httpx.AsyncClient] = []

    def make(
        user: str = "alice",
        org: str | None = "acme",
        perms: tuple[str, ...] = (VIEW, EDIT, SECRETS_VIEW),
        admin: bool = False,
    ) -> httpx.AsyncClient:
        token = mint_token(
            DEV_AUTH,
            user_id=user,
            organization_id=org,
            permissions=list(perms),
            app_admin=admin,
        )
        c = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://127.0.0.1/api/v1",
            headers={"Authorization": f"Bearer {token}"},
        )
        opened.append(c)
        return c

    yield make
    for c in opened:
        await c.aclose()
    for close in spec.on_shutdown:
        await close()


@pytest.fixture(scope="session")
def s3_client(infra: dict[str, str]) -> Any:
    return boto3.client(
        "s3",
        endpoint_url=infra["STORAGE__S3_ENDPOINT_URL"],
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )


@pytest.fixture
def bucket(s3_client: Any) -> str:
    name = f"sync-{uuid.uuid4().hex[:12]}"
    s3_client.create_bucket(Bucket=name)
    return name


@pytest.fixture
def bed(runtime: Runtime, sync_settings: SyncSettings) -> SyncBed:
    return SyncBed(runtime, sync_settings)


class RebindingDns:
    """A name whose first answer is the test server (taken as public) and every later one
    an internal address: DNS rebinding. Nothing else here is public."""

    SERVER = "127.0.0.1"
    INTERNAL = "169.254.169.254"

    def __init__(self, first: str = SERVER) -> None:
        self.first = first
        self.lookups: list[str] = []

    def is_public(self, address: str) -> bool:
        return str(ipaddress.ip_address(address)) == self.SERVER  # a name: ValueError, as ever

    async def resolve(self, host: str, _port: int) -> list[str]:
        self.lookups.append(host)
        return [self.first if len(self.lookups) == 1 else self.INTERNAL]


@pytest.fixture
def rebinding_dns(monkeypatch: pytest.MonkeyPatch) -> RebindingDns:
    dns = RebindingDns()
    monkeypatch.setattr(pinned, "resolve", dns.resolve)
    monkeypatch.setattr(rules, "is_public", dns.is_public)
    return dns


def checked_options(tmp: Path) -> ConnectorOptions:
    """As a deployment runs: private networks refused (plain HTTP allowed for the test server)."""
    return ConnectorOptions(allow_private_networks=False, allow_plain_http=True, cache_dir=tmp)


@pytest.fixture(scope="session")
def emulators() -> dict[str, str]:
    return load_infra_env(("azurite", "gcs"))


@pytest.fixture(scope="session")
def token_server() -> Iterator[TokenServer]:
    with TokenServer() as server:
        yield server


@dataclass
class ObjectStore:
    """One fresh container of an emulated store, reached by its connector through ``proxy``."""

    store: AzuriteStore | GcsStore
    proxy: FaultProxy

    @property
    def connector(self) -> str:
        return self.store.connector

    @property
    def secret_kind(self) -> str:
        return self.store.secret_kind

    @property
    def secret(self) -> dict[str, str]:
        return self.store.secret()

    def config(self, prefix: str = "") -> dict[str, str]:
        return self.store.config(prefix, via=self.proxy)

    def address(self, key: str) -> str:
        return self.store.address(key, via=self.proxy)


@pytest.fixture(params=["azure_blob", "gcs"])
def object_store(
    request: pytest.FixtureRequest, emulators: dict[str, str], token_server: TokenServer
) -> Iterator[ObjectStore]:
    token_server.revoked = False
    store: AzuriteStore | GcsStore
    if request.param == "azure_blob":
        store = AzuriteStore(emulators)
        proxy = FaultProxy(emulators["AZURITE_BLOB_ENDPOINT"])
    else:
        store = GcsStore(emulators, token_server)
        proxy = FaultProxy(emulators["GCS_EMULATOR_ENDPOINT"])
    yield ObjectStore(store, proxy)
    proxy.close()
