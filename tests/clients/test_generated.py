"""The committed clients are what the current OpenAPI generates (``make clients``), and the
TypeScript package type-checks.

The schema of the upload app (as ``docproc dev`` and the upload pod serve it,
``docproc_upload.openapi_document``, no server needed) is generated from twice:

- ``openapi-python-client`` (a dev dependency pinned in ``uv.lock``, with
  ``clients/python/openapi-python-client.yaml``) generates ``docproc_client.generated``
  into a temporary folder; the test fails, naming the files, while the committed
  ``clients/python/docproc_client/generated`` differs from it.
- ``openapi-typescript`` (pinned in ``clients/typescript``'s lockfile) turns it into
  ``clients/typescript/src/api.d.ts``. That file is committed: the console
  (``services/upload/console``) and ``@docproc/client`` are typed by it, so the test
  regenerates it in place and fails while the committed one is not the app's. Then
  ``tsc --noEmit`` checks the package's sources (``src/index.ts``, ``src/usage.ts``)
  against it: a path, parameter, body field or answer they rely on that the schema no
  longer declares fails with the compiler's message.

docs/api-clients.md shows the same commands.
"""

from __future__ import annotations

import asyncio
import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from docproc_testing.infra import find_repo_root
from docproc_upload.openapi_document import openapi_document

from .conftest import TYPESCRIPT, npm, typescript_project

ROOT = find_repo_root()
TYPES = TYPESCRIPT / "src" / "api.d.ts"
PYTHON = ROOT / "clients" / "python"
GENERATED = PYTHON / "docproc_client" / "generated"
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("openapi") / "openapi.json"
    path.write_text(json.dumps(asyncio.run(openapi_document())))
    return path


def differences(left: Path, right: Path) -> list[str]:
    """The files that differ, or are on one side only, under two folders."""
    found: list[str] = []

    def walk(cmp: filecmp.dircmp[str], prefix: str) -> None:
        found.extend(prefix + n for n in cmp.left_only + cmp.right_only + cmp.diff_files)
        for name, sub in cmp.subdirs.items():
            walk(sub, f"{prefix}{name}/")

    walk(filecmp.dircmp(left, right, ignore=["__pycache__", ".ruff_cache"]), "")
    return sorted(found)


def test_the_python_client_is_what_the_schema_generates(schema: Path, tmp_path: Path) -> None:
    fresh = tmp_path / "generated"
    run = subprocess.run(
        [BIN / "openapi-python-client", "generate", "--meta", "none"]
        + ["--config", PYTHON / "openapi-python-client.yaml"]
        + ["--path", schema, "--output-path", fresh],
        cwd=tmp_path,
        # the post hooks run the lock's ruff, from the same environment
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}"
    assert "Warning" not in run.stdout, run.stdout  # every operation generated whole
    # filecmp compares contents (shallow=False where the stat signatures differ)
    changed = differences(GENERATED, fresh)
    assert not changed, (
        f"clients/python/docproc_client/generated is not what the app's schema generates: "
        f"{changed}; run `make clients` and commit it"
    )


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm (Node.js) is not installed")
def test_the_typescript_types_are_current_and_type_check(schema: Path) -> None:
    with typescript_project():
        committed = TYPES.read_text()
        shutil.copy(schema, TYPESCRIPT / "openapi.json")
        npm("run", "-s", "generate")
        assert TYPES.read_text() == committed, (
            "clients/typescript/src/api.d.ts was not the app's schema (the console is typed by"
            " it): regenerated now, as `make clients` does; commit it"
        )
        npm("run", "-s", "check")
