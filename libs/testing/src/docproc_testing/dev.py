"""``docproc dev`` as an OS process on a fresh database of the test Postgres, with local
storage and the local model: for the tests and benchmarks that drive the all-in-one the
way a user does (its HTTP API, its console)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from docproc_testing.db import create_test_database_sync
from docproc_testing.infra import find_repo_root, free_port, load_infra_env
from docproc_testing.processes import stop_group, wait_ready


@dataclass
class Dev:
    url: str
    log: Path
    tmp: Path
    database_url: str


@contextmanager
def running_dev(
    tmp: Path, *, embedded: bool = False, env: Mapping[str, str] | None = None
) -> Iterator[Dev]:
    """Start ``docproc dev`` with its home, media and log under ``tmp``; stop it (its whole
    process group) on exit.

    On a fresh database of the test Postgres, or with ``embedded`` on the all-in-one's own
    Postgres under ``tmp/home/pg`` (``database_url`` empty), which outlives the process: a
    benchmark that ingests a large corpus once keeps it there between runs. ``env`` adds
    settings of its own (a small intake bound).
    """
    environ = {
        **os.environ,
        "STORAGE__MEDIA_DIR": str(tmp / "media"),
        "DOCPROC_HOME": str(tmp / "home"),
        "EMBEDDER__MODEL_CACHE_DIR": str(find_repo_root() / ".cache" / "models"),
        **(env or {}),
    }
    database_url = ""
    if embedded:
        environ.pop("DATABASE__URL", None)
    else:
        database_url = create_test_database_sync(load_infra_env(("postgres",))["DATABASE__URL"])
        environ["DATABASE__URL"] = database_url
    port = free_port()
    log = tmp / "dev.log"
    with log.open("ab") as out:
        process = subprocess.Popen(
            [Path(sys.executable).parent / "docproc", "dev", "--port", str(port)],
            env=environ,
            cwd=tmp,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(process, url, log, "docproc dev", timeout=180)
        yield Dev(url, log, tmp, database_url)
    finally:
        stop_group(process)
