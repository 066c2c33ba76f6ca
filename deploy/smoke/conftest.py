"""The deployed shape on this machine: the chart rendered, its workloads as podman containers.

One session fixture installs the release the way `helm install` orders it (hook Jobs by
weight, then every Deployment) with this run's own database, S3 prefix and Kafka
namespace, so the shared test infrastructure and other runs never see its rows, objects,
topics or consumer groups. Only the containers and the Prometheus it started are stopped.
"""

from __future__ import annotations

import asyncio
import base64
import os
import secrets
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from docproc_common.auth import EDIT, SECRETS_VIEW, VIEW, mint_token
from docproc_common.settings import AuthSettings
from docproc_testing.db import create_test_database_sync, fetch
from docproc_testing.infra import find_repo_root, free_port, load_infra_env
from pydantic import SecretStr

from deploy.smoke import prometheus
from deploy.smoke.pods import Container, Doc, Release, component, pod_containers, run_hooks

ROOT = find_repo_root()
CHART = ROOT / "deploy" / "helm" / "docproc"
HELM = ROOT / ".cache" / "bin" / "helm"
VALUES = CHART / "ci" / "smoke-values.yaml"
NAMESPACE = "docproc"
RELEASE = "docproc"


def render(values: list[Path], chart: Path = CHART) -> list[Doc]:
    cmd = [str(HELM), "template", RELEASE, str(chart), "--namespace", NAMESPACE]
    cmd += ["--kube-version", "1.33.0"]
    for path in values:
        cmd += ["-f", str(path)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return [d for d in yaml.safe_load_all(result.stdout) if d]


@dataclass
class Stack:
    """The running release: its objects, its containers (by component) and Prometheus."""

    run: str
    workdir: Path
    infra: dict[str, str]
    release: Release
    run_values: Path
    database_url: str
    jwt_secret: str
    kafka_namespace: str
    hooks_ran: list[str]
    containers: dict[str, Container] = field(default_factory=dict)
    prom: prometheus.Prometheus | None = None
    generation: int = 0

    @property
    def labels(self) -> dict[str, str]:
        return {"docproc-smoke": self.run}

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.containers['upload'].port('http')}/api/v1"

    def client(self, **claims: Any) -> httpx.Client:
        claims.setdefault("user_id", "alice")
        token = mint_token(AuthSettings(jwt_secret=SecretStr(self.jwt_secret)), **claims)
        return httpx.Client(
            base_url=self.api, headers={"Authorization": f"Bearer {token}"}, timeout=300
        )

    def admin(self) -> httpx.Client:
        return self.client(user_id="root", permissions=[VIEW, EDIT, SECRETS_VIEW], app_admin=True)

    def query(self, sql: str, *args: Any) -> list[Any]:
        return asyncio.run(fetch(self.database_url, sql, *args))

    def on_broker(self, name: str) -> str:
        return f"{self.kafka_namespace}.{name}"

    def wait_scraped(self) -> None:
        """Prometheus has scraped every pod since it last (re)started: what it answers is
        the running pods', none of their series stale from the one they replaced."""
        assert self.prom is not None
        prom, since = self.prom, max(c.started_at for c in self.containers.values())
        deadline = time.monotonic() + 300
        while not prom.scraped_since(since, len(self.containers)):
            assert time.monotonic() < deadline, prom.get("/api/v1/targets")["activeTargets"]
            time.sleep(1)

    def start_deployments(self) -> None:
        """One pod per Deployment (one replica: pods share the host's ports here)."""
        self.generation += 1
        for deployment in self.release.of_kind("Deployment"):
            self.start_pod(deployment)
        for container in self.containers.values():
            container.wait_ready()

    def start_pod(self, deployment: Doc) -> Container:
        name = f"smoke-{self.run}-{component(deployment)}-{self.generation}"
        [container] = pod_containers(
            self.release, name, deployment["spec"]["template"], self.workdir, self.labels
        )
        container.start()
        self.containers[component(deployment)] = container
        return container

    def replace(self, release: Release, *names: str) -> None:
        """These Deployments' pods replaced by the new release's, all at once (SIGTERM first:
        one port each here), ready when this returns."""
        old = [self.containers[name] for name in names]
        with ThreadPoolExecutor(len(old)) as pool:
            list(pool.map(Container.stop, old))
        for container in old:
            container.remove()
        self.release = release
        self.generation += 1
        deployments = {component(d): d for d in release.of_kind("Deployment")}
        new = [self.start_pod(deployments[name]) for name in names]
        with ThreadPoolExecutor(len(new)) as pool:
            list(pool.map(Container.wait_ready, new))


def _secrets(database_url: str, jwt_secret: str, infra: dict[str, str]) -> dict[str, Any]:
    """The Secrets an operator creates before `helm install` (docs/operations.md#secrets)."""
    return {
        "docproc-database": {"url": database_url},
        "docproc-auth": {"jwt-secret": jwt_secret},
        "docproc-vault": {"master-key": base64.urlsafe_b64encode(os.urandom(32)).decode()},
        "docproc-s3": {
            "access-key-id": infra["AWS_ACCESS_KEY_ID"],
            "secret-access-key": infra["AWS_SECRET_ACCESS_KEY"],
        },
    }


def run_values(run: str, infra: dict[str, str]) -> dict[str, Any]:
    """This run's addresses: the infrastructure's, its own namespace, prefix and ports."""
    return {
        "common": {
            "kafka": {
                "bootstrapServers": infra["KAFKA__BOOTSTRAP_SERVERS"],
                "namespace": f"smoke-{run}",
            },
            "storage": {
                "s3": {
                    "bucket": infra["STORAGE__S3_BUCKET"],
                    "prefix": f"smoke-{run}",
                    "endpointUrl": infra["STORAGE__S3_ENDPOINT_URL"],
                }
            },
        },
        "services": {
            svc: {"containerPort": free_port(), "metricsPort": free_port()}
            for svc in ("upload", "parser", "embedder", "sync", "teardown")
        },
    }


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    if not HELM.exists():
        subprocess.run(["bash", str(ROOT / "scripts" / "helm.sh"), "install"], check=True)
    workdir = Path(tmp_path_factory.mktemp("deploy-smoke"))
    run = uuid.uuid4().hex[:8]
    infra = load_infra_env()
    database_url = create_test_database_sync(infra["DATABASE__URL"], migrate=False)
    jwt_secret = secrets.token_urlsafe(32)
    per_run = workdir / "run-values.yaml"
    per_run.write_text(yaml.safe_dump(run_values(run, infra)))
    release = Release(render([VALUES, per_run]), _secrets(database_url, jwt_secret, infra))
    stack = Stack(
        run=run,
        workdir=workdir,
        infra=infra,
        release=release,
        run_values=per_run,
        database_url=database_url,
        jwt_secret=jwt_secret,
        kafka_namespace=f"smoke-{run}",
        hooks_ran=[],
    )
    try:
        stack.hooks_ran = run_hooks(release, f"smoke-{run}", workdir, stack.labels)
        stack.start_deployments()
        pods = {
            s["metadata"]["name"]: stack.containers[
                s["metadata"]["labels"]["app.kubernetes.io/component"]
            ].name
            for s in release.of_kind("Service")
        }
        stack.prom = prometheus.start(release, pods, workdir, free_port(), "5s")
        yield stack
    finally:
        if stack.prom is not None:
            stack.prom.stop()
        for container in stack.containers.values():
            logs = container.logs(tail=400)
            (workdir / f"{container.name}.log").write_text(logs)
            container.remove()
        keep = os.environ.get("DEPLOY_SMOKE_KEEP")
        if keep:
            # the emptyDirs left (the embedder's model graph) are not worth keeping
            shutil.copytree(
                workdir, keep, dirs_exist_ok=True, ignore=shutil.ignore_patterns("volumes")
            )
