"""The TypeScript client a frontend generates from ``/openapi.json`` type-checks a usage file.

The schema of the upload app (as ``docproc dev`` and the upload pod serve it) is written
to ``clients/typescript/openapi.json``; ``openapi-typescript`` (pinned in that npm
project's lockfile) turns it into ``src/api.d.ts`` and ``tsc --noEmit`` checks
``src/usage.ts``, a small client written with ``openapi-fetch``, against it. A path,
parameter, body field or answer the usage relies on that the schema no longer
declares fails the test with the compiler's message. docs/api-clients.md shows the
same commands.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from docproc_common.runtime import Runtime, build_app
from docproc_common.settings import DatabaseSettings, Settings
from docproc_testing.infra import find_repo_root
from docproc_upload.app import build

PROJECT = find_repo_root() / "clients" / "typescript"


def _npm(*args: str) -> None:
    run = subprocess.run(["npm", *args], cwd=PROJECT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"npm {' '.join(args)}:\n{run.stdout}\n{run.stderr}"


async def _write_schema(path: Path) -> None:
    # building the app opens no connection; the URL only has to parse
    settings = Settings(database=DatabaseSettings(url="postgresql+asyncpg://u:p@127.0.0.1:1/db"))
    runtime = Runtime.create(settings)
    try:
        spec = build(runtime)
        path.write_text(json.dumps(build_app(runtime, [spec], [], "docproc").openapi()))
        for close in spec.on_shutdown:
            await close()
    finally:
        await runtime.close()


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm (Node.js) is not installed")
def test_the_generated_typescript_client_type_checks() -> None:
    if not (PROJECT / "node_modules" / ".package-lock.json").exists():
        _npm("ci", "--no-audit", "--no-fund")
    asyncio.run(_write_schema(PROJECT / "openapi.json"))
    _npm("run", "-s", "generate")
    _npm("run", "-s", "check")
