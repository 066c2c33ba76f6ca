"""Named points where a test may crash a service process, to prove what a crash there leaves.

``DOCPROC_TEST_FAULT_POINT=<name>`` in a service's environment (read once, at import) makes
the process end at once with ``FAULT_EXIT`` the first time it reaches ``crash_point(name)``:
``os._exit``, so no ``finally``, no shutdown hook and no offset commit runs, as after a
SIGKILL, but at a chosen instruction. Unset (every deployment), a point is one comparison.

The points: ``embedder.in_transaction`` (the chunk set written, its transaction not yet
committed), ``embedder.after_commit`` (committed, the Kafka offset not yet), and
``relay.before_publish`` / ``relay.after_publish`` (outbox rows claimed; sent to the
transport and not yet marked published), ``teardown.mid_drop`` (files deleted, the table
dropped in a transaction that has not released the reservation yet).
"""

from __future__ import annotations

import logging
import os
import sys

ENV = "DOCPROC_TEST_FAULT_POINT"
FAULT_EXIT = 86

log = logging.getLogger(__name__)
_armed = os.environ.get(ENV) or None


def crash_point(name: str) -> None:
    """End the process here if a test armed ``name``."""
    if _armed is not None and name == _armed:
        log.critical("fault point %s reached: exiting", name)
        sys.stderr.flush()
        os._exit(FAULT_EXIT)
