"""What the two client modules share: ``clients/typescript``, which both write in (``npm ci``,
``npm run generate``, ``npm pack`` builds ``dist/``), held by one of them at a time (the
two may run at once on ``make test``'s two xdist workers)."""

from __future__ import annotations

import fcntl
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from docproc_testing.infra import find_repo_root

TYPESCRIPT = find_repo_root() / "clients" / "typescript"


def npm(*args: str | Path, cwd: Path = TYPESCRIPT) -> str:
    run = subprocess.run(
        ["npm", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, f"npm {' '.join(map(str, args))}:\n{run.stdout}\n{run.stderr}"
    return run.stdout


@contextmanager
def typescript_project() -> Iterator[Path]:
    """``clients/typescript`` with its lockfile's ``node_modules`` installed, held alone
    (an exclusive lock on ``.npm.lock`` in it) while the caller uses it."""
    with (TYPESCRIPT / ".npm.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (TYPESCRIPT / "node_modules" / ".package-lock.json").exists():
                npm("ci", "--no-audit", "--no-fund", "--loglevel=error")
            yield TYPESCRIPT
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
