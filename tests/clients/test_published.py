"""The published clients, installed from what they publish, pass their own tests against one
``docproc dev``.

- Python: ``uv build`` makes ``docproc-client``'s wheel; a fresh virtual environment
  installs it with both extras (``langchain``, ``llamaindex``) and pytest, at the versions
  ``uv.lock`` holds, and runs ``clients/python/tests`` there, importing the wheel's
  ``docproc_client`` (its report header says which file, and the test checks it).
- TypeScript: ``npm pack`` builds ``@docproc/client`` (``tsc``) into its tarball; a fresh
  npm project installs the tarball and runs ``clients/typescript/test/*.test.mjs`` under
  Node's own test runner (``node --test``), importing the package by its name.

Both get the server's URL and two tokens (alice of acme, bob of globex) in the
environment (``DOCPROC_URL``, ``DOCPROC_TOKEN``, ``DOCPROC_OTHER_TOKEN``), as a developer
running them against their own ``docproc dev`` does (docs/api-clients.md).
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from docproc_common.auth import EDIT, VIEW, mint_token
from docproc_testing.auth import DEV_AUTH
from docproc_testing.dev import running_dev
from docproc_testing.infra import find_repo_root

from .conftest import npm, typescript_project

pytestmark = pytest.mark.integration

ROOT = find_repo_root()
UV = shutil.which("uv")


def run(args: list[str | Path], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{' '.join(map(str, args))}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """One ``docproc dev`` for both clients, and what their tests read from the environment."""
    with running_dev(tmp_path_factory.mktemp("clients-dev")) as dev:
        yield {
            "DOCPROC_URL": dev.url,
            "DOCPROC_TOKEN": mint_token(
                DEV_AUTH, user_id="alice", organization_id="acme", permissions=[VIEW, EDIT]
            ),
            "DOCPROC_OTHER_TOKEN": mint_token(
                DEV_AUTH, user_id="bob", organization_id="globex", permissions=[VIEW, EDIT]
            ),
        }


@pytest.mark.skipif(UV is None, reason="uv is not installed")
def test_the_python_wheel_passes_its_tests(server: dict[str, str], tmp_path: Path) -> None:
    assert UV is not None
    run([UV, "build", "--package", "docproc-client", "--wheel", "-o", tmp_path / "dist"], ROOT)
    (wheel,) = (tmp_path / "dist").glob("docproc_client-*.whl")
    # the lock's versions of what the wheel and its extras need, and the suite's pytest
    pins = run(
        [UV, "export", "--frozen", "--no-hashes", "--no-dev", "--no-emit-workspace"]
        + ["--package", "docproc-client", "--extra", "langchain", "--extra", "llamaindex"],
        ROOT,
    )
    (tmp_path / "pins.txt").write_text(pins + f"pytest=={importlib.metadata.version('pytest')}\n")
    venv = tmp_path / "venv"
    run([UV, "venv", "--quiet", "--python", sys.executable, venv], tmp_path)
    run(
        [UV, "pip", "install", "--quiet", "--python", venv / "bin" / "python"]
        + ["-c", tmp_path / "pins.txt", f"{wheel}[langchain,llamaindex]", "pytest"],
        tmp_path,
    )
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), **server}
    # from an empty folder: nothing of the source tree is on the path, only the wheel
    out = run(
        [venv / "bin" / "python", "-m", "pytest", "-p", "no:randomly", "-rA"]
        + [ROOT / "clients" / "python" / "tests"],
        tmp_path,
        env,
    )
    site = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    assert f"docproc_client: {site}/site-packages/docproc_client/__init__.py" in out, out
    assert " passed" in out and "skipped" not in out, out


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm (Node.js) is not installed")
def test_the_typescript_package_passes_its_tests(server: dict[str, str], tmp_path: Path) -> None:
    with typescript_project() as project:
        # prepack builds dist/ (tsc); the tarball holds what npm would publish
        npm("pack", "--loglevel=error", "--pack-destination", tmp_path)
    (tarball,) = tmp_path.glob("docproc-client-*.tgz")
    consumer = tmp_path / "consumer"
    (consumer / "test").mkdir(parents=True)
    (consumer / "package.json").write_text(
        '{"name": "consumer", "private": true, "type": "module"}'
    )
    npm(
        "install",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        "--loglevel=error",
        tarball,
        cwd=consumer,
    )
    shutil.copy(project / "test" / "client.test.mjs", consumer / "test")
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), **server}
    out = run(["node", "--test", "test/client.test.mjs"], consumer, env)
    assert "# fail 0" in out and "# skipped 0" in out and "# pass 3" in out, out
