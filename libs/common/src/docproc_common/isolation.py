"""Run a call (a parse) in a child process, bounded and killable: one runner for the
parser's knowledge-base documents and upload's chat attachments.

One hostile file must not take a service down: a decompression bomb, a PDF that
makes MuPDF allocate without end, a spreadsheet LibreOffice chews on forever. Each
call therefore runs in its own child process that

* starts its own session (``os.setsid``), so the end of the call kills the whole
  group, LibreOffice's ``soffice.bin`` included, with one ``killpg``;
* caps its address space with ``RLIMIT_AS`` (an allocation past it fails inside
  the child: a ``MemoryError``, or an abort in native code, never the service), and
  optionally each file it writes with ``RLIMIT_FSIZE`` (``max_file_mb``: a write past
  it fails with ``EFBIG``, as on a full disk, instead of filling the host's);
* optionally runs at a lower scheduling priority (``niceness``: chat parses give way
  to the API process on a busy host) and
* optionally counts its deadline in CPU time (``cpu_limit``: ``RLIMIT_CPU``, SIGXCPU at
  the deadline) with a wall-clock backstop ``wall_factor`` times longer; otherwise the
  deadline is wall-clock time;
* points every HTTP proxy variable at a closed loopback port, so a library that
  would download something at run time (LiteParse fetches Tesseract language data
  it cannot find) fails fast instead of reaching the internet;
* works in a temporary directory (``TMPDIR``, ``HOME``, the cwd) the parent removes,
  whatever happened.

At most ``max_concurrent`` children run at once; with ``max_queue`` set, at most that
many more calls wait and the next is refused at once with 503 and ``Retry-After`` (``Busy``), the
API's answer; without it callers wait their turn (a consumer, which Kafka paces).

Children come from a ``forkserver`` whose preload has already imported the callers'
libraries (PyMuPDF alone takes seconds to import), so a child costs a fork, not an
interpreter start; see docs/benchmarks.md for the measured overhead. ``fork`` from the
service itself is not safe (its threads hold locks a child would inherit held) and
``spawn`` would pay the imports per call. There is one fork server per process
(multiprocessing's); its preload is the union of every runner's.

The child reports through a pipe: the function's result, or a :class:`ChildFailure`
(exception type name and message; the caller decides what to store). A child that
dies without reporting is :class:`ChildCrashed`; one past its deadline is killed (or
stopped by SIGXCPU) and reported as :class:`ChildTimeout`. A temporary directory that is
full or read-only (the parent's ``mkdtemp``, or a write in the child) is
:class:`ChildNoRoom`: the host's trouble, not the file's. Whatever the child wrote goes
with its directory.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import math
import multiprocessing
import multiprocessing.connection
import os
import resource
import shutil
import signal
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing import forkserver, popen_forkserver, spawn, util
from multiprocessing.context import reduction, set_spawning_popen  # type: ignore[attr-defined]
from typing import Any, Generic, TypeVar

from docproc_common.errors import NO_ROOM_ERRNOS, NOT_WRITABLE_ERRNOS, AppError, Busy

log = logging.getLogger(__name__)

J = TypeVar("J")
R = TypeVar("R")

#: Where the child's HTTP proxies point: nothing listens on the discard port.
_NOWHERE = "http://127.0.0.1:9"
#: The wall-clock backstop of a CPU-time deadline, as a multiple of it.
WALL_FACTOR = 3
#: What the process's one fork server imports before forking: every runner's preload.
_PRELOAD: list[str] = []


@dataclass(frozen=True, slots=True)
class ChildFailure:
    """An exception raised in the child, as plain data (exceptions do not all pickle)."""

    type_name: str
    message: str
    #: True for a refusal docproc wrote itself (an ``AppError``): its message is safe to show.
    refusal: bool
    status_code: int = 400
    #: An ``OSError``'s errno.
    errno: int | None = None


class ChildError(Exception):
    """Base of what :meth:`Isolation.run` raises when the child produced no result."""


class ChildTimeout(ChildError):
    """Past its deadline: ``seconds`` of CPU time (``cpu``) or of wall-clock time."""

    def __init__(self, seconds: float, *, cpu: bool = False) -> None:
        what = "of CPU" if cpu else ""
        super().__init__(f"the parse did not finish within {seconds:g} s {what}".rstrip())
        self.seconds = seconds
        self.cpu = cpu


class ChildCrashed(ChildError):
    """The child ended without reporting: killed by a signal (memory, a native crash) or exit."""

    def __init__(self, exitcode: int | None, memory_mb: int) -> None:
        how = (
            f"signal {signal.Signals(-exitcode).name}"
            if exitcode is not None and exitcode < 0
            else f"exit code {exitcode}"
        )
        super().__init__(f"the parser process ended with {how}")
        self.exitcode = exitcode
        self.memory_mb = memory_mb


class ChildNoRoom(ChildError):
    """The call's temporary directory is full or read-only (``no_room`` says which)."""

    def __init__(self, error: str, *, no_room: bool) -> None:
        super().__init__(
            f"the temporary directory is {'full' if no_room else 'read-only'}: {error}"
        )
        self.no_room = no_room


class ChildRaised(ChildError):
    def __init__(self, failure: ChildFailure) -> None:
        super().__init__(f"{failure.type_name}: {failure.message}")
        self.failure = failure


@dataclass(frozen=True, slots=True)
class _Call(Generic[J]):
    fn: Callable[[J], Any]
    job: J
    memory_bytes: int
    workdir: str
    niceness: int
    cpu_seconds: int | None
    file_bytes: int = 0


def _limit(kind: int, soft: int, hard: int | None = None) -> None:
    """Lower ``kind``'s soft limit to ``soft`` (and its hard one to ``hard``), never raising
    them past the hard limit the process was given."""
    _soft, ceiling = resource.getrlimit(kind)
    if ceiling != resource.RLIM_INFINITY:
        soft = min(soft, ceiling)
        hard = ceiling if hard is None else min(hard, ceiling)
    resource.setrlimit(kind, (soft, ceiling if hard is None else hard))


def _ready(_job: object) -> bool:
    return True


def child_cpu_seconds(_job: object) -> float:
    """CPU the child has used since its fork (rusage starts at zero in a forked child):
    what one isolated call costs besides its parse (``bench/parse.py``)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _child_main(conn: multiprocessing.connection.Connection, call: _Call[Any]) -> None:
    """Runs in the child: new session, limits, offline proxies, then the call; report, exit."""
    os.setsid()
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ):
        os.environ[name] = _NOWHERE
    for name in ("NO_PROXY", "no_proxy"):
        os.environ.pop(name, None)
    os.environ["TMPDIR"] = call.workdir
    os.environ["HOME"] = call.workdir  # LibreOffice writes its profile under $HOME
    tempfile.tempdir = call.workdir
    os.chdir(call.workdir)
    if call.niceness > 0:
        with contextlib.suppress(OSError):
            os.nice(call.niceness)
    if call.memory_bytes > 0:
        _limit(resource.RLIMIT_AS, call.memory_bytes)
    if call.file_bytes > 0:
        _limit(resource.RLIMIT_FSIZE, call.file_bytes)
    if call.cpu_seconds is not None:
        # SIGXCPU at the soft limit is the answer; the hard limit (SIGKILL) is only a
        # fallback far enough above it that a late timer tick on a busy host never
        # delivers both at once and loses the reason.
        _limit(resource.RLIMIT_CPU, call.cpu_seconds, call.cpu_seconds * 2 + 5)
    report: tuple[str, Any]
    try:
        report = ("ok", call.fn(call.job))
    except BaseException as exc:  # noqa: BLE001 - everything is reported, nothing escapes
        refusal = isinstance(exc, AppError)
        report = (
            "error",
            ChildFailure(
                type(exc).__name__,
                exc.message if isinstance(exc, AppError) else str(exc)[:2000],
                refusal,
                exc.status_code if isinstance(exc, AppError) else 500,
                exc.errno if isinstance(exc, OSError) else None,
            ),
        )
    try:
        conn.send(report)
    except BaseException as exc:  # noqa: BLE001 - e.g. MemoryError while pickling a huge result
        with contextlib.suppress(BaseException):
            conn.send(("error", ChildFailure(type(exc).__name__, str(exc)[:2000], False, 500)))
    conn.close()


class _LeanPopen(popen_forkserver.Popen):
    """The fork server's launcher without "re-import ``__main__`` in the child".

    multiprocessing re-runs the parent's main script (as ``__mp_main__``) in every
    child so that pickled functions defined there resolve. Nothing sent here lives in
    ``__main__``, and that import would cost every document the start-up of whatever
    entry point runs the service (the ``docproc`` CLI imports all five services). This
    is ``popen_forkserver.Popen._launch`` of CPython 3.11 with those two keys dropped.
    """

    def _launch(self, process_obj: Any) -> None:
        prep_data = spawn.get_preparation_data(process_obj._name)
        prep_data.pop("init_main_from_name", None)
        prep_data.pop("init_main_from_path", None)
        buf = io.BytesIO()
        set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            set_spawning_popen(None)
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)  # type: ignore[attr-defined]
        parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (parent_w, self.sentinel))  # type: ignore[attr-defined]
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _Child(multiprocessing.context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> _LeanPopen:  # noqa: N802 - multiprocessing's name
        return _LeanPopen(process_obj)


class Isolation:
    """Runs calls in bounded child processes; at most ``max_concurrent`` at once.

    Built once per process by its caller (the parser service's ``build``, upload's chat
    files) with that caller's options, and passed in; nothing here is a module global
    except the fork server multiprocessing itself keeps, and its preload.
    """

    def __init__(
        self,
        *,
        memory_mb: int = 2048,
        max_file_mb: int = 0,
        max_concurrent: int = 2,
        max_queue: int | None = None,
        cpu_limit: bool = False,
        wall_factor: float = WALL_FACTOR,
        niceness: int = 0,
        preload: Sequence[str] = (),
        name: str = "parse",
        busy_message: str = "Too many files are being read right now; try again in a moment",
        retry_after_s: int = 5,
    ) -> None:
        self.memory_mb = max(0, memory_mb)
        self.max_file_mb = max(0, max_file_mb)
        self.max_concurrent = max(1, max_concurrent)
        self.max_queue = None if max_queue is None else max(0, max_queue)
        self.cpu_limit = cpu_limit
        self.wall_factor = wall_factor
        self.niceness = niceness
        self.name = name
        self.busy_message = busy_message
        self.retry_after_s = retry_after_s
        self._ctx = multiprocessing.get_context("forkserver")
        _PRELOAD.extend(m for m in preload if m not in _PRELOAD)
        self._ctx.set_forkserver_preload(list(_PRELOAD))
        self._slots = asyncio.Semaphore(self.max_concurrent)
        self._admitted = 0
        # Process start talks to the fork server and recv() copies the result: both block,
        # so they get their own small pool instead of the file I/O pool.
        self._executor = ThreadPoolExecutor(
            max_workers=self.max_concurrent + 1, thread_name_prefix=f"docproc-{name}-isolation"
        )

    async def warm_up(self, timeout_s: float = 120) -> None:
        """Start the fork server and wait until its preload (the parsers) is imported.

        The first document would otherwise pay those seconds inside its own deadline.
        """
        await self.run(_ready, None, timeout_s=timeout_s)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def run(self, fn: Callable[[J], R], job: J, *, timeout_s: float) -> R:
        """``fn(job)`` in a child; its result, or a :class:`ChildError` subclass; with a
        ``max_queue``, :class:`Busy` (503 with ``Retry-After``) at once when that many calls
        already wait."""
        if self.max_queue is not None and self._admitted >= self.max_concurrent + self.max_queue:
            raise Busy(self.busy_message, retry_after_s=self.retry_after_s)
        self._admitted += 1
        try:
            async with self._slots:
                return await self._run(fn, job, timeout_s)
        finally:
            self._admitted -= 1

    async def _run(self, fn: Callable[[J], R], job: J, timeout_s: float) -> R:
        loop = asyncio.get_running_loop()
        try:
            workdir = tempfile.mkdtemp(prefix=f"docproc-{self.name}-")
        except OSError as exc:
            if exc.errno in NO_ROOM_ERRNOS | NOT_WRITABLE_ERRNOS:
                raise ChildNoRoom(str(exc), no_room=exc.errno in NO_ROOM_ERRNOS) from exc
            raise
        receiver, sender = self._ctx.Pipe(duplex=False)
        cpu_seconds = max(1, math.ceil(timeout_s)) if self.cpu_limit else None
        wall_s = timeout_s * self.wall_factor if self.cpu_limit else timeout_s
        call = _Call(
            fn,
            job,
            self.memory_mb * 2**20,
            workdir,
            self.niceness,
            cpu_seconds,
            self.max_file_mb * 2**20,
        )
        process = _Child(target=_child_main, args=(sender, call), daemon=True)
        try:
            await loop.run_in_executor(self._executor, process.start)
            sender.close()
            ready = loop.create_future()

            def on_readable() -> None:
                if not ready.done():
                    ready.set_result(None)

            loop.add_reader(receiver.fileno(), on_readable)
            try:
                await asyncio.wait_for(ready, wall_s)
            except TimeoutError:
                log.warning(
                    "a %s call ran past %g s; its process group is killed", self.name, wall_s
                )
                raise ChildTimeout(wall_s) from None
            finally:
                loop.remove_reader(receiver.fileno())
            try:
                status, value = await loop.run_in_executor(self._executor, receiver.recv)
            except (EOFError, OSError):
                await loop.run_in_executor(self._executor, process.join, 5)
                if cpu_seconds is not None and process.exitcode == -signal.SIGXCPU:
                    raise ChildTimeout(timeout_s, cpu=True) from None
                raise ChildCrashed(process.exitcode, self.memory_mb) from None
            if status == "ok":
                return value  # type: ignore[no-any-return]
            if value.errno in NO_ROOM_ERRNOS | NOT_WRITABLE_ERRNOS:
                raise ChildNoRoom(value.message, no_room=value.errno in NO_ROOM_ERRNOS)
            raise ChildRaised(value)
        finally:
            self._kill_session(process)
            receiver.close()
            shutil.rmtree(workdir, ignore_errors=True)
            # Collecting the child can wait a moment: never on the event loop.
            loop.run_in_executor(self._executor, self._collect, process)

    @staticmethod
    def _kill_session(process: Any) -> None:
        """Kill the child's whole session, a stray ``soffice`` included (no-op once all are gone)."""
        if process.pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)

    @staticmethod
    def _collect(process: Any) -> None:
        if process.pid is None:
            return
        process.join(5)
        if process.is_alive():  # it had not reached setsid(): kill it alone
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)
            process.join(5)
        with contextlib.suppress(ValueError):
            process.close()
