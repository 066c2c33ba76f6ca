"""A Kafka broker or a Postgres server of one test's own, to break without touching the shared ones.

The fault scenarios of issue #14 kill, freeze and restart the infrastructure itself (F3,
F4); the shared broker and server of ``scripts/infra.py`` serve every other test of the
machine, so such a scenario starts its own from the same cached binaries, under a
temporary directory, with ``scripts/infra.py``'s own functions (``kafka_up``,
``postgres_up`` and their ``*_start``). ``private_kafka`` and ``private_postgres`` stop
and remove it when their block ends, however it ends. Every signal goes to the pid the
test started, never to a process found by name.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from docproc_testing.infra import find_repo_root

__all__ = ["PrivateKafka", "PrivatePostgres", "infra_script", "private_kafka", "private_postgres"]


@functools.cache
def infra_script() -> ModuleType:
    """``scripts/infra.py`` as a module (it is a script, not a package)."""
    path = find_repo_root() / "scripts" / "infra.py"
    spec = importlib.util.spec_from_file_location("docproc_infra_script", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _wait_gone(pid: int, marker: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while infra_script().pid_alive(pid, marker):
        if time.monotonic() > deadline:
            raise TimeoutError(f"pid {pid} still runs {timeout:.0f}s after it was stopped")
        time.sleep(0.1)


class PrivateKafka:
    """A single-node KRaft broker under ``home``: ``kill`` (SIGKILL), ``pause`` (SIGSTOP) and
    ``resume`` (SIGCONT) its pid, ``start`` it again on the same port and log dirs."""

    def __init__(self, home: Path) -> None:
        self._infra = infra_script()
        self.home = home
        self.version: str = self._infra.DEFAULT_KAFKA_VERSION
        self._info: dict[str, Any] = self._infra.kafka_up(self.version, home)

    @property
    def pid(self) -> int:
        return int(self._info["pid"])

    @property
    def bootstrap_servers(self) -> str:
        return f"{self._infra.HOST}:{self._info['port']}"

    def kill(self) -> None:
        """SIGKILL: no shutdown, its logs left unclean, as from a lost node."""
        os.kill(self.pid, signal.SIGKILL)
        _wait_gone(self.pid, self._infra.CMD_MARKERS["kafka"])

    def pause(self) -> None:
        os.kill(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.pid, signal.SIGCONT)

    def start(self) -> None:
        """Again, after ``kill``: the same port, configuration and data."""
        self._info = {
            **self._info,
            **self._infra.kafka_start(self.version, self.home, self._info["port"]),
        }

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGCONT)  # a paused broker cannot act on SIGTERM
        self._infra.kill_group(self.pid, self._infra.CMD_MARKERS["kafka"])


class PrivatePostgres:
    """A server under ``home`` with the ``docproc`` database and pgvector (``admin_url``):
    ``stop`` it (an immediate shutdown, as a crash) and ``start`` it again on the same port
    and data. Unlike the shared server it commits synchronously: a commit it answered
    survives the restart, as on a real deployment's."""

    def __init__(self, home: Path) -> None:
        self._infra = infra_script()
        self.home = home
        self._settings = {**self._infra.PG_SETTINGS, "synchronous_commit": "on"}
        try:
            self._info: dict[str, Any] = self._infra.postgres_up(home, self._settings)
        except BaseException:
            self._infra.postgres_down({"pgdata": str(home / "data")})  # started, then failed
            raise

    @property
    def admin_url(self) -> str:
        url: str = self._infra.env_for({"postgres": self._info})["DATABASE__URL"]
        return url

    def stop(self) -> None:
        self._infra.postgres_down(self._info)

    def start(self) -> None:
        started = self._infra.postgres_start(self.home, self._info["port"], self._settings)
        self._info = {**self._info, **started}

    def close(self) -> None:
        self._infra.postgres_down(self._info)


@contextlib.contextmanager
def private_kafka(home: Path) -> Iterator[PrivateKafka]:
    broker = PrivateKafka(home)
    try:
        yield broker
    finally:
        broker.close()


@contextlib.contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    """Its data in a directory of its own under the system's temporary one, removed at the
    end: not under pytest's base directory, which any pytest run starting on the machine
    makes private to its user again (the server runs as another user when we are root)."""
    home = Path(tempfile.mkdtemp(prefix="docproc-pg-"))
    try:
        server = PrivatePostgres(home)
        try:
            yield server
        finally:
            server.close()
    finally:
        shutil.rmtree(home, ignore_errors=True)
