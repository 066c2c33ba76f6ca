from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import SERVICES, Cluster, running_cluster

ONE_RELAY = {name: {"BUS__RELAY_ENABLED": "false"} for name in SERVICES if name != "upload"}
"""The outbox relayed by the upload service alone (as with a relay deployment of its own), so
a fault point armed in its relay is the one that meets every row. One cluster serves every
scenario of the package: each works in its own knowledge bases."""


@pytest.fixture(scope="package")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(Path(tmp_path_factory.mktemp("cluster")), env_for=ONE_RELAY) as c:
        yield c
