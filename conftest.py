"""Every test runs as development (``ENV=dev``), and so does every process it starts.

docproc's default is the safe mode, which refuses the development keys that the tests
sign with (``docproc_testing.auth.DEV_AUTH``, docs/security.md); the tests ask for dev
here, once. A test of the safe mode asks for it (``Settings(env="prod")``).
"""

import os
from pathlib import Path

import pytest

os.environ["ENV"] = "dev"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep each test directory's tests together, in the shuffled order pytest-randomly gave.

    pytest-randomly shuffles modules across the whole session, so ``tests/faults`` would be
    entered and left several times, and its package-scoped cluster (~30 s) built again at
    each entry. A stable sort on the order in which each directory first appears keeps the
    seed's order everywhere else. (Under ``make test``'s two xdist workers each worker builds
    the fixtures of the tests it is sent; the order still keeps them together there.)
    """
    first: dict[Path, int] = {}
    for item in items:
        first.setdefault(item.path.parent, len(first))
    items.sort(key=lambda item: first[item.path.parent])
