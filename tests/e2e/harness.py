"""Run docproc's five services as separate OS processes against the real infrastructure.

Each run gets its own database (migrated to head), its own S3 prefix, its own Kafka
namespace (topics and consumer groups, deleted afterwards) and its own
collection names, so runs never see each other's rows.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from aiokafka.admin import AIOKafkaAdminClient
from docproc_common.auth import EDIT, SECRETS_VIEW, VIEW, mint_token
from docproc_common.bus.topics import all_topics, ensure_topics
from docproc_common.faultpoints import CONTROL_ENV
from docproc_common.settings import KafkaSettings
from docproc_testing.auth import DEV_AUTH
from docproc_testing.db import create_test_database_sync, fetch
from docproc_testing.infra import find_repo_root, free_port, load_infra_env
from docproc_testing.processes import stop_group, wait_ready

SERVICES = ("upload", "parser", "embedder", "sync", "teardown")


@dataclass
class Service:
    name: str
    port: int
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", f"docproc_{self.name}"],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self) -> None:
        """SIGKILL: no shutdown hook runs, exactly like a crashed pod."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None:
            stop_group(self.process, grace=20)

    def wait_exit(self, timeout: float = 120) -> int:
        """The exit status of a process that is to end by itself (at a fault point)."""
        assert self.process is not None
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise TimeoutError(
                f"{self.name} still runs:\n{self.log_path.read_text()[-3000:]}"
            ) from None

    def wait_ready(self, timeout: float = 120) -> None:
        assert self.process is not None
        wait_ready(self.process, f"http://127.0.0.1:{self.port}", self.log_path, self.name, timeout)


@dataclass
class Cluster:
    env: dict[str, str]
    database_url: str
    services: dict[str, Service] = field(default_factory=dict)

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.services['upload'].port}/api/v1"

    def client(self, *, via: str = "upload", **claims: Any) -> httpx.Client:
        """A caller of the API served by the process ``via`` (an ``add``-ed replica too)."""
        claims.setdefault("user_id", "alice")
        token = mint_token(DEV_AUTH, **claims)
        return httpx.Client(
            base_url=f"http://127.0.0.1:{self.services[via].port}/api/v1",
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )

    def admin(self, *, via: str = "upload") -> httpx.Client:
        """The deployment's operator: app admin, and (since app_admin implies no permission)
        the collection and secret permissions its journeys use."""
        return self.client(
            via=via, user_id="root", permissions=[VIEW, EDIT, SECRETS_VIEW], app_admin=True
        )

    def add(self, name: str, key: str) -> Service:
        """Another process of service ``name`` (a replica), known as ``key``; it is stopped
        with the others."""
        if key not in self.services:
            first = self.services[name]
            port = free_port()
            control = Path(first.env[CONTROL_ENV]).with_name(key)
            env = {**first.env, "HTTP__PORT": str(port), CONTROL_ENV: str(control)}
            self.services[key] = Service(name, port, env, first.log_path.with_name(f"{key}.log"))
            self.services[key].start()
        self.services[key].wait_ready()
        return self.services[key]

    def restart(self, name: str, **env: str) -> None:
        """Stop ``name`` (unless it has ended) and start it again, with ``env`` added."""
        svc = self.services[name]
        svc.stop()
        svc.env = {**svc.env, **env}
        svc.start()
        svc.wait_ready()

    def query(self, sql: str, *args: Any) -> list[Any]:
        return asyncio.run(fetch(self.database_url, sql, *args))


@contextmanager
def running_cluster(
    tmp: Path,
    *,
    storage: str = "s3",
    env_for: Mapping[str, Mapping[str, str]] | None = None,
    infra_env: Mapping[str, str] | None = None,
    database_via: Mapping[str, int] | None = None,
) -> Iterator[Cluster]:
    """The five services; ``env_for`` adds settings to some of them (``{"parser": {...}}``);
    ``infra_env`` replaces some of the shared infrastructure's (a broker or a database
    server of the test's own: ``KAFKA__BOOTSTRAP_SERVERS``, ``DATABASE__URL``);
    ``database_via`` names the port through which a service reaches the database server
    (a fault proxy's in front of it), while ``Cluster.database_url`` reaches it directly."""
    infra = {**load_infra_env(), **(infra_env or {})}
    database_url = create_test_database_sync(infra["DATABASE__URL"])
    root = find_repo_root()
    run = uuid.uuid4().hex[:8]
    # its own topics and consumer groups on the shared broker, as the topics Job makes them
    kafka = KafkaSettings(
        bootstrap_servers=infra["KAFKA__BOOTSTRAP_SERVERS"], namespace=f"e2e-{run}"
    )
    asyncio.run(ensure_topics(kafka, all_topics()))
    env = {
        **os.environ,
        **infra,
        "DATABASE__URL": database_url,
        "ENV": "dev",  # the development keys: the client signs with DEV_AUTH
        "BUS__MODE": "kafka",
        "STORAGE__BACKEND": storage,
        "KAFKA__NAMESPACE": kafka.namespace,
        "STORAGE__S3_PREFIX": f"e2e-{run}",
        "STORAGE__MEDIA_DIR": str(tmp / "media"),
        "DOCPROC_HOME": str(tmp / "home"),
        "EMBEDDER__MODEL_CACHE_DIR": str(root / ".cache" / "models"),
        "KAFKA__RETRY_DELAY_S": "1",
        "LOG_LEVEL": "INFO",
    }
    cluster = Cluster(env=env, database_url=database_url)
    (tmp / "faults").mkdir(exist_ok=True)
    for name in SERVICES:
        port = free_port()
        svc_env = {
            **env,
            CONTROL_ENV: str(tmp / "faults" / name),
            **(env_for or {}).get(name, {}),
            "HTTP__PORT": str(port),
        }
        if database_via and name in database_via:
            url = httpx.URL(database_url)
            svc_env["DATABASE__URL"] = str(url.copy_with(port=database_via[name]))
        cluster.services[name] = Service(name, port, svc_env, tmp / f"{name}.log")
    try:
        for svc in cluster.services.values():
            svc.start()
        for svc in cluster.services.values():
            svc.wait_ready()
        yield cluster
    finally:
        for svc in cluster.services.values():
            svc.stop()
        asyncio.run(_delete_topics(kafka))


async def _delete_topics(settings: KafkaSettings) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.bootstrap_servers)
    await admin.start()
    try:
        ours = [t for t in await admin.list_topics() if t.startswith(f"{settings.namespace}.")]
        if ours:
            await admin.delete_topics(ours)
    finally:
        await admin.close()
