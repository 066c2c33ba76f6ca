"""Every test runs as development (``ENV=dev``), and so does every process it starts.

docproc's default is the safe mode, which refuses the development keys that the tests
sign with (``docproc_testing.auth.DEV_AUTH``, docs/security.md); the tests ask for dev
here, once. A test of the safe mode asks for it (``Settings(env="prod")``).
"""

import os
from pathlib import Path

import pytest

os.environ["ENV"] = "dev"


#: The suites that start docproc's processes (a broker's worth each): one xdist worker runs
#: them all, one cluster at a time, while the other runs everything in-process.
CLUSTERS = (Path(__file__).parent / "tests" / "e2e", Path(__file__).parent / "tests" / "faults")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep each test directory's tests together, in the shuffled order pytest-randomly gave,
    and give each directory to one xdist worker (``--dist loadgroup``).

    pytest-randomly shuffles modules across the whole session, so ``tests/faults`` would be
    entered and left several times, and its package-scoped cluster (~30 s) built again at
    each entry. A stable sort on the order in which each directory first appears keeps the
    seed's order everywhere else. A directory is one xdist group, so its package and session
    fixtures are built by one worker; the process clusters are one group together, so two
    clusters never compete for the two cores, and it comes first: the longest group starts
    at once while the other worker goes through the rest.
    """
    first: dict[Path, int] = {}
    for item in items:
        first.setdefault(item.path.parent, len(first))
    items.sort(key=lambda item: (_group(item.path.parent) != "clusters", first[item.path.parent]))
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_group(item.path.parent)))


def _group(directory: Path) -> str:
    if any(directory.is_relative_to(c) for c in CLUSTERS):
        return "clusters"
    return str(directory.relative_to(Path(__file__).parent))
