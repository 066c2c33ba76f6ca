"""``docproc dev`` as an OS process on a fresh database of the test Postgres, with local
storage and the local model: for the tests and benchmarks that drive the all-in-one the
way a user does (its HTTP API, its console)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from docproc_testing.db import create_test_database_sync
from docproc_testing.infra import find_repo_root, free_port, load_infra_env


@dataclass
class Dev:
    url: str
    log: Path
    tmp: Path
    database_url: str


@contextmanager
def running_dev(tmp: Path) -> Iterator[Dev]:
    """Start ``docproc dev`` with its home, media and log under ``tmp``; stop it (its whole
    process group) on exit."""
    database_url = create_test_database_sync(load_infra_env(("postgres",))["DATABASE__URL"])
    env = {
        **os.environ,
        "DATABASE__URL": database_url,
        "STORAGE__MEDIA_DIR": str(tmp / "media"),
        "DOCPROC_HOME": str(tmp / "home"),
        "EMBEDDER__MODEL_CACHE_DIR": str(find_repo_root() / ".cache" / "models"),
    }
    port = free_port()
    log = tmp / "dev.log"
    with log.open("ab") as out:
        process = subprocess.Popen(
            [Path(sys.executable).parent / "docproc", "dev", "--port", str(port)],
            env=env,
            cwd=tmp,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(process, url, log)
        yield Dev(url, log, tmp, database_url)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def _wait_ready(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + 180  # generous: a loaded host; it only bounds a wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"docproc dev exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise TimeoutError(f"docproc dev not ready:\n{log.read_text()[-3000:]}")
