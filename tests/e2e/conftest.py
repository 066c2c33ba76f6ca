from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import Cluster, running_cluster


@pytest.fixture(scope="package")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One cluster for the package's modules that need no deployment of their own (each test
    works in its own knowledge bases; a test that kills or reconfigures a service restarts it
    as it was). ``test_embeddings`` and ``test_sync`` start their own."""
    with running_cluster(Path(tmp_path_factory.mktemp("cluster"))) as c:
        yield c
