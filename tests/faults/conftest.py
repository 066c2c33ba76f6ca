from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from docproc_common.faultpoints import ENV
from docproc_testing import faults
from docproc_testing.infra import load_infra_env
from docproc_testing.proxies import S3FaultProxy

from tests.e2e.harness import SERVICES, Cluster, running_cluster

CRASHING_FILE = "always-crashes-its-parse.txt"
"""A file whose parse child always dies (the fault point ``parser.child`` armed for it from
the start), beside documents that parse."""

PARSE_FILE_LIMIT_MB = 2
"""The largest file a parse child may write (``PARSER__MAX_TEMP_FILE_MB``): a larger one
meets what a full disk answers (``EFBIG``); the package's other files write none."""


ONE_RELAY = faults.one_relay(SERVICES)
"""What a cluster of the package's own (``test_infra_faults``) relays its outbox with."""


@pytest.fixture(scope="package")
def s3() -> Iterator[S3FaultProxy]:
    """What every service of the package's cluster reaches S3 through: it answers as moto
    does until a scenario makes it fail."""
    proxy = S3FaultProxy(load_infra_env(("s3",))["STORAGE__S3_ENDPOINT_URL"], seed=5)
    yield proxy
    proxy.close()


@pytest.fixture(scope="package")
def cluster(tmp_path_factory: pytest.TempPathFactory, s3: S3FaultProxy) -> Iterator[Cluster]:
    """One cluster for every scenario of the package (``faults.deployment_env``): each works
    in its own knowledge bases and arms its fault points in the running processes."""
    tmp = Path(tmp_path_factory.mktemp("cluster"))
    (tmp / "parser-tmp").mkdir()
    env_for = faults.deployment_env(SERVICES, s3)
    env_for["parser"] |= {
        ENV: f"parser.child:{CRASHING_FILE}",
        "PARSER__MAX_TEMP_FILE_MB": str(PARSE_FILE_LIMIT_MB),
        "TMPDIR": str(tmp / "parser-tmp"),  # where each parse's directory is made
    }
    with running_cluster(tmp, env_for=env_for) as c:
        yield c
