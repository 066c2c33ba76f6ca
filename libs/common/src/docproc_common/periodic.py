"""Background loops that run for the life of a process: sweeps, gauges, the outbox relay.

A loop whose dependency is down (the database before the migration Job has run,
a broker restarting) fails on every tick. It must neither flood the log nor hammer
the dependency, and it must never stop the process. So a failing loop backs off,
doubling its wait up to a ceiling, and logs on a *change of state* only: the first
failure of a streak (with its traceback), a failure of a different kind during the
streak, and the recovery.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

Task = Callable[[asyncio.Event], Awaitable[None]]

MAX_BACKOFF_S = 300.0


class FailureStreak:
    """The state of one loop's consecutive failures: what to log, how long to wait."""

    def __init__(self, what: str, logger: logging.Logger) -> None:
        self._what = what
        self._log = logger
        self.failures = 0
        self._kind: str | None = None

    def failed(self, exc: BaseException) -> None:
        kind = type(exc).__name__
        self.failures += 1
        if kind != self._kind:
            self._kind = kind
            self._log.error(
                "%s failed (%s); backing off, logging again on a change of state",
                self._what,
                kind,
                exc_info=exc,
            )

    def recovered(self) -> None:
        if self.failures:
            self._log.warning("%s recovered after %d failed attempts", self._what, self.failures)
        self.failures = 0
        self._kind = None

    def wait_s(self, interval_s: float, max_s: float = MAX_BACKOFF_S) -> float:
        """``interval_s`` while healthy; doubled per failure of the streak, up to ``max_s``."""
        if not self.failures:
            return interval_s
        return max(interval_s, min(max_s, interval_s * 2.0 ** min(self.failures, 32)))


async def sleep_unless_stopped(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)


def periodic(
    what: str,
    tick: Callable[[], Awaitable[Any]],
    interval_s: float,
    logger: logging.Logger,
    *,
    max_backoff_s: float = MAX_BACKOFF_S,
) -> Task:
    """A task running ``tick`` every ``interval_s`` until stopped; failures back off and
    are logged once per change of state (see the module docstring)."""

    async def run(stop: asyncio.Event) -> None:
        streak = FailureStreak(what, logger)
        while not stop.is_set():
            try:
                await tick()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - a loop never stops the process
                streak.failed(exc)
            else:
                streak.recovered()
            await sleep_unless_stopped(stop, streak.wait_s(interval_s, max_backoff_s))

    return run
