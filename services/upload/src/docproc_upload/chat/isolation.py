"""Binary formats are parsed in child processes, never in the API process's threads.

Why: PyMuPDF, openpyxl, python-docx, olefile and the archive walkers are CPU-bound
Python (or C that holds the GIL). In a thread they starve the event loop and every
other upload of the worker (the GIL is one per process), a crash in C takes the
whole API down with it, and a parse that never ends cannot be stopped. In a child
process each parse gets its own interpreter, an address-space ceiling, a lower
scheduling priority and a deadline after which it is killed.

Children are forked from a ``forkserver`` that has already imported the parsers, so
starting one costs milliseconds, not an interpreter start-up. They run at the lowest
scheduling priority (nice 19): on a busy host the API process and its small uploads
always come first, and a heavy parse takes longer instead (docs/benchmarks.md, "Chat
uploads"). Their deadline is therefore CPU time (``RLIMIT_CPU``), with a wall-clock
backstop of three times that. At most ``workers`` parses run at once (one waiting
thread each, on this pool and not the file-I/O pool); at most ``max_queue`` more may
wait, beyond that the upload is refused with 503.

This module is imported by the children: keep its imports to the standard library
and ``docproc_common.parsing``. The parsers themselves (``parsing.dispatch``: PyMuPDF,
the office libraries) are preloaded by the fork server and never imported by the API
process, which only detects and previews.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import multiprocessing
import os
import resource
import signal
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

from docproc_common.blocking import BlockingPool
from docproc_common.errors import Unavailable
from docproc_common.parsing import (
    ArchiveRefused,
    Detected,
    FileType,
    ParsedText,
    ParseLimits,
    ParsingRefused,
)
from docproc_common.parsing import errors as parsing_errors

log = logging.getLogger(__name__)

CHILD_NICENESS = 19
WALL_FACTOR = 3
_POLL_S = 0.05


def _child(
    conn: Connection,
    data: bytes,
    detected: Detected,
    limits: ParseLimits,
    memory_bytes: int,
    cpu_seconds: int,
) -> None:
    """The child's whole life: lowest priority, capped memory and CPU, parse, one answer."""
    with contextlib.suppress(OSError):
        os.nice(CHILD_NICENESS)
    with contextlib.suppress(ValueError, OSError):
        if memory_bytes > 0:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        # SIGXCPU at the soft limit is the answer; the hard limit (SIGKILL) is only a
        # fallback far enough above it that a late timer tick on a busy host never
        # delivers both at once and loses the reason.
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds * 2 + 5))
    from docproc_common.parsing.dispatch import parse  # preloaded by the fork server

    answer: tuple[Any, ...]
    try:
        answer = ("ok", parse(data, detected, limits))
    except ParsingRefused as exc:
        answer = ("refused", type(exc).__name__, exc.message)
    except MemoryError:
        answer = ("failed", "it needed more memory than a parse may use")
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, never raised here
        answer = ("failed", f"the parser failed ({type(exc).__name__})")
    try:
        conn.send(answer)
    finally:
        conn.close()


def _refusal(name: str, message: str) -> ParsingRefused:
    cls = getattr(parsing_errors, name, None)
    if isinstance(cls, type) and issubclass(cls, ParsingRefused):
        return cls(message)
    return ParsingRefused(message)


class _Cancelled(Exception):
    pass


class IsolatedParser:
    """``await parser.parse(data, detected, limits)`` in a child process, bounded and killable."""

    def __init__(
        self,
        workers: int,
        max_queue: int,
        timeout_s: float,
        memory_mb: int,
        name: str = "chat",
        wall_factor: float = WALL_FACTOR,
    ) -> None:
        self.workers = max(1, workers)
        self.max_queue = max(0, max_queue)
        self.timeout_s = timeout_s
        self.memory_bytes = max(0, memory_mb) * 2**20
        self.cpu_seconds = max(1, math.ceil(timeout_s))
        self.wall_s = timeout_s * wall_factor
        self._ctx = multiprocessing.get_context("forkserver")
        self._ctx.set_forkserver_preload(["__main__", __name__, "docproc_common.parsing.dispatch"])
        self._pool = BlockingPool(self.workers, name=f"docproc-{name}-parse")
        self._admitted = 0

    def close(self) -> None:
        self._pool.shutdown()

    async def parse(self, data: bytes, detected: Detected, limits: ParseLimits) -> ParsedText:
        """The parse's result; a ParsingRefused from the child is raised here.

        A child that crashes, runs out of memory or misses its deadline is killed; its
        file's text is reported unavailable, except for an archive, whose parse *is* its
        safety check: that upload is refused.
        """
        if self._admitted >= self.workers + self.max_queue:
            raise Unavailable("Too many files are being read right now; try again in a moment")
        self._admitted += 1
        cancel = threading.Event()
        try:
            answer = await self._pool.run(self._run, data, detected, limits, cancel)
        except asyncio.CancelledError:
            cancel.set()
            raise
        finally:
            self._admitted -= 1
        kind = answer[0]
        if kind == "ok":
            result = answer[1]
            assert isinstance(result, ParsedText)
            return result
        if kind == "refused":
            raise _refusal(answer[1], answer[2])
        reason = str(answer[1])
        if detected.file_type is FileType.ARCHIVE:
            raise ArchiveRefused(f"The archive could not be checked: {reason}")
        return ParsedText(text=None, note=f"The file could not be read: {reason}")

    def _run(
        self, data: bytes, detected: Detected, limits: ParseLimits, cancel: threading.Event
    ) -> tuple[Any, ...]:
        receiver, sender = self._ctx.Pipe(duplex=False)
        process = self._ctx.Process(
            target=_child,
            args=(sender, data, detected, limits, self.memory_bytes, self.cpu_seconds),
            daemon=True,
        )
        try:
            process.start()
            sender.close()
            deadline = time.monotonic() + self.wall_s
            while True:
                if receiver.poll(_POLL_S):
                    try:
                        answer: tuple[Any, ...] = receiver.recv()
                    except EOFError:  # the child died before answering
                        process.join(1)
                        if process.exitcode == -signal.SIGXCPU:
                            return ("failed", f"it used more than {self.timeout_s:g} s of CPU")
                        return ("failed", f"the parser stopped (exit code {process.exitcode})")
                    return answer
                if cancel.is_set():
                    return ("failed", "the upload was cancelled")
                if time.monotonic() > deadline:
                    log.warning("a %s parse ran past %g s", detected.extension, self.wall_s)
                    return ("failed", f"it took longer than {self.wall_s:g} s")
        finally:
            receiver.close()
            if process.is_alive():
                process.kill()
            process.join(5)
            with contextlib.suppress(ValueError):
                process.close()
