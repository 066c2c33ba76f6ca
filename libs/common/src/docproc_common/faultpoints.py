"""Named points where a test may crash a service process, to prove what a crash there leaves.

A point is armed in one of two ways, both only ever by tests:

* ``DOCPROC_TEST_FAULT_POINT=<name>[,<name>...]`` in a service's environment (read once, at
  import): the process ends every time it reaches one of them, for its whole life (and so
  does a parse child, which inherits the environment);
* ``DOCPROC_TEST_FAULT_CONTROL=<file>``: a running process reads the file each time it
  reaches a point, and a point the file names fires once: the process removes the file,
  then ends. A test arms a service that is already running by writing the file
  (``tests.e2e.harness.Cluster.arm``), so a crash scenario costs no restart to arm, and
  the process started after the crash is disarmed.

A name ``<point>:<subject>`` arms the point for that subject alone (``parser.child:a.pdf``,
the parse child of the file ``a.pdf``), so a scenario can crash on one document while
the others pass. Firing ends the process at once with ``FAULT_EXIT``: ``os._exit``, so no
``finally``, no shutdown hook and no offset commit runs, as after a SIGKILL, but at a
chosen instruction. Unset (every deployment), a point is two comparisons.

The points: ``embedder.in_transaction`` (the chunk set written, its transaction not yet
committed), ``embedder.after_commit`` (committed, the Kafka offset not yet), and
``relay.before_publish`` / ``relay.after_publish`` (outbox rows claimed; sent to the
transport and not yet marked published), ``teardown.mid_drop`` (files deleted, the table
dropped in a transaction that has not released the reservation yet),
``parser.child`` (a parse child, before it reads its document; its subject is the file's
name).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys

ENV = "DOCPROC_TEST_FAULT_POINT"
CONTROL_ENV = "DOCPROC_TEST_FAULT_CONTROL"
FAULT_EXIT = 86

log = logging.getLogger(__name__)
_armed = frozenset(filter(None, os.environ.get(ENV, "").split(","))) or None
_control = os.environ.get(CONTROL_ENV) or None


def crash_point(name: str, subject: str | None = None) -> None:
    """End the process here if a test armed ``name`` (or ``name:subject``)."""
    if _armed is None and _control is None:
        return
    names = {name} if subject is None else {name, f"{name}:{subject}"}
    if _armed is not None and names & _armed:
        _end(name)
    if _control is not None and _controlled() in names:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(_control)
        _end(name)


def _controlled() -> str | None:
    assert _control is not None
    try:
        with open(_control, encoding="utf-8") as f:
            return f.read().strip() or None
    except FileNotFoundError:
        return None


def _end(name: str) -> None:
    log.critical("fault point %s reached: exiting", name)
    sys.stderr.flush()
    os._exit(FAULT_EXIT)
