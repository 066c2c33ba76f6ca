"""Background loops: a failing tick backs off and logs once per change of state."""

from __future__ import annotations

import asyncio
import logging

import pytest
from docproc_common.periodic import FailureStreak, periodic


def test_the_wait_doubles_while_failing_up_to_the_ceiling_and_resets() -> None:
    streak = FailureStreak("x", logging.getLogger("t"))
    assert streak.wait_s(1.0) == 1.0
    waits = []
    for _ in range(12):
        streak.failed(RuntimeError("down"))
        waits.append(streak.wait_s(1.0, max_s=60))
    assert waits[:6] == [2, 4, 8, 16, 32, 60]
    assert set(waits[5:]) == {60}
    streak.recovered()
    assert streak.wait_s(1.0) == 1.0
    assert streak.wait_s(3600.0, max_s=60) == 3600.0  # never shorter than the interval


async def test_a_failing_loop_logs_each_change_of_state_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    outcomes: list[BaseException | None] = [
        *(RuntimeError("relation outbox does not exist") for _ in range(5)),
        *(ConnectionError("gone") for _ in range(3)),
        None,
        None,
    ]
    stop = asyncio.Event()

    async def tick() -> None:
        outcome = outcomes.pop(0)
        if not outcomes:
            stop.set()
        if outcome is not None:
            raise outcome

    logger = logging.getLogger("test.periodic")
    caplog.set_level(logging.INFO, logger="test.periodic")
    task = periodic("the probe", tick, 0.0001, logger, max_backoff_s=0.001)
    await asyncio.wait_for(task(stop), 10)
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "the probe failed (RuntimeError); backing off, logging again on a change of state",
        "the probe failed (ConnectionError); backing off, logging again on a change of state",
        "the probe recovered after 8 failed attempts",
    ]
    assert caplog.records[0].exc_info is not None  # the first of a streak has its traceback
