"""Every test runs as development (``ENV=dev``), and so does every process it starts.

docproc's default is the safe mode, which refuses the development keys that the tests
sign with (``docproc_testing.auth.DEV_AUTH``, docs/security.md); the tests ask for dev
here, once. A test of the safe mode asks for it (``Settings(env="prod")``).
"""

import os
from pathlib import Path

import pytest

os.environ["ENV"] = "dev"

#: Directories whose conftest builds a package-scoped fixture (a process cluster) that their
#: modules share: each is one unit of work, so the cluster is started once, on one worker.
#: A scenario of ``tests/faults/`` judges at zero grace only the objects it stored
#: (``test_crashes.settled``): what an earlier module's scenario left for the sweeper on the
#: shared cluster is judged by the sweep age, as that scenario judges it.
SHARED_PACKAGES = ("tests/e2e/", "tests/faults/")


def scope_of(nodeid: str) -> str:
    """A test's unit of work under ``make test``'s two xdist workers: its package where the
    package shares a cluster, else its module, so the fixtures a module builds once (a
    ``docproc dev``, a database, a cluster) are built once in the run, by the one worker that
    runs the whole module."""
    module = nodeid.split("::", 1)[0]
    return next((p for p in SHARED_PACKAGES if module.startswith(p)), module)


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``--dist loadscope`` with ``scope_of``'s units, sent in the collection's order.

    xdist's own ``loadgroup`` would do this with marks, but with pytest 9.2 it silently
    distributes test by test (it renames node ids, which no longer takes: pytest-xdist#1386).
    """
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByScope(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return ByScope(config, log)


def _weight(item: pytest.Item) -> int:
    """0 for a test that starts processes (``e2e``), 1 for one on the real infrastructure
    (``integration``), 2 for a unit test: the longest units go first."""
    return next(
        (rank for rank, mark in enumerate(("e2e", "integration")) if item.get_closest_marker(mark)),
        2,
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order the shuffled tests for two workers.

    pytest-randomly shuffles modules across the whole session; a stable sort keeps each
    directory's tests together in that order (``tests/faults`` would otherwise be entered and
    left several times, its ~30 s cluster built again at each entry), the tests that start
    processes first, then those on the real infrastructure, then the unit tests (``_weight``):
    ``make test``'s two workers (``--dist loadscope --no-loadscope-reorder``,
    ``pytest_xdist_make_scheduler``) take the units in this order, so the short ones fill
    the end instead of one long cluster running alone.
    """
    first: dict[Path, int] = {}
    for item in items:
        first.setdefault(item.path.parent, len(first))
    items.sort(key=lambda item: (_weight(item), first[item.path.parent]))
