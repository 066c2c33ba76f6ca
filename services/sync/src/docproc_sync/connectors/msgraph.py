"""A Microsoft Graph client for a sync connector: an app-only token, throttling, bounded requests.

The token is the OAuth2 client-credentials grant, one plain call (``POST
{login}/{tenant}/oauth2/v2.0/token``, scope ``https://graph.microsoft.com/.default``) on
the same httpx client as every Graph request, rather than msal: msal is blocking
(``requests``) and would connect past the ``PinnedTransport`` that checks and pins every
address a source makes this deployment reach, and its instance discovery is a second
authority round trip for a token this client asks for once a run. The login and Graph
addresses are the deployment's (``SYNC__API_ENDPOINTS``' ``sharepoint`` and
``sharepoint_login``, for a national cloud or a stand-in), never a source's.

- **The token goes to Graph only.** Every link the client follows with it
  (``@odata.nextLink``, ``@odata.deltaLink``) must lie under the Graph base URL; a file's
  content answers 302 to a pre-authenticated download URL, which is fetched *without* the
  ``Authorization`` header (it is on another host, and the URL is its own credential).
- **Throttling.** 429 and 503 are retried ``MAX_ATTEMPTS`` times, waiting what
  ``Retry-After`` says (capped at ``MAX_WAIT_S``), or an exponential backoff with jitter
  when it says nothing; a timeout is retried the same way. Past that the call raises
  ``GraphUnavailableError`` — a listing ends incomplete on it, a document is a failed
  file. At most ``MAX_IN_FLIGHT`` requests of one connector are in flight at once.
- **Failures are named, never quoted.** A refused token is ``token refused:
  invalid_client`` (the OAuth error code), a Graph error is its ``error.code``
  (``InvalidAuthenticationToken``, ``accessDenied``, ``itemNotFound``); the descriptions,
  which name the tenant, the client id and the requested URL, are only the exception's
  cause, for the sync service's log.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

import httpx
from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.errors import ClientFailedError, ConnectorError, Subject
from docproc_common.egress.pinned import PinnedTransport
from docproc_common.vault import MsGraphAppValue

USER_AGENT = "docproc-sync"
SCOPE = "https://graph.microsoft.com/.default"
GRAPH_URL = "https://graph.microsoft.com/v1.0"
LOGIN_URL = "https://login.microsoftonline.com"
MAX_ATTEMPTS = 5
MAX_WAIT_S = 60.0
BACKOFF_S = 1.0
MAX_IN_FLIGHT = 4
RETRIED = {429, 503}
#: Graph's ``error.code`` and OAuth's ``error`` are symbols; anything else is only its status.
ERROR_CODE = re.compile(r"^[A-Za-z][A-Za-z0-9_.]{0,63}$")


class GraphFailedError(Exception):
    """The server's own answer (a description naming the tenant, a URL): a cause, logged only."""


class GraphUnavailableError(ClientFailedError):
    """Throttled (429/503) or timing out past every retry: the listing it cuts is incomplete."""


class DeltaGoneError(ClientFailedError):
    """410 Gone on a delta link (``resyncRequired``): the enumeration starts again from scratch."""


def retry_wait(header: str | None, attempt: int) -> float:
    """Seconds to wait before retry ``attempt`` (0-based): ``Retry-After`` (seconds or an HTTP
    date) when given, else an exponential backoff with jitter; never above ``MAX_WAIT_S``."""
    if header:
        value = header.strip()
        if value.isdigit():
            return min(float(value), MAX_WAIT_S)
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            when = None
        if when is not None:
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)
            return max(0.0, min((when - datetime.now(UTC)).total_seconds(), MAX_WAIT_S))
    backoff: float = min(BACKOFF_S * 2.0**attempt, MAX_WAIT_S)
    return backoff * (0.5 + random.random() / 2)  # noqa: S311


def _code(response: httpx.Response, body: bytes) -> tuple[str, str]:
    """Graph's ``error.code`` (or OAuth's ``error``) if it is a symbol, and the raw text for the log."""
    text = body[:2000].decode(errors="replace")
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    code: object = None
    if isinstance(doc, dict):
        error = doc.get("error")
        code = error.get("code") if isinstance(error, dict) else error
    if isinstance(code, str) and ERROR_CODE.fullmatch(code):
        return code, text
    return f"HTTP {response.status_code}", text


class GraphClient:
    """One connector's Graph session: its token, its httpx client, its request bound."""

    def __init__(
        self, app: MsGraphAppValue, options: ConnectorOptions, *, base: str, login: str
    ) -> None:
        self.app = app
        self.options = options
        self.base = base.rstrip("/")
        self.login = login.rstrip("/")
        self._http = httpx.AsyncClient(
            transport=PinnedTransport(allow_private=options.allow_private_networks),
            timeout=options.timeout_s,
            follow_redirects=False,
            headers={"User-Agent": USER_AGENT},
        )
        self._limit = asyncio.Semaphore(MAX_IN_FLIGHT)
        self._token: str | None = None
        self._expires = 0.0
        self._token_lock = asyncio.Lock()

    def url(self, *segments: str) -> str:
        """``{graph}/a/b`` with every segment percent-encoded (a name is never a path)."""
        return "/".join([self.base, *(quote(s, safe="") for s in segments)])

    def inside(self, url: str) -> bool:
        """Whether ``url`` lies under the Graph base URL (the only place the token goes)."""
        base, got = urlsplit(self.base), urlsplit(url)
        return (got.scheme, got.netloc) == (base.scheme, base.netloc) and (
            got.path == base.path or got.path.startswith(base.path.rstrip("/") + "/")
        )

    # -- the token ---------------------------------------------------------------------------

    async def token(self, *, renew: bool = False, subject: Subject = "source") -> str:
        async with self._token_lock:
            if renew or self._token is None or time.monotonic() > self._expires:
                self._token, self._expires = await self._acquire(subject)
            return self._token

    async def _acquire(self, subject: Subject) -> tuple[str, float]:
        url = f"{self.login}/{quote(self.app.tenant_id, safe='')}/oauth2/v2.0/token"
        form = {
            "grant_type": "client_credentials",
            "client_id": self.app.client_id,
            "client_secret": self.app.client_secret,
            "scope": SCOPE,
        }
        async with self._send("POST", url, subject=subject, data=form) as response:
            body = await response.aread()
            if response.status_code != 200:
                code, text = _code(response, body)
                raise ClientFailedError(
                    f"token refused: {code}", subject=subject
                ) from GraphFailedError(text)
            try:
                doc = response.json()
                token, lifetime = str(doc["access_token"]), float(doc.get("expires_in", 3599))
            except (ValueError, KeyError, TypeError) as exc:
                raise ClientFailedError(
                    "token refused: unreadable answer", subject=subject
                ) from exc
        return token, time.monotonic() + max(lifetime - 120.0, 30.0)

    # -- requests ----------------------------------------------------------------------------

    @asynccontextmanager
    async def _send(
        self, method: str, url: str, *, subject: Subject, bearer: str | None = None, **kw: Any
    ) -> AsyncIterator[httpx.Response]:
        """One request, retried on 429/503 and timeouts; the open (streamed) response."""
        headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
        async with self._limit:
            for attempt in range(MAX_ATTEMPTS):
                request = self._http.build_request(method, url, headers=headers, **kw)
                try:
                    response = await self._http.send(request, stream=True)
                except httpx.TimeoutException as exc:
                    if attempt + 1 == MAX_ATTEMPTS:
                        raise GraphUnavailableError("timed out", subject=subject) from exc
                    await asyncio.sleep(retry_wait(None, attempt))
                    continue
                except httpx.HTTPError as exc:
                    raise ClientFailedError(type(exc).__name__, subject=subject) from exc
                if response.status_code in RETRIED:
                    await response.aclose()
                    if attempt + 1 == MAX_ATTEMPTS:
                        raise GraphUnavailableError(
                            f"throttled: HTTP {response.status_code} {MAX_ATTEMPTS} times",
                            subject=subject,
                        )
                    await asyncio.sleep(retry_wait(response.headers.get("retry-after"), attempt))
                    continue
                try:
                    yield response
                finally:
                    await response.aclose()
                return

    @asynccontextmanager
    async def _authorized(self, url: str, *, subject: Subject) -> AsyncIterator[httpx.Response]:
        """A Graph GET with the bearer token; a 401 renews the token once (it may have expired)."""
        if not self.inside(url):
            raise ConnectorError("Microsoft Graph answered a link outside its own address")
        for renew in (False, True):
            bearer = await self.token(renew=renew, subject=subject)
            async with self._send("GET", url, subject=subject, bearer=bearer) as response:
                if response.status_code == 401 and not renew:
                    continue
                yield response
                return

    async def get(self, url: str, *, subject: Subject = "source") -> dict[str, Any]:
        """A Graph resource as JSON; any other answer is a ``ClientFailedError`` naming its code."""
        async with self._authorized(url, subject=subject) as response:
            body = await response.aread()
            if response.status_code != 200:
                code, text = _code(response, body)
                kind = DeltaGoneError if response.status_code == 410 else ClientFailedError
                raise kind(f"Microsoft Graph: {code}", subject=subject) from GraphFailedError(
                    f"{response.status_code} {text}"
                )
            doc = response.json()
        if not isinstance(doc, dict):
            raise ClientFailedError("Microsoft Graph: unreadable answer", subject=subject)
        return doc

    async def download(self, url: str, write: Callable[[bytes], Awaitable[None]]) -> int:
        """A driveItem's content: Graph answers 302 to a pre-authenticated URL, which is fetched
        *without* the token. Each chunk goes to ``write``; returns the bytes read."""
        async with self._authorized(url, subject="document") as response:
            if response.status_code == 200:
                return await _stream(response, write)
            location = response.headers.get("location")
            if response.status_code not in {301, 302, 303, 307, 308} or not location:
                code, text = _code(response, await response.aread())
                raise ClientFailedError(
                    f"Microsoft Graph: {code}", subject="document"
                ) from GraphFailedError(f"{response.status_code} {text}")
        target = urljoin(url, location)
        schemes = {"https", "http"} if self.options.allow_plain_http else {"https"}
        if urlsplit(target).scheme not in schemes:
            raise ConnectorError("Microsoft Graph redirected the download to a non-https address")
        async with self._send("GET", target, subject="document") as download:  # no bearer
            if download.status_code != 200:
                code, text = _code(download, await download.aread())
                raise ClientFailedError(
                    f"download refused: {code}", subject="document"
                ) from GraphFailedError(f"{download.status_code} {text}")
            return await _stream(download, write)

    async def aclose(self) -> None:
        await self._http.aclose()


async def _stream(response: httpx.Response, write: Callable[[bytes], Awaitable[None]]) -> int:
    size = 0
    try:
        async for chunk in response.aiter_bytes(1 << 20):
            await write(chunk)
            size += len(chunk)
    except httpx.HTTPError as exc:  # a stream cut half-way is this document's failure
        raise ClientFailedError(type(exc).__name__, subject="document") from exc
    return size
