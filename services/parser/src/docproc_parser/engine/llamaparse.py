"""The LlamaParse route: LlamaCloud's Parse API (v2 REST), billed per page.

Shape of the API (developers.llamaindex.ai, "REST API Guide"):

1. ``POST {base}/api/v2/parse/upload`` (multipart: ``file`` and a ``configuration``
   JSON string with ``tier``, ``version`` and options) answers the job: ``{"id", "status"}``.
2. ``GET {base}/api/v2/parse/{job_id}`` answers ``{"job": {"id", "status", ...}}``; the
   status goes ``PENDING``/``RUNNING`` to ``COMPLETED``, ``FAILED`` or ``CANCELLED``.
3. ``GET {base}/api/v2/parse/{job_id}?expand=markdown`` adds ``{"markdown": {"pages":
   [{"page_number", "markdown"}, ...]}}``.

Every call carries ``Authorization: Bearer <key>``; the key is the organization's
(a vault secret the collection names in ``llamaparse_secret_id``); there is none for
the deployment.

Page billing, in practice:

* ``page_ranges.max_pages`` is always sent (the collection's ``max_pages``), so no job
  can bill beyond what the collection would index;
* a submission is never repeated blindly: a connection that failed before the request
  went out is retried, but one that may have created a job (a timeout waiting for the
  answer) is not, and a redelivered event resumes the job it already created (the
  caller keeps the job id, see :class:`JobJournal`) instead of paying for a second one;
* polling and result reads are free and are retried; the wait is bounded by the
  collection's ``parse_timeout_seconds``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
from docproc_common.errors import RetryableError
from docproc_common.settings import LLAMAPARSE_BASE_URL

from docproc_parser.engine import errors

log = logging.getLogger(__name__)

TERMINAL = {"COMPLETED", "FAILED", "CANCELLED"}


class LlamaParseUnavailable(RetryableError):
    """LlamaParse did not answer, or answered 429/5xx: worth another attempt later."""


class _JobGone(Exception):
    """LlamaParse answers 404 for a job id it issued (results expire)."""


class JobJournal(Protocol):
    """Where the id of a submitted job survives a crash or a redelivery."""

    async def get(self) -> str | None: ...

    async def put(self, job_id: str) -> None: ...

    async def clear(self) -> None: ...


@dataclass(frozen=True, slots=True)
class LlamaParseText:
    pages: tuple[str, ...]
    """Each page's markdown, page 1 first (a page LlamaParse left out is empty); one text
    when the answer numbered no pages (``numbered`` is then false)."""
    billed: int
    job_id: str
    numbered: bool = True


class LlamaParseClient:
    def __init__(
        self,
        http: httpx.AsyncClient,
        api_key: str,
        *,
        base_url: str = LLAMAPARSE_BASE_URL,
        tier: str = "cost_effective",
        poll_interval_s: float = 1.0,
        max_poll_interval_s: float = 5.0,
    ) -> None:
        self._http = http
        self._base = base_url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {api_key}"}
        self._tier = tier
        self._poll = poll_interval_s
        self._max_poll = max_poll_interval_s

    async def parse(
        self,
        data: bytes,
        filename: str,
        *,
        max_pages: int,
        timeout_s: float,
        journal: JobJournal,
    ) -> LlamaParseText:
        deadline = time.monotonic() + timeout_s
        job_id = await journal.get()
        status: str | None = None
        if job_id:
            log.info("resuming LlamaParse job %s (already submitted, not billed again)", job_id)
            try:
                status = await self._wait(job_id, deadline, timeout_s)
            except _JobGone:
                log.info("LlamaParse no longer knows job %s; submitting again", job_id)
                await journal.clear()
                job_id = None
        if job_id is None:
            job_id = await self._submit(data, filename, max_pages)
            await journal.put(job_id)
        if status is None:
            status = await self._wait(job_id, deadline, timeout_s)
        if status != "COMPLETED":
            await journal.clear()
            raise errors.DocumentUnreadable(
                "LlamaParseJobFailed",
                f"LlamaParse ended the job as {status}; check that the file opens and is a "
                "format LlamaParse reads, then retry the upload",
                logged=True,
            )
        result = await self._get(job_id, expand="markdown")
        parsed = markdown_pages(result, max_pages, job_id)
        await journal.clear()
        log.info("LlamaParse job %s completed: %d pages billed", job_id, parsed.billed)
        return parsed

    async def _submit(self, data: bytes, filename: str, max_pages: int) -> str:
        configuration = {
            "tier": self._tier,
            "version": "latest",
            "page_ranges": {"max_pages": max_pages},
        }
        files = {"file": (filename, data, "application/octet-stream")}
        form = {"configuration": json.dumps(configuration)}
        url = f"{self._base}/api/v2/parse/upload"
        for attempt in range(4):
            try:
                response = await self._http.post(url, files=files, data=form, headers=self._headers)
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
                # Nothing reached LlamaParse: safe to try again.
                log.warning("LlamaParse unreachable (attempt %d): %r", attempt + 1, exc)
                if attempt == 3:
                    raise LlamaParseUnavailable("LlamaParse is unreachable") from exc
                await asyncio.sleep(0.5 * 2**attempt)
                continue
            except httpx.TransportError as exc:
                # The upload may have created a (billed) job: do not submit it again unasked.
                log.warning("LlamaParse upload interrupted: %r", exc)
                raise errors.DocumentUnreadable(
                    "LlamaParseUploadInterrupted",
                    "the upload to LlamaParse was interrupted after it was sent, and it was not "
                    "resent so as not to pay twice; retry the upload",
                    logged=True,
                ) from exc
            if response.status_code == 429:
                if attempt == 3:
                    raise LlamaParseUnavailable("LlamaParse is rate-limiting this key")
                await asyncio.sleep(_retry_after(response, 2.0 * 2**attempt))
                continue
            self._raise_for_status(response, "upload")
            job_id = _job_id(response.json())
            log.info(
                "LlamaParse job %s submitted for %s (max_pages=%d)", job_id, filename, max_pages
            )
            return job_id
        raise AssertionError("unreachable")

    async def _wait(self, job_id: str, deadline: float, timeout_s: float) -> str:
        interval = self._poll
        while True:
            job = (await self._get(job_id)).get("job") or {}
            status = str(job.get("status", "")).upper()
            if status in TERMINAL:
                if status != "COMPLETED":
                    log.warning(
                        "LlamaParse job %s ended %s: %s", job_id, status, job.get("error_message")
                    )
                return status
            if time.monotonic() + interval > deadline:
                log.warning("LlamaParse job %s still %s after %.0f s", job_id, status, timeout_s)
                raise errors.timed_out(timeout_s)
            await asyncio.sleep(interval)
            interval = min(interval * 1.5, self._max_poll)

    async def _get(self, job_id: str, expand: str | None = None) -> dict[str, Any]:
        url = f"{self._base}/api/v2/parse/{job_id}"
        params = {"expand": expand} if expand else None
        for attempt in range(4):
            try:
                response = await self._http.get(url, params=params, headers=self._headers)
            except httpx.TransportError as exc:
                log.warning("LlamaParse poll failed (attempt %d): %r", attempt + 1, exc)
                if attempt == 3:
                    raise LlamaParseUnavailable("LlamaParse did not answer") from exc
                await asyncio.sleep(0.5 * 2**attempt)
                continue
            if response.status_code == 429 or response.status_code >= 500:
                if attempt == 3:
                    raise LlamaParseUnavailable(f"LlamaParse answered {response.status_code}")
                await asyncio.sleep(_retry_after(response, 0.5 * 2**attempt))
                continue
            if response.status_code == 404:
                raise _JobGone(job_id)
            self._raise_for_status(response, "job")
            body = response.json()
            if not isinstance(body, dict):
                raise errors.DocumentUnreadable(
                    "LlamaParseResponseError",
                    "LlamaParse answered in an unexpected shape; retry the upload",
                )
            return body
        raise AssertionError("unreachable")

    @staticmethod
    def _raise_for_status(response: httpx.Response, what: str) -> None:
        status = response.status_code
        if status < 400:
            return
        log.warning("LlamaParse %s answered %d: %s", what, status, response.text[:500])
        if status in (401, 403):
            raise errors.DocumentUnreadable(
                "LlamaParseAuthenticationError",
                f"LlamaParse refused the collection's key (HTTP {status}); check the vault secret "
                "named by llamaparse_secret_id, then retry the upload",
            )
        if status == 402:
            raise errors.DocumentUnreadable(
                "LlamaParseCreditsExhausted",
                "the LlamaParse account behind llamaparse_secret_id has no credits left; top it up, "
                "then retry the upload",
            )
        if status >= 500:
            raise LlamaParseUnavailable(f"LlamaParse answered {status}")
        raise errors.DocumentUnreadable(
            "LlamaParseRejected",
            f"LlamaParse refused the file (HTTP {status}); check that it is a format LlamaParse "
            "reads and within its size limits, then retry the upload",
            logged=True,
        )


def markdown_pages(result: dict[str, Any], max_pages: int, job_id: str) -> LlamaParseText:
    """The pages of an ``expand=markdown`` answer, placed by their ``page_number``. An answer
    whose pages are not numbered 1 to ``max_pages`` in increasing order (or that has only
    ``markdown_full``) is kept as one text in the order given, with no page numbers."""
    block = result.get("markdown")
    listed = block.get("pages") if isinstance(block, dict) else None
    pages = [p for p in listed if isinstance(p, dict)] if isinstance(listed, list) else []
    texts = [str(p.get("markdown") or p.get("md") or "").strip("\n") for p in pages]
    if not pages and isinstance(result.get("markdown_full"), str):
        return LlamaParseText((result["markdown_full"],), 0, job_id, numbered=False)
    given = [p.get("page_number") for p in pages]
    numbers = [n for n in given if type(n) is int and 1 <= n <= max_pages]
    if len(numbers) < len(given) or any(a >= b for a, b in itertools.pairwise(numbers)):
        return LlamaParseText(("\n\n".join(texts),), len(pages), job_id, numbered=False)
    placed = [""] * (numbers[-1] if numbers else 0)
    for number, text in zip(numbers, texts, strict=True):
        placed[number - 1] = text
    return LlamaParseText(tuple(placed), len(pages), job_id)


def _job_id(body: Any) -> str:
    if isinstance(body, dict):
        job = body.get("job") if isinstance(body.get("job"), dict) else body
        if isinstance(job, dict) and job.get("id"):
            return str(job["id"])
    raise errors.DocumentUnreadable(
        "LlamaParseResponseError", "LlamaParse did not answer with a job id; retry the upload"
    )


def _retry_after(response: httpx.Response, default: float) -> float:
    try:
        return min(60.0, max(0.0, float(response.headers.get("retry-after", default))))
    except ValueError:
        return default
