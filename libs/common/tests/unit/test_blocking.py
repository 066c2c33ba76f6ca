"""Blocking work runs off the request loop, on its own bounded pool (the seed's "El trabajo
bloqueante sale del bucle de peticiones, a su propio pool"): never asyncio's default
executor, which also carries password hashing and DNS, and never more than
``FILE_IO_MAX_WORKERS`` at once, so a burst of uploads queues behind the bound instead of
taking every worker."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from docproc_common.blocking import BlockingPool
from docproc_common.runtime import Runtime
from docproc_common.settings import DatabaseSettings, LimitSettings, Settings, StorageSettings


@pytest.fixture
def pool() -> Iterator[BlockingPool]:
    pool = BlockingPool(2, name="test-file-io")
    yield pool
    pool.shutdown()


async def test_work_runs_on_the_pools_own_threads(pool: BlockingPool) -> None:
    default = await asyncio.get_running_loop().run_in_executor(
        None, lambda: threading.current_thread().name
    )
    ours = await pool.run(lambda: threading.current_thread().name)
    assert ours.startswith("test-file-io")
    assert not default.startswith("test-file-io")


async def test_no_more_than_max_workers_run_at_once(pool: BlockingPool) -> None:
    lock, release = threading.Lock(), threading.Event()
    running, peak, started = 0, 0, 0

    def work() -> None:
        nonlocal running, peak, started
        with lock:
            running += 1
            started += 1
            peak = max(peak, running)
        release.wait(10)
        with lock:
            running -= 1

    tasks = [asyncio.ensure_future(pool.run(work)) for _ in range(5)]
    for _ in range(1000):  # until the pool is full
        if started == 2:
            break
        await asyncio.sleep(0.005)
    assert started == 2  # three wait their turn behind the bound
    release.set()
    await asyncio.gather(*tasks)
    assert (started, peak) == (5, 2)


async def test_a_process_builds_its_pool_from_the_setting_and_storage_uses_it(
    tmp_path: Path,
) -> None:
    settings = Settings(
        database=DatabaseSettings(url="postgresql+asyncpg://docproc@127.0.0.1:9/none"),
        storage=StorageSettings(media_dir=tmp_path),
        limits=LimitSettings(file_io_max_workers=3),
    )
    runtime = Runtime.create(settings)  # the engine connects lazily: nothing is reached
    try:
        assert runtime.pool.max_workers == 3
        await runtime.storage.put("a/b.txt", b"x")
        name = await runtime.pool.run(lambda: threading.current_thread().name)
        assert name.startswith("docproc-file-io")
        assert runtime.storage._pool is runtime.pool  # the wiring is the rule
    finally:
        await runtime.close()
