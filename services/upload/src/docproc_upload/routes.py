"""The route class of every public router (``PublicRoute``): the caller is known before
a JSON body is read, and a JSON body is read only up to ``LIMITS__MAX_JSON_BODY_BYTES``.

FastAPI reads and parses a route's JSON body before it solves the route's dependencies,
``Caller`` included: an unauthenticated client could make the process hold a body as
large as the upload cap (51 MiB), parsed. Here a route that takes a JSON body checks the
bearer token first (401 before a byte of the body is received) and refuses a body past
the JSON cap (413) while it streams in. An upload declares no body FastAPI reads: it
streams its multipart itself after its dependencies, under the upload caps
(``BodySizeLimit``, ``multipart.read_upload_form``). The console's routes are gated
alike (``settled_route``).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, MutableMapping
from typing import Any

from docproc_common.errors import PayloadTooLarge
from docproc_common.settings import Settings
from fastapi import Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from docproc_upload.bearer import principal_from_header
from docproc_upload.deps import caller, upload

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class PublicRoute(APIRoute):
    def get_route_handler(self) -> Handler:
        handle = super().get_route_handler()
        if self.body_field is None:
            return handle
        authenticated = depends_on(self.dependant, caller)

        async def gated(request: Request) -> Response:
            settings = await self.settings(request)
            if authenticated:
                principal_from_header(settings.auth, request.headers.get("authorization"))
            return await handle(await read_capped(request, settings.limits.max_json_body_bytes))

        return gated

    async def settings(self, request: Request) -> Settings:
        """The serving process's settings (its key, its JSON cap)."""
        return (await upload(request)).runtime.settings


def settled_route(settings: Settings) -> type[PublicRoute]:
    """``PublicRoute`` for a router built with its settings in hand (the console's, whose
    development sign-in takes a body from anyone and is held to the same JSON cap)."""

    class SettledRoute(PublicRoute):
        async def settings(self, request: Request) -> Settings:  # noqa: ARG002
            return settings

    return SettledRoute


def depends_on(dependant: Dependant, call: Callable[..., Any]) -> bool:
    """Whether ``call`` is among the dependencies of ``dependant``, at any depth."""
    return any(d.call is call or depends_on(d, call) for d in dependant.dependencies)


async def read_capped(request: Request, cap: int) -> Request:
    """``request`` with its body read, or ``PayloadTooLarge`` as soon as it passes ``cap``
    bytes (declared, or counted while it streams in): read here, so that the refusal is a
    413 of ours and not FastAPI's 400 for a body it could not read."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cap:
        raise _too_large(cap)
    received = 0

    async def receive() -> MutableMapping[str, Any]:
        nonlocal received
        message = await request.receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > cap:
                raise _too_large(cap)
        return message

    capped = Request(request.scope, receive)
    await capped.body()
    return capped


def _too_large(cap: int) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"The JSON body is larger than LIMITS__MAX_JSON_BODY_BYTES ({cap:,} bytes)"
    )
