"""Faults injected into docproc's five services running as processes (issue #14): one
machinery for the fault scenarios (``tests/faults``) and the chaos run (``bench/chaos.py``).

A fault acts on a :class:`Deployment` (``tests.e2e.harness.Cluster`` is one): it arms a
named fault point in a running process (``docproc_common.faultpoints``, through the
process's control file, so arming costs no restart), kills a process, puts the store's
``S3FaultProxy`` into a failing phase, has the outbox relay publish events again, or
makes a consumer group rebalance. :func:`plan` draws a sequence of them from a seed, and
:func:`inject` carries one out and returns once the deployment is whole again.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from docproc_common.faultpoints import CONTROL_ENV, FAULT_EXIT

from docproc_testing.proxies import S3FaultProxy


def one_relay(services: Iterable[str]) -> dict[str, dict[str, str]]:
    """The outbox relayed by the upload service alone (as with a relay deployment of its
    own), so a fault point armed in its relay is the one that meets every row."""
    return {name: {"BUS__RELAY_ENABLED": "false"} for name in services if name != "upload"}


def deployment_env(services: Iterable[str], s3: S3FaultProxy) -> dict[str, dict[str, str]]:
    """The settings the faults need of each service: S3 reached through ``s3`` and one relay
    (:func:`one_relay`)."""
    relay = one_relay(services)
    return {
        name: {"STORAGE__S3_ENDPOINT_URL": s3.endpoint_url, **relay.get(name, {})}
        for name in services
    }


class Deployment(Protocol):
    """What the faults need of the running services (``tests.e2e.harness.Cluster``)."""

    services: dict[str, Any]

    def restart(self, name: str, **env: str) -> None: ...
    def add(self, name: str, key: str) -> Any: ...
    def query(self, sql: str, *args: Any) -> list[Any]: ...


def arm(deployment: Deployment, service: str, point: str) -> None:
    """Arm the fault point ``point`` in the running process ``service``: it ends there the
    first time it reaches it, and what starts after it is disarmed."""
    control = Path(deployment.services[service].env[CONTROL_ENV])
    written = control.with_name(f".{control.name}.tmp")
    written.write_text(point)
    written.replace(control)


def crashed(deployment: Deployment, service: str, timeout: float = 180) -> None:
    """``service`` ended at its armed fault point; it is started again, disarmed."""
    status = deployment.services[service].wait_exit(timeout)
    if status != FAULT_EXIT:
        raise AssertionError(f"{service} ended with {status}, not at its fault point")
    deployment.restart(service)


def crash_at(deployment: Deployment, service: str, point: str, timeout: float = 120) -> bool:
    """Arm ``point`` in ``service`` and wait for the crash there, then start it again; False
    (and disarmed) when no work reached the point within ``timeout``."""
    arm(deployment, service, point)
    process = deployment.services[service]
    try:
        crashed(deployment, service, timeout)
    except TimeoutError:
        Path(process.env[CONTROL_ENV]).unlink(missing_ok=True)
        if process.process.poll() is None:
            return False
        crashed(deployment, service, 10)  # it fired as the point was disarmed
    return True


def kill(deployment: Deployment, service: str) -> None:
    """SIGKILL ``service`` at whatever instruction it is on, then start it again."""
    deployment.services[service].kill()
    deployment.restart(service)


def redeliver(deployment: Deployment, where: str, *args: Any) -> int:
    """Mark the published outbox rows ``where`` selects unpublished: the relay sends those
    events again, as after a publish whose mark was lost. How many rows."""
    rows = deployment.query(
        f"UPDATE outbox SET published_at = NULL WHERE published_at IS NOT NULL AND ({where}) "
        "RETURNING id",
        *args,
    )
    return len(rows)


@contextlib.contextmanager
def failing_store(s3: S3FaultProxy, ratio: float) -> Any:
    """S3 answers ``ratio`` of the requests with 503 SlowDown / 500 while the block runs."""
    s3.fail_ratio = ratio
    try:
        yield s3
    finally:
        s3.fail_ratio = 0.0


@contextlib.contextmanager
def replica(deployment: Deployment, service: str, key: str) -> Any:
    """A second process of ``service`` while the block runs: its group rebalances as it
    joins and again as it leaves."""
    deployment.add(service, key)
    try:
        yield deployment.services[key]
    finally:
        deployment.services.pop(key).stop()


KINDS = (
    "embedder.in_transaction",
    "embedder.after_commit",
    "relay.before_publish",
    "relay.after_publish",
    "kill.parser",
    "kill.embedder",
    "s3.flaky",
    "s3.down",
    "duplicate",
    "rebalance",
)
"""Every fault :func:`inject` knows: a crash at a named point (of the embedder, or of the
upload service's outbox relay), a SIGKILL, an S3 phase (30% of the requests failing for a
while, or all of them briefly), events published again, an embedder joining and leaving."""

#: The process each crash kind ends, and its fault point.
_POINTS = {
    "embedder.in_transaction": "embedder",
    "embedder.after_commit": "embedder",
    "relay.before_publish": "upload",
    "relay.after_publish": "upload",
}


@dataclass(frozen=True, slots=True)
class Fault:
    kind: str
    after_s: float
    """Seconds after the previous fault ended (or the run began)."""


def plan(seed: int, count: int, *, spacing_s: float = 10.0) -> list[Fault]:
    """``count`` faults drawn from ``seed``, each kind before any repeats, with a pause of up
    to ``spacing_s`` before each."""
    rng = random.Random(seed)
    kinds: list[str] = []
    while len(kinds) < count:
        kinds += rng.sample(KINDS, len(KINDS))
    return [Fault(kind, round(rng.uniform(1, spacing_s), 1)) for kind in kinds[:count]]


def inject(
    deployment: Deployment,
    fault: Fault,
    s3: S3FaultProxy,
    *,
    say: Callable[[str], None] = print,
    rng: random.Random | None = None,
) -> None:
    """Carry out ``fault``; returns once every process is up again (or the phase is over)."""
    rng = rng or random.Random(0)
    started = time.monotonic()
    outcome = ""
    if fault.kind in _POINTS:
        service = _POINTS[fault.kind]
        reached = crash_at(deployment, service, fault.kind)
        outcome = "crashed there" if reached else "not reached (no work), disarmed"
    elif fault.kind.startswith("kill."):
        kill(deployment, fault.kind.removeprefix("kill."))
        outcome = "killed"
    elif fault.kind == "s3.flaky":
        with failing_store(s3, 0.3):
            time.sleep(rng.uniform(5, 15))
        outcome = "30% of S3 requests failed"
    elif fault.kind == "s3.down":
        with failing_store(s3, 1.0):
            time.sleep(rng.uniform(2, 6))
        outcome = "every S3 request failed"
    elif fault.kind == "duplicate":
        again = redeliver(
            deployment,
            "id IN (SELECT id FROM outbox WHERE published_at IS NOT NULL "
            "ORDER BY random() LIMIT 5)",
        )
        outcome = f"{again} events published again"
    elif fault.kind == "rebalance":
        with replica(deployment, "embedder", "embedder-chaos"):
            time.sleep(rng.uniform(5, 15))
        outcome = "a second embedder joined and left"
    else:
        raise ValueError(f"unknown fault {fault.kind!r}")
    say(f"fault {fault.kind}: {outcome} ({time.monotonic() - started:.1f} s)")
