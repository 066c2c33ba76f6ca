"""The isolation runner (the parser's and chat's): a child's result, or a bounded failure;
never the caller's process. Each protection is shown on a real child: one that allocates
past its address space, spins past its CPU time, sleeps past the wall-clock backstop,
leaves a grandchild behind, writes temporary files, and calls waiting past the queue."""

from __future__ import annotations

import asyncio
import errno
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from docproc_common.errors import InvalidInput, Unavailable
from docproc_common.isolation import (
    ChildCrashed,
    ChildNoRoom,
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
    raise InvalidInput("The document is encrypted (EncryptedDocument)")


def crash_with(message: str) -> None:
    raise ValueError(message)


def sleep_with_grandchild(pidfile: str) -> None:
    """A child that starts its own long-running process (like soffice), then hangs."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    Path(pidfile).write_text(str(proc.pid))
    time.sleep(60)


def spin(_: object) -> None:
    while True:
        pass


def sleep(seconds: float) -> None:
    time.sleep(seconds)


def write_temp_files(_: object) -> list[str]:
    """Files where a parser would put them: ``tempfile``'s directory, the cwd, ``$HOME``."""
    written = [
        tempfile.NamedTemporaryFile(delete=False).name,  # noqa: SIM115 - left behind on purpose
        str(Path("scratch.bin").absolute()),
        str(Path(os.environ["HOME"], ".profile-of-soffice")),
    ]
    for name in written[1:]:
        Path(name).write_bytes(b"x" * 1024)
    return written


def write_big_file(size: int) -> None:
    """A first file that fits, then one of ``size`` bytes, in the child's directory."""
    Path("first.bin").write_bytes(b"x" * 1024)
    Path("big.bin").write_bytes(b"x" * size)


def niceness(_: object) -> int:
    return os.nice(0)


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


async def test_a_cpu_limit_stops_a_spinning_child_with_sigxcpu() -> None:
    runner = Isolation(memory_mb=512, max_concurrent=1, cpu_limit=True, wall_factor=60)
    try:
        with pytest.raises(ChildTimeout) as info:
            await runner.run(spin, None, timeout_s=1)
    finally:
        runner.close()
    assert (info.value.seconds, info.value.cpu) == (1, True)


async def test_the_wall_clock_backstops_a_child_that_uses_no_cpu() -> None:
    """A sleeping child never reaches its CPU limit: the backstop, ``wall_factor`` times
    the deadline, kills it."""
    runner = Isolation(memory_mb=512, max_concurrent=1, cpu_limit=True, wall_factor=2)
    started = time.monotonic()
    try:
        with pytest.raises(ChildTimeout) as info:
            await runner.run(sleep, 120, timeout_s=1)
    finally:
        runner.close()
    assert (info.value.seconds, info.value.cpu) == (2, False)
    assert time.monotonic() - started < 60


async def test_temporary_files_go_with_the_child(isolation: Isolation) -> None:
    written = await isolation.run(write_temp_files, None, timeout_s=60)
    assert len({str(Path(name).parent) for name in written}) == 1  # all in its work directory
    assert not any(Path(name).exists() for name in written)
    assert not Path(written[0]).parent.exists()


async def test_a_write_past_the_file_limit_is_no_room_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #14 F12: ``max_file_mb`` (RLIMIT_FSIZE) fails the write as a full disk does;
    the caller learns the temporary space had no room, and the half-written files go with
    the child's directory."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the runner makes it
    runner = Isolation(memory_mb=512, max_file_mb=1, max_concurrent=1)
    try:
        with pytest.raises(ChildNoRoom) as raised:
            await runner.run(write_big_file, 2 * 2**20, timeout_s=60)
        assert raised.value.no_room
        assert await runner.run(write_big_file, 2**19, timeout_s=60) is None
    finally:
        runner.close()
    # the calls' directories are gone (multiprocessing's own, of a fork server started
    # here, may stay)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("docproc-")] == []


async def test_a_temporary_directory_that_cannot_be_made_is_no_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolation: Isolation
) -> None:
    """A read-only or full ``TMPDIR`` is the host's trouble, said as such (not an OSError)."""

    def read_only(*_: object, **__: object) -> str:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkdtemp", read_only)
    with pytest.raises(ChildNoRoom) as raised:
        await isolation.run(square, 3, timeout_s=60)
    assert not raised.value.no_room


async def test_a_niceness_lowers_the_childs_priority() -> None:
    runner = Isolation(memory_mb=512, max_concurrent=1, niceness=19)
    try:
        assert await runner.run(niceness, None, timeout_s=60) == 19
    finally:
        runner.close()
    assert os.nice(0) < 19  # the caller's own priority is untouched


async def test_a_bounded_queue_refuses_at_once_when_full() -> None:
    """One child running and one call waiting: the third is refused with 503 without
    waiting, and the runner serves again once they are done."""
    runner = Isolation(memory_mb=512, max_concurrent=1, max_queue=1)
    try:
        running = asyncio.create_task(runner.run(sleep, 2, timeout_s=60))
        waiting = asyncio.create_task(runner.run(square, 4, timeout_s=60))
        await asyncio.sleep(0)
        with pytest.raises(Unavailable) as info:
            await runner.run(square, 5, timeout_s=60)
        assert info.value.status_code == 503
        assert info.value.message == runner.busy_message
        assert info.value.headers() == {"Retry-After": str(runner.retry_after_s)}
        await running
        assert await waiting == 16
        assert await runner.run(square, 6, timeout_s=60) == 36
    finally:
        runner.close()
