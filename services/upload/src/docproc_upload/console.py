"""``/console``: the web console's built assets, its settings, and the development sign-in.

The console (``services/upload/console``, Vite + TypeScript) is a static page that calls
the public ``/api/v1`` routes with the caller's bearer token, the same gateway JWT as
any client. Its assets are built by ``make console`` (``npm ci && npm run build``);
until they are, ``/console`` answers 503 with the command that builds them.

``POST /console/dev-token`` mints a development token with the configured key; it is
routed only in ``docproc dev`` (the embedded bus, ``ENV=dev``), never in the
distributed deployment, where the gateway signs people in. None of these routes is
part of the public API's OpenAPI.
"""

from __future__ import annotations

from pathlib import Path

from docproc_common.auth import EDIT, MAX_ID_LENGTH, SECRETS_VIEW, VIEW, mint_token
from docproc_common.errors import NotFound, Unavailable
from docproc_common.runtime import Runtime
from docproc_common.settings import BusMode, Settings
from fastapi import APIRouter
from fastapi.responses import FileResponse, RedirectResponse
from pydantic import BaseModel, ConfigDict, Field

#: Where ``npm run build`` writes the console: inside this package, so a wheel built after
#: ``make console`` (the images are) carries it (``artifacts`` in its pyproject).
DIST = Path(__file__).resolve().parent / "console_dist"
BUILD_HINT = (
    "The console is not built: run `make console` "
    "(npm ci && npm run build in services/upload/console)"
)
#: A development token lives a working day.
DEV_TOKEN_TTL_S = 12 * 3600


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
    """Only ``docproc dev`` (the embedded bus, ``ENV=dev``) mints tokens."""
    return settings.bus.mode == BusMode.EMBEDDED and settings.env == "dev"


def _asset(dist: Path, name: str) -> Path:
    """A file under ``dist``, never one outside it."""
    path = (dist / name).resolve()
    if not path.is_relative_to(dist.resolve()) or not path.is_file():
        raise NotFound("No such console asset")
    return path


def build_console_router(runtime: Runtime, dist: Path = DIST) -> APIRouter:
    settings = runtime.settings
    router = APIRouter(prefix="/console", include_in_schema=False)

    def index() -> FileResponse:
        page = dist / "index.html"
        if not page.is_file():
            raise Unavailable(BUILD_HINT)
        return FileResponse(page, headers={"Cache-Control": "no-cache"})

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
            headers={"Cache-Control": "public, max-age=31536000, immutable"},
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
