from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from docproc_testing.drive_standin import DriveStandIn
from docproc_testing.graph_standin import GraphStandIn, serve_graph

from tests.e2e import deployment
from tests.e2e.harness import SERVICES, Cluster, running_cluster


@pytest.fixture(scope="package")
def graph() -> Iterator[GraphStandIn]:
    yield from serve_graph(page_size=2)


@pytest.fixture(scope="package")
def drive() -> Iterator[DriveStandIn]:
    with DriveStandIn() as standin:
        yield standin


@pytest.fixture(scope="package")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, graph: GraphStandIn, drive: DriveStandIn
) -> Iterator[Cluster]:
    """One cluster for every module of the package, configured for all of them
    (``deployment``): each test works in its own knowledge bases, and a test that kills or
    reconfigures a service restarts it as it was."""
    tmp = Path(tmp_path_factory.mktemp("cluster"))
    env = (
        deployment.embedding_gateway(tmp)
        | deployment.mounted_models(tmp)
        | deployment.sync_on_loopback(graph, drive)
    )
    with running_cluster(tmp, env_for=dict.fromkeys(SERVICES, env)) as c:
        yield c
