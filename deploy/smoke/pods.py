"""The chart's rendered workloads run as podman containers, read from the rendered YAML only.

`helm template` output is the single source: hook Jobs in hook-weight order, then every
Deployment. Each container takes its image, command, args, env (ConfigMap and Secret
references resolved against the rendered objects and the Secrets an operator created),
ports, probes, user, read-only root filesystem and emptyDir mounts from the pod spec.

What this machine cannot give a pod is replaced, and only that: there is no cluster
network, so every pod runs on the host's network (`--network host`, the chart's
`containerPort`s and `metricsPort`s set apart in the smoke values), and a Service port
resolves to 127.0.0.1:<the container port it targets>.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

Doc = dict[str, Any]
RUNTIME = ["--runtime", "/usr/sbin/runc"]
# podman's default rlimit raise needs CAP_SYS_RESOURCE, which these hosts lack
ULIMITS = ["--ulimit", "nofile=20000:20000", "--ulimit", "nproc=32768:32768"]
_QUANTITY = re.compile(r"^(\d+)(Ki|Mi|Gi|Ti|k|M|G|T)?$")
_FACTOR = {None: 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
_FACTOR |= {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def podman(*args: str, timeout: float = 600, check: bool = True) -> str:
    result = subprocess.run(
        ["podman", *RUNTIME, *args], capture_output=True, text=True, timeout=timeout
    )
    if check and result.returncode != 0:
        raise RuntimeError(f"podman {' '.join(args[:3])} failed: {result.stderr[-2000:]}")
    return result.stdout


def quantity_bytes(value: str) -> int:
    m = _QUANTITY.match(str(value))
    if not m:
        raise ValueError(f"unsupported quantity {value!r}")
    return int(m.group(1)) * _FACTOR[m.group(2)]


def hook_weight(doc: Doc) -> int:
    return int(doc["metadata"].get("annotations", {}).get("helm.sh/hook-weight", "0"))


def is_hook(doc: Doc) -> bool:
    return "helm.sh/hook" in doc["metadata"].get("annotations", {})


@dataclass
class Release:
    """One `helm template` output plus the Secrets the operator created beforehand."""

    docs: list[Doc]
    secrets: dict[str, dict[str, str]]

    def of_kind(self, kind: str) -> list[Doc]:
        return [d for d in self.docs if d["kind"] == kind]

    def named(self, kind: str, name: str) -> Doc:
        return next(d for d in self.of_kind(kind) if d["metadata"]["name"] == name)

    def hooks(self) -> list[Doc]:
        """Hook objects in the order helm creates them: weight, then kind, then name."""
        return sorted(
            (d for d in self.docs if is_hook(d)),
            key=lambda d: (hook_weight(d), d["kind"] != "ConfigMap", d["metadata"]["name"]),
        )

    def config_map(self, name: str) -> dict[str, str]:
        return {k: str(v) for k, v in self.named("ConfigMap", name).get("data", {}).items()}

    def secret(self, name: str) -> dict[str, str]:
        if name not in self.secrets:
            raise KeyError(f"Secret {name} is referenced but was not created")
        return self.secrets[name]

    def env(self, container: Doc) -> dict[str, str]:
        """The container's environment as the kubelet builds it: envFrom first, then env."""
        env: dict[str, str] = {}
        for source in container.get("envFrom", []):
            if "configMapRef" in source:
                env.update(self.config_map(source["configMapRef"]["name"]))
            else:
                env.update(self.secret(source["secretRef"]["name"]))
        for var in container.get("env", []):
            if "value" in var:
                env[var["name"]] = str(var["value"])
                continue
            ref = var["valueFrom"]
            if "secretKeyRef" in ref:
                key = ref["secretKeyRef"]
                env[var["name"]] = self.secret(key["name"])[key["key"]]
            else:
                key = ref["configMapKeyRef"]
                env[var["name"]] = self.config_map(key["name"])[key["key"]]
        return env

    def service_port(self, service: Doc, port_name: str) -> int:
        """The containerPort a Service port reaches, through its selector and targetPort."""
        port = next(p for p in service["spec"]["ports"] if p["name"] == port_name)
        selector = service["spec"]["selector"]
        deployment = next(
            d
            for d in self.of_kind("Deployment")
            if selector.items() <= d["spec"]["template"]["metadata"]["labels"].items()
        )
        target = port.get("targetPort", port["port"])
        if isinstance(target, int):
            return target
        for c in deployment["spec"]["template"]["spec"]["containers"]:
            for p in c.get("ports", []):
                if p["name"] == target:
                    return int(p["containerPort"])
        raise LookupError(f"no container port {target} behind {service['metadata']['name']}")


@dataclass
class Container:
    """One container of a rendered pod, run with podman."""

    name: str
    pod: Doc
    spec: Doc
    env: dict[str, str]
    workdir: Path
    labels: dict[str, str] = field(default_factory=dict)
    #: when it was last started or restarted (epoch seconds)
    started_at: float = 0.0

    def port(self, name: str) -> int:
        return next(int(p["containerPort"]) for p in self.spec["ports"] if p["name"] == name)

    def run_args(self, *, detach: bool) -> list[str]:
        pod, spec = self.pod, self.spec
        security = {**pod.get("securityContext", {}), **spec.get("securityContext", {})}
        env_file = self.workdir / f"{self.name}.env"
        env_file.write_text("".join(f"{k}={v}\n" for k, v in sorted(self.env.items())))
        env_file.chmod(0o600)
        args = ["run", "--name", self.name, "--network", "host", *ULIMITS]
        args += ["--env-file", str(env_file), "--log-driver", "k8s-file"]
        args += ["-d"] if detach else []
        for key, value in self.labels.items():
            args += ["--label", f"{key}={value}"]
        if "runAsUser" in security:
            args += ["--user", f"{security['runAsUser']}:{security.get('runAsGroup', 0)}"]
        if "fsGroup" in security:
            args += ["--group-add", str(security["fsGroup"])]
        if security.get("readOnlyRootFilesystem"):
            # podman would add writable tmpfs on /tmp, /var/tmp and /run: only the pod's mounts
            args += ["--read-only", "--read-only-tmpfs=false"]
        if security.get("allowPrivilegeEscalation") is False:
            args += ["--security-opt", "no-new-privileges"]
        for cap in security.get("capabilities", {}).get("drop", []):
            args += ["--cap-drop", cap]
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        for mount in spec.get("volumeMounts", []):
            args += ["--mount", self.empty_dir(volumes[mount["name"]], mount["mountPath"])]
        if "terminationGracePeriodSeconds" in pod:
            args += ["--stop-timeout", str(pod["terminationGracePeriodSeconds"])]
        if spec.get("command"):
            args += ["--entrypoint", json.dumps(spec["command"])]
        return [*args, spec["image"], *spec.get("args", [])]

    def empty_dir(self, volume: Doc, path: str) -> str:
        """An emptyDir as the kubelet gives it: one per pod, kept while the pod is (a crashed
        container restarted finds its files, e.g. the embedder's model graph), deleted with
        it. ``medium: Memory`` is a tmpfs of ``sizeLimit``; the default medium, a directory."""
        if "emptyDir" not in volume:
            raise NotImplementedError(f"volume {volume['name']}: only emptyDir runs here")
        spec = volume["emptyDir"] or {}
        if spec.get("medium") == "Memory":
            size = quantity_bytes(spec.get("sizeLimit", "1Gi"))
            return f"type=tmpfs,destination={path},tmpfs-size={size},tmpfs-mode=1777"
        source = self.volume_dir / volume["name"]
        source.mkdir(parents=True, exist_ok=True)
        source.chmod(0o1777)
        return f"type=bind,source={source},destination={path}"

    @property
    def volume_dir(self) -> Path:
        return self.workdir / "volumes" / self.name

    def start(self) -> None:
        self.started_at = time.time()
        podman(*self.run_args(detach=True))

    def run_to_completion(self, timeout: float) -> tuple[int, str]:
        result = subprocess.run(
            ["podman", *RUNTIME, *self.run_args(detach=False)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return result.returncode, result.stdout + result.stderr

    def kill(self) -> None:
        """SIGKILL, as a crashed pod: no shutdown hook runs."""
        podman("kill", "--signal", "KILL", self.name)
        podman("wait", self.name, timeout=60, check=False)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after the pod's grace period, as the kubelet does."""
        grace = int(self.pod.get("terminationGracePeriodSeconds", 30))
        podman("stop", "--time", str(grace), self.name, timeout=grace + 60, check=False)

    def restart(self) -> None:
        """The kubelet restarting the same container after it died."""
        self.started_at = time.time()
        podman("start", self.name)

    def remove(self) -> None:
        """The pod deleted: its container, then its emptyDirs."""
        podman("rm", "--force", "--time", "5", self.name, timeout=120, check=False)
        shutil.rmtree(self.volume_dir, ignore_errors=True)

    def logs(self, tail: int = 80) -> str:
        return podman("logs", "--tail", str(tail), self.name, check=False)

    def exec(self, *cmd: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["podman", *RUNTIME, "exec", self.name, *cmd],
            capture_output=True,
            text=True,
            timeout=900,
        )

    def running(self) -> bool:
        state = podman("inspect", "--format", "{{.State.Running}}", self.name, check=False)
        return state.strip() == "true"

    def probe_url(self, probe: str) -> str:
        get = self.spec[probe]["httpGet"]
        port = get["port"] if isinstance(get["port"], int) else self.port(get["port"])
        return f"http://127.0.0.1:{port}{get['path']}"

    def wait_ready(self, timeout: float | None = None) -> None:
        """Startup, then readiness, as their probes say (a whole startup budget by default)."""
        startup = self.spec.get("startupProbe", {})
        budget = timeout or startup.get("periodSeconds", 10) * startup.get("failureThreshold", 3)
        deadline = time.monotonic() + budget + 60
        url = self.probe_url("readinessProbe")
        while time.monotonic() < deadline:
            if not self.running():
                raise RuntimeError(f"{self.name} exited:\n{self.logs()}")
            try:
                if httpx.get(url, timeout=3).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(1)
        raise TimeoutError(f"{self.name} not ready at {url}:\n{self.logs()}")


def pod_containers(
    release: Release, name: str, template: Doc, workdir: Path, labels: dict[str, str]
) -> Iterator[Container]:
    pod = template["spec"]
    for spec in pod["containers"]:
        yield Container(
            name=f"{name}-{spec['name']}",
            pod=pod,
            spec=spec,
            env=release.env(spec),
            workdir=workdir,
            labels=labels,
        )


def run_hooks(release: Release, prefix: str, workdir: Path, labels: dict[str, str]) -> list[str]:
    """Run the hook Jobs to completion in hook-weight order; return what ran, in order."""
    ran: list[str] = []
    for doc in release.hooks():
        if doc["kind"] != "Job":
            continue
        job = doc["metadata"]["name"]
        tries = int(doc["spec"].get("backoffLimit", 0)) + 1
        deadline = float(doc["spec"].get("activeDeadlineSeconds", 600))
        for n in range(tries):
            [container] = pod_containers(
                release, f"{prefix}-{job}-{n}", doc["spec"]["template"], workdir, labels
            )
            code, output = container.run_to_completion(deadline)
            container.remove()
            if code == 0:
                break
            if n == tries - 1:
                raise RuntimeError(f"Job {job} failed {tries} times:\n{output[-3000:]}")
        ran.append(job)
    return ran


def deployments(release: Release) -> Iterable[Doc]:
    return release.of_kind("Deployment")


def component(doc: Doc) -> str:
    return str(doc["metadata"]["labels"]["app.kubernetes.io/component"])
