"""A service run as an OS process of its own (``start_new_session=True``, its output in a
log file), as the e2e harness, ``docproc_testing.dev`` and the benchmarks start them: waiting
until it is ready, stopping its whole process group."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import httpx


def wait_ready(
    process: subprocess.Popen[bytes], url: str, log: Path, what: str, timeout: float = 120
) -> None:
    """Until ``url``'s ``/readyz`` answers 200; the log's tail in the error if ``what`` exits
    first or is not ready within ``timeout`` seconds (generous: it only bounds a wait)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise TimeoutError(f"{what} not ready:\n{log.read_text()[-3000:]}")


def stop_group(process: subprocess.Popen[bytes], grace: float = 30) -> None:
    """SIGTERM to the process group, SIGKILL if it still runs after ``grace`` seconds."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
