"""The dedicated, bounded pool for blocking work: parsing and file I/O.

Never asyncio's default executor, which also carries password hashing and DNS:
a burst of uploads must not queue everything else behind an unbounded backlog.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class BlockingPool:
    def __init__(self, max_workers: int, name: str = "docproc-blocking") -> None:
        self.max_workers = max_workers
        self._executor = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix=name)

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        loop = asyncio.get_running_loop()
        ctx = contextvars.copy_context()
        call = functools.partial(ctx.run, fn, *args, **kwargs)
        return await loop.run_in_executor(self._executor, call)

    def shutdown(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
