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

The child process, its limits and the queue are ``docproc_common.isolation``'s (the
parser's runner too, with the options here: CPU-time deadline, nice 19, a bounded
queue, plus the process-group kill, the offline proxies and the temporary directory
every child gets). This module is imported by the children: keep its imports to the
standard library, ``docproc_common.isolation`` and ``docproc_common.parsing``. The
parsers themselves (``parsing.dispatch``: PyMuPDF, the office libraries) are preloaded
by the fork server and never imported by the API process, which only detects and
previews.
"""

from __future__ import annotations

from docproc_common.isolation import (
    WALL_FACTOR,
    ChildCrashed,
    ChildNoRoom,
    ChildRaised,
    ChildTimeout,
    Isolation,
)
from docproc_common.parsing import (
    ArchiveRefused,
    Detected,
    FileType,
    ParsedText,
    ParseLimits,
    ParsingRefused,
)
from docproc_common.parsing import errors as parsing_errors

CHILD_NICENESS = 19


def _parse(job: tuple[bytes, Detected, ParseLimits]) -> ParsedText:
    """In the child: the parse itself."""
    from docproc_common.parsing.dispatch import parse  # preloaded by the fork server

    return parse(*job)


def _refusal(name: str, message: str) -> ParsingRefused:
    cls = getattr(parsing_errors, name, None)
    if isinstance(cls, type) and issubclass(cls, ParsingRefused):
        return cls(message)
    return ParsingRefused(message)


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
        self.timeout_s = timeout_s
        self._isolation = Isolation(
            memory_mb=memory_mb,
            max_concurrent=workers,
            max_queue=max_queue,
            cpu_limit=True,
            wall_factor=wall_factor,
            niceness=CHILD_NICENESS,
            preload=[__name__, "docproc_common.parsing.dispatch"],
            name=name,
            busy_message="Too many files are being read right now; try again in a moment",
        )

    def close(self) -> None:
        self._isolation.close()

    async def parse(self, data: bytes, detected: Detected, limits: ParseLimits) -> ParsedText:
        """The parse's result; a ParsingRefused from the child is raised here.

        A child that crashes, runs out of memory or misses its deadline is killed (or finds
        its temporary space full or read-only); its
        file's text is reported unavailable, except for an archive, whose parse *is* its
        safety check: that upload is refused. A full queue raises ``Unavailable`` (503).
        """
        try:
            return await self._isolation.run(
                _parse, (data, detected, limits), timeout_s=self.timeout_s
            )
        except ChildRaised as exc:
            failure = exc.failure
            if failure.refusal:
                raise _refusal(failure.type_name, failure.message) from None
            reason = (
                "it needed more memory than a parse may use"
                if failure.type_name == "MemoryError"
                else f"the parser failed ({failure.type_name})"
            )
        except ChildTimeout as exc:
            reason = (
                f"it used more than {exc.seconds:g} s of CPU"
                if exc.cpu
                else f"it took longer than {exc.seconds:g} s"
            )
        except ChildCrashed as exc:
            reason = f"the parser stopped (exit code {exc.exitcode})"
        except ChildNoRoom as exc:
            reason = f"the server's temporary space is {'full' if exc.no_room else 'read-only'}"
        if detected.file_type is FileType.ARCHIVE:
            raise ArchiveRefused(f"The archive could not be checked: {reason}")
        return ParsedText(text=None, note=f"The file could not be read: {reason}")
