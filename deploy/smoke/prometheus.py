"""A real Prometheus (Debian's package) configured from the chart's own objects.

Scrape jobs come from the rendered ServiceMonitors (endpoint port, path, interval,
timeout), each resolved through its Service to the container port it reaches; targets
carry the labels prometheus-operator gives them (namespace, service, pod, container,
endpoint, job). The rules file is the rendered PrometheusRule's `spec`.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from deploy.smoke.pods import Release


def scrape_configs(release: Release, pods: dict[str, str]) -> list[dict[str, Any]]:
    """One job per ServiceMonitor endpoint; ``pods`` maps a Deployment name to its pod name."""
    jobs: list[dict[str, Any]] = []
    for monitor in release.of_kind("ServiceMonitor"):
        selector = monitor["spec"]["selector"]["matchLabels"]
        namespaces = monitor["spec"]["namespaceSelector"]["matchNames"]
        services = [
            s
            for s in release.of_kind("Service")
            if selector.items() <= s["metadata"]["labels"].items()
        ]
        for n, endpoint in enumerate(monitor["spec"]["endpoints"]):
            targets = []
            for service in services:
                port = release.service_port(service, endpoint["port"])
                name = service["metadata"]["name"]
                targets.append(
                    {
                        "targets": [f"127.0.0.1:{port}"],
                        "labels": {
                            "namespace": namespaces[0],
                            "service": name,
                            "job": name,
                            "endpoint": endpoint["port"],
                            "pod": pods[name],
                            "container": service["metadata"]["labels"][
                                "app.kubernetes.io/component"
                            ],
                        },
                    }
                )
            jobs.append(
                {
                    "job_name": f"serviceMonitor/{namespaces[0]}/{monitor['metadata']['name']}/{n}",
                    "metrics_path": endpoint.get("path", "/metrics"),
                    "scrape_interval": endpoint.get("interval", "30s"),
                    "scrape_timeout": endpoint.get("scrapeTimeout", "10s"),
                    "honor_labels": False,
                    "static_configs": targets,
                }
            )
    return jobs


def rule_groups(release: Release) -> dict[str, Any]:
    [rule] = release.of_kind("PrometheusRule")
    return {"groups": rule["spec"]["groups"]}


@dataclass
class Prometheus:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def query(self, expr: str) -> list[dict[str, Any]]:
        response = httpx.get(f"{self.url}/api/v1/query", params={"query": expr}, timeout=30)
        body = response.json()
        assert body["status"] == "success", (expr, body)
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def scraped_since(self, since: float, targets: int) -> bool:
        """Whether ``targets`` targets are up, each scraped after ``since`` (epoch seconds):
        a pod replaced or restarted since is scraped again, its gauges fresh, not stale."""
        up = self.query("up")
        stamps = self.query("timestamp(up)")
        return (
            len(up) == len(stamps) == targets
            and all(u["value"][1] == "1" for u in up)
            and all(float(s["value"][1]) > since for s in stamps)
        )

    def get(self, path: str) -> Any:
        body = httpx.get(f"{self.url}{path}", timeout=30).json()
        assert body["status"] == "success", body
        return body["data"]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


def start(
    release: Release, pods: dict[str, str], workdir: Path, port: int, evaluation: str
) -> Prometheus:
    binary = shutil.which("prometheus")
    promtool = shutil.which("promtool")
    if binary is None or promtool is None:
        raise RuntimeError("prometheus is not installed (Debian package prometheus)")
    rules = workdir / "rules.yml"
    rules.write_text(yaml.safe_dump(rule_groups(release)))
    config = workdir / "prometheus.yml"
    config.write_text(
        yaml.safe_dump(
            {
                "global": {"evaluation_interval": evaluation, "scrape_interval": evaluation},
                "rule_files": [str(rules)],
                "scrape_configs": scrape_configs(release, pods),
            }
        )
    )
    for check in (["check", "rules", str(rules)], ["check", "config", str(config)]):
        result = subprocess.run([promtool, *check], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stdout + result.stderr
    log = workdir / "prometheus.log"
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={workdir / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--web.enable-lifecycle",
        ],
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/-/ready", timeout=2).status_code == 200:
                return Prometheus(url, process, log)
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    process.kill()
    raise TimeoutError(f"prometheus not ready:\n{log.read_text()[-2000:]}")
