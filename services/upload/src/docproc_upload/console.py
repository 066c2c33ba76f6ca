"""``/console``: the web console's built assets, its settings, and the development sign-in.

The console (``services/upload/console``, Vite + TypeScript) is a static page that calls
the public ``/api/v1`` routes with the caller's bearer token, the same gateway JWT as
any client. Its assets are built by ``make console`` (``npm ci && npm run build``);
until they are, ``/console`` answers 503 with the command that builds them.

``POST /console/dev-token`` mints a development token with the configured key; it is
routed only in ``docproc dev`` (the embedded bus, ``ENV=dev``), never in the
distributed deployment, where the gateway signs people in. None of these routes is
part of the public API's OpenAPI.

While the sign-in is on, anyone who reaches the port is an app admin, so docproc dev
binds a loopback address only (``dev_sign_in_guard``) and answers only requests that
name it by a loopback name or the name it is bound to (``LocalRequestsOnly``): a web page
whose name is rebound to 127.0.0.1 (DNS rebinding) gets nothing from it.
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path
from typing import Any

from docproc_common.auth import EDIT, MAX_ID_LENGTH, SECRETS_VIEW, VIEW, mint_token
from docproc_common.errors import Forbidden, NotFound, Unavailable
from docproc_common.runtime import Runtime
from docproc_common.settings import BusMode, Settings
from fastapi import APIRouter
from fastapi.responses import FileResponse, RedirectResponse
from pydantic import BaseModel, ConfigDict, Field

from docproc_upload.asgi import send_error
from docproc_upload.routes import settled_route

#: Where ``npm run build`` writes the console: inside this package, so a wheel built after
#: ``make console`` (the images are) carries it (``artifacts`` in its pyproject).
DIST = Path(__file__).resolve().parent / "console_dist"
BUILD_HINT = (
    "The console is not built: run `make console` "
    "(npm ci && npm run build in services/upload/console)"
)
#: A development token lives a working day.
DEV_TOKEN_TTL_S = 12 * 3600
#: What every console file is sent with: no other site may frame the page (clickjacking
#: the sign-in or a delete), no response is sniffed into another type, and the page runs
#: only its own scripts and styles and talks only to its own origin (an injected
#: ``<script>`` or inline handler does not run).
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
    "Referrer-Policy": "no-referrer",
}


class ConsoleConfig(BaseModel):
    """What the page needs before its first API call."""

    dev_sign_in: bool
    max_upload_size_mb: int
    chat_max_upload_size_mb: int


class DevTokenRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: str = Field(min_length=1, max_length=MAX_ID_LENGTH, pattern=r"^[^\x00]+$")
    organization_id: str | None = Field(
        default=None, max_length=MAX_ID_LENGTH, pattern=r"^[^\x00]*$"
    )
    app_admin: bool = False


class DevTokenOut(BaseModel):
    token: str
    expires_in: int


def dev_sign_in(settings: Settings) -> bool:
    """Only ``docproc dev`` (the embedded bus, ``ENV=dev``) mints tokens, unless told not to
    (``HTTP__DEV_SIGN_IN=false``, ``docproc dev --no-dev-sign-in``)."""
    return (
        settings.bus.mode == BusMode.EMBEDDED
        and settings.env == "dev"
        and settings.http.dev_sign_in
    )


class ExposedSignInError(ValueError):
    """The development sign-in on an address other machines reach."""


def dev_sign_in_guard(settings: Settings) -> list[tuple[Any, dict[str, Any]]]:
    """The middleware the development sign-in needs (none while it is off); an
    ``ExposedSignInError`` when the server would listen beyond this machine with it on."""
    if not dev_sign_in(settings):
        return []
    host = settings.http.host
    if not loopback_bind(host):
        raise ExposedSignInError(
            f"docproc dev would listen on {host}, beyond this machine, while its console "
            "mints app_admin tokens for anyone who asks (POST /console/dev-token): bind a "
            "loopback address (--host 127.0.0.1), or turn the sign-in off "
            "(--no-dev-sign-in, HTTP__DEV_SIGN_IN=false) and sign in with `docproc token`"
        )
    return [(LocalRequestsOnly, {"bound": host})]


def loopback_bind(host: str) -> bool:
    """Whether every address ``host`` resolves to is a loopback one (0.0.0.0 is not)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(found) and all(ipaddress.ip_address(a[4][0]).is_loopback for a in found)


def host_name(header: str) -> str:
    """The name a ``Host`` header gives, lower case, without its port or a final dot:
    ``LocalHost.:8000`` -> ``localhost``, ``[::1]:8000`` -> ``::1``."""
    header = header.strip().lower()
    if header.startswith("["):
        header = header[1:].partition("]")[0]
    elif header.count(":") == 1:
        header = header.partition(":")[0]
    return header.rstrip(".")


def loopback_name(name: str) -> bool:
    """``localhost`` or a loopback address: names no DNS answer can send elsewhere."""
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class LocalRequestsOnly:
    """ASGI middleware of ``docproc dev`` while its sign-in is on: a request whose ``Host``
    is neither a loopback name nor the name the server is bound to is refused (403)
    before any route runs. A browser sends the page's own name as ``Host``, so a page
    whose name an attacker rebinds to 127.0.0.1 reaches docproc dev only to be refused."""

    def __init__(self, app: Any, bound: str) -> None:
        self.app = app
        self.bound = host_name(bound)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
            name = host_name(host)
            if not (loopback_name(name) or name == self.bound):
                await send_error(
                    send,
                    Forbidden(
                        f"docproc dev answers only requests to a loopback name or {self.bound}"
                        f", not to Host {host!r}: open it as http://127.0.0.1 or "
                        "http://localhost"
                    ),
                )
                return
        await self.app(scope, receive, send)


def _asset(dist: Path, name: str) -> Path:
    """A file under ``dist``, never one outside it."""
    path = (dist / name).resolve()
    if not path.is_relative_to(dist.resolve()) or not path.is_file():
        raise NotFound("No such console asset")
    return path


def build_console_router(runtime: Runtime, dist: Path = DIST) -> APIRouter:
    settings = runtime.settings
    router = APIRouter(
        prefix="/console", include_in_schema=False, route_class=settled_route(settings)
    )

    def index() -> FileResponse:
        page = dist / "index.html"
        if not page.is_file():
            raise Unavailable(BUILD_HINT)
        return FileResponse(page, headers={"Cache-Control": "no-cache", **SECURITY_HEADERS})

    @router.get("")
    async def console_root() -> RedirectResponse:
        return RedirectResponse("/console/")

    @router.get("/")
    async def console_page() -> FileResponse:
        return index()

    @router.get("/config.json", response_model=ConsoleConfig)
    async def console_config() -> ConsoleConfig:
        return ConsoleConfig(
            dev_sign_in=dev_sign_in(settings),
            max_upload_size_mb=settings.limits.max_upload_size_mb,
            chat_max_upload_size_mb=settings.limits.chat_max_upload_size_mb,
        )

    @router.get("/assets/{name:path}")
    async def console_asset(name: str) -> FileResponse:
        return FileResponse(
            _asset(dist / "assets", name),
            headers={"Cache-Control": "public, max-age=31536000, immutable", **SECURITY_HEADERS},
        )

    if dev_sign_in(settings):

        @router.post("/dev-token", response_model=DevTokenOut)
        async def dev_token(body: DevTokenRequest) -> DevTokenOut:
            """A development token for the console's sign-in (``docproc dev`` only)."""
            token = mint_token(
                settings.auth,
                user_id=body.user_id,
                organization_id=body.organization_id or None,
                permissions=[VIEW, EDIT, SECRETS_VIEW],
                app_admin=body.app_admin,
                ttl_s=DEV_TOKEN_TTL_S,
            )
            return DevTokenOut(token=token, expires_in=DEV_TOKEN_TTL_S)

    return router
