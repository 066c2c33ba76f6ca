"""The API started as its image starts it (``python -m docproc_upload``, no ``ENV``) with
no key of its own, or with a key published in docproc's source, refuses to start and says
which setting is wrong: it never serves tokens signed with a development key. (Each key's
every refusal is a unit test of ``Settings``: libs/common/tests/unit/test_settings.py.)"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest
from docproc_common.settings import DEV_JWT_SECRET

VAULT_KEY = base64.b64encode(b"v" * 32).decode()


def start(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if k.upper() != "ENV" and not k.upper().startswith(("AUTH__", "VAULT__"))
    }
    return subprocess.run(
        [sys.executable, "-m", "docproc_upload"],
        env={
            **base,
            "DATABASE__URL": "postgresql+asyncpg://u:p@127.0.0.1:1/none",  # never reached
            "DOCPROC_HOME": str(tmp_path),
            "HTTP__PORT": "1",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        pytest.param(
            {"VAULT__MASTER_KEY": VAULT_KEY}, "AUTH__JWT_SECRET is not set", id="no_jwt_key"
        ),
        pytest.param(
            {"AUTH__JWT_SECRET": DEV_JWT_SECRET, "VAULT__MASTER_KEY": VAULT_KEY},
            "AUTH__JWT_SECRET is the development key",
            id="published_jwt_key",
        ),
    ],
)
def test_the_api_refuses_to_start_without_keys_of_its_own(
    tmp_path: Path, env: dict[str, str], message: str
) -> None:
    done = start(tmp_path, **env)
    assert done.returncode == 1, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("docproc-upload refuses to start: "), done.stderr[-2000:]
    assert message in last
