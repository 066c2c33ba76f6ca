"""Failure semantics shared by both transports: in-place retries, then retry, then dead letter.

A ``PermanentError`` (a payload that will never validate, a document that can
never be processed) goes straight to the dead-letter destination. Anything else
is retried in place with backoff, bounded (a ``RetryLater`` is not: it goes back at
once); after that the message is handed back to the transport for a delayed retry,
and past ``max_attempts`` it is dead-lettered. ``DlqGuard`` stops a consumer that starts dead-lettering
everything (a bad deploy), instead of quietly draining a topic into the DLQ.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass
from enum import StrEnum

from docproc_common.bus.delivery import Delivery, Subscription
from docproc_common.errors import PermanentError, RetryLater
from docproc_common.events import Event

log = logging.getLogger(__name__)


class Outcome(StrEnum):
    OK = "ok"
    RETRY = "retry"
    DLQ = "dlq"


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    in_place_retries: int = 3
    backoff_s: float = 0.5
    delay_s: float = 5.0
    max_attempts: int = 5


class DlqLimitExceededError(RuntimeError):
    """Raised to stop a consumer whose recent messages mostly went to the DLQ."""


class DlqGuard:
    def __init__(self, max_ratio: float, window: int) -> None:
        self._max_ratio = max_ratio
        self._recent: deque[bool] = deque(maxlen=window)

    def record(self, outcome: Outcome) -> None:
        self._recent.append(outcome is Outcome.DLQ)
        if len(self._recent) == self._recent.maxlen:
            ratio = sum(self._recent) / len(self._recent)
            if ratio > self._max_ratio:
                raise DlqLimitExceededError(
                    f"{ratio:.0%} of the last {len(self._recent)} messages were dead-lettered"
                )


@dataclass(frozen=True, slots=True)
class HandlingResult:
    outcome: Outcome
    error: BaseException | None = None


async def handle_with_retries(
    subscription: Subscription,
    raw: object,
    delivery: Delivery,
    policy: RetryPolicy,
) -> HandlingResult:
    """Decode and handle one message; classify what the transport must do next."""
    try:
        event: Event = subscription.decode(raw)  # type: ignore[arg-type]
    except PermanentError as exc:
        log.error(
            "dead-lettering undecodable message %s on %s: %s",
            delivery.event_id,
            delivery.topic,
            exc,
        )
        return HandlingResult(Outcome.DLQ, exc)
    last: BaseException | None = None
    for retry in range(policy.in_place_retries + 1):
        try:
            await subscription.handler(event, delivery)
            return HandlingResult(Outcome.OK)
        except PermanentError as exc:
            log.exception("permanent failure of %s on %s", delivery.event_id, delivery.topic)
            return await _dead_letter(subscription, event, delivery, exc)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every other failure is worth another attempt
            last = exc
            log.warning(
                "attempt %d.%d of %s on %s failed: %r",
                delivery.attempt,
                retry,
                delivery.event_id,
                delivery.topic,
                exc,
            )
            if isinstance(exc, RetryLater):
                break
            if retry < policy.in_place_retries:
                await asyncio.sleep(policy.backoff_s * 2**retry)
    if delivery.attempt >= policy.max_attempts:
        assert last is not None
        log.error(
            "dead-lettering %s after %d attempts",
            delivery.event_id,
            delivery.attempt,
            exc_info=last,
        )
        return await _dead_letter(subscription, event, delivery, last)
    return HandlingResult(Outcome.RETRY, last)


async def _dead_letter(
    subscription: Subscription, event: Event, delivery: Delivery, error: BaseException
) -> HandlingResult:
    """DLQ, once the stage has recorded the failure (``Subscription.give_up``); if recording
    fails, the event is retried instead, so no document is left in progress unrecorded."""
    if subscription.give_up is not None:
        try:
            await subscription.give_up(event, delivery, error)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the next delivery records it
            log.exception(
                "recording the failure of %s on %s failed", delivery.event_id, delivery.topic
            )
            return HandlingResult(Outcome.RETRY, exc)
    return HandlingResult(Outcome.DLQ, error)
