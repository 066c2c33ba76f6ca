from __future__ import annotations

import pytest
from docproc_testing.infra import load_infra_env


@pytest.fixture(scope="session")
def infra() -> dict[str, str]:
    return load_infra_env()
