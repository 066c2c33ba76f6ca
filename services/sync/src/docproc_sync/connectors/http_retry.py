"""429 and 503 answered the way the remote asks: wait ``Retry-After``, else back off, a few times.

A REST source that throttles says how long to wait (``Retry-After``, in seconds or
as an HTTP date); without it the wait doubles from ``base_delay_s`` with jitter. A
wait longer than ``max_delay_s`` is not waited out: the last answer is returned, and
the caller decides what an unanswered request means (a listing that stops there is
incomplete and deletes nothing; a file that cannot be read is that file's failure).

``read_capped`` reads a streamed answer's body up to a bound, for a source whose answer
size is the remote's to choose (a crawled page, a REST answer).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

RETRIED = frozenset({429, 503})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    attempts: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0


def retry_after(response: httpx.Response, now: datetime | None = None) -> float | None:
    """The wait ``Retry-After`` asks for, in seconds (None: absent or unreadable)."""
    return parse_retry_after(response.headers.get("retry-after"), now)


def parse_retry_after(header: str | None, now: datetime | None = None) -> float | None:
    """A ``Retry-After`` value (delta-seconds or an HTTP date) in seconds from ``now``."""
    value = (header or "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def delay_for(response: httpx.Response, attempt: int, policy: RetryPolicy) -> float:
    """How long to wait before attempt ``attempt + 1``: the remote's word, else the backoff."""
    asked = retry_after(response)
    if asked is not None:
        return asked
    backoff: float = policy.base_delay_s * (2**attempt)
    return backoff * random.uniform(0.5, 1.0)  # noqa: S311 - jitter, not a secret


async def send(
    client: httpx.AsyncClient,
    request: Callable[[], httpx.Request],
    policy: RetryPolicy,
    *,
    follow_redirects: bool = False,
    stream: bool = False,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> httpx.Response:
    """Send ``request()`` (built afresh per attempt) until it is answered with something other
    than 429/503, the attempts run out, or the wait asked for is longer than the policy's.

    ``stream``: the answer's body is left unread (the caller reads and closes it)."""
    attempt = 0
    while True:
        response = await client.send(request(), follow_redirects=follow_redirects, stream=stream)
        if response.status_code not in RETRIED or attempt + 1 >= policy.attempts:
            return response
        delay = delay_for(response, attempt, policy)
        if delay > policy.max_delay_s:
            return response
        await response.aclose()
        await sleep(delay)
        attempt += 1


async def read_capped(response: httpx.Response, cap: int) -> bytes | None:
    """The body of a streamed answer, or None when it is longer than ``cap``."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
    return b"".join(chunks)
