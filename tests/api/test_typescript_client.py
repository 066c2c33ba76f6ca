"""The TypeScript types generated from ``/openapi.json`` are committed and current, and a
client written with them type-checks.

The schema of the upload app (as ``docproc dev`` and the upload pod serve it,
``docproc_upload.openapi_document``) is written to ``clients/typescript/openapi.json``;
``openapi-typescript`` (pinned in that npm project's lockfile) turns it into
``src/api.d.ts``. That file is committed: the console (``services/upload/console``) is
typed by it, so the test fails while the committed one is not the app's (``make api-types``
regenerates it). Then ``tsc --noEmit`` checks ``src/usage.ts``, a small client written
with ``openapi-fetch``, against it: a path, parameter, body field or answer the usage
relies on that the schema no longer declares fails with the compiler's message.
docs/api-clients.md shows the same commands.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess

import pytest
from docproc_testing.infra import find_repo_root
from docproc_upload.openapi_document import openapi_document

PROJECT = find_repo_root() / "clients" / "typescript"
TYPES = PROJECT / "src" / "api.d.ts"


def _npm(*args: str) -> None:
    run = subprocess.run(["npm", *args], cwd=PROJECT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"npm {' '.join(args)}:\n{run.stdout}\n{run.stderr}"


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm (Node.js) is not installed")
def test_the_generated_typescript_client_is_current_and_type_checks() -> None:
    if not (PROJECT / "node_modules" / ".package-lock.json").exists():
        _npm("ci", "--no-audit", "--no-fund")
    committed = TYPES.read_text()
    (PROJECT / "openapi.json").write_text(json.dumps(asyncio.run(openapi_document())))
    _npm("run", "-s", "generate")
    assert TYPES.read_text() == committed, (
        "clients/typescript/src/api.d.ts was not the app's schema (the console is typed by it):"
        " regenerated now, as `make api-types` does; commit it"
    )
    _npm("run", "-s", "check")
