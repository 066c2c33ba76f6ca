"""The parse child: its result, or a bounded failure; never the caller's process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from docproc_parser.engine.isolation import (
    ChildCrashed,
    ChildRaised,
    ChildTimeout,
    Isolation,
)


def square(n: int) -> int:
    return n * n


def allocate(mb: int) -> int:
    return len(bytearray(mb * 2**20))


def abort(_: object) -> None:
    os.abort()


def refuse(_: object) -> None:
    from docproc_parser.engine.errors import encrypted

    raise encrypted()


def crash_with(message: str) -> None:
    raise ValueError(message)


def sleep_with_grandchild(pidfile: str) -> None:
    """A child that starts its own long-running process (like soffice), then hangs."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    Path(pidfile).write_text(str(proc.pid))
    time.sleep(60)


def environment(_: object) -> dict[str, str]:
    return {k: os.environ.get(k, "") for k in ("HTTPS_PROXY", "HTTP_PROXY", "TMPDIR")} | {
        "cwd": os.getcwd(),
        "main": getattr(sys.modules.get("__main__"), "__name__", ""),
    }


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture(scope="module")
def isolation() -> Isolation:
    return Isolation(memory_mb=1024, max_concurrent=2, preload=[])


async def test_the_result_comes_back(isolation: Isolation) -> None:
    assert await isolation.run(square, 12, timeout_s=60) == 144


async def test_a_deadline_kills_the_whole_process_group(
    isolation: Isolation, tmp_path: Path
) -> None:
    pidfile = tmp_path / "grandchild.pid"
    started = time.monotonic()
    with pytest.raises(ChildTimeout):
        await isolation.run(sleep_with_grandchild, str(pidfile), timeout_s=3)
    assert time.monotonic() - started < 10
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild), "the child's own subprocess outlived the deadline"


async def test_memory_past_the_limit_fails_in_the_child(isolation: Isolation) -> None:
    with pytest.raises(ChildRaised) as info:
        await isolation.run(allocate, 2048, timeout_s=60)
    assert info.value.failure.type_name == "MemoryError"
    assert await isolation.run(allocate, 64, timeout_s=60) == 64 * 2**20  # the next one is fine


async def test_a_native_crash_is_reported_not_inherited(isolation: Isolation) -> None:
    with pytest.raises(ChildCrashed) as info:
        await isolation.run(abort, None, timeout_s=60)
    assert info.value.exitcode == -6  # SIGABRT
    assert await isolation.run(square, 3, timeout_s=60) == 9


async def test_exceptions_come_back_as_data(isolation: Isolation) -> None:
    with pytest.raises(ChildRaised) as info:
        await isolation.run(crash_with, "no such page", timeout_s=60)
    failure = info.value.failure
    assert (failure.type_name, failure.message, failure.refusal) == (
        "ValueError",
        "no such page",
        False,
    )
    with pytest.raises(ChildRaised) as refused:
        await isolation.run(refuse, None, timeout_s=60)
    assert refused.value.failure.refusal
    assert "(EncryptedDocument)" in refused.value.failure.message


async def test_the_child_is_offline_in_its_own_directory_without_main(
    isolation: Isolation,
) -> None:
    env = await isolation.run(environment, None, timeout_s=60)
    assert env["HTTPS_PROXY"] == env["HTTP_PROXY"] == "http://127.0.0.1:9"
    assert env["TMPDIR"] == env["cwd"]
    assert Path(env["cwd"]).name.startswith("docproc-parse-")
    assert not Path(env["cwd"]).exists(), "the work directory is removed after the child"
    assert env["main"] != "__mp_main__", "the parent's main module was re-imported"
