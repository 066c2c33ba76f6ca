"""The HTTP app factory every service uses: error envelope, health, readiness, metrics.

``/healthz`` says the process is alive. ``/readyz`` answers 503 unless every
readiness check (the database, and Kafka in a distributed deployment) passes.
``/metrics`` is the Prometheus exposition: on the app itself, or, when the deployment
gives it a port of its own (``HTTP__METRICS_PORT``), alone on ``metrics_app``. A lost database connection (reset,
``pg_terminate_backend``, a restart, a refused connect, an exhausted pool) and a
``RetryableError`` answer 503 with ``Retry-After``, never 500.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.applications import Starlette
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match, Route

from docproc_common.errors import (
    AppError,
    FieldError,
    RetryableError,
    Unavailable,
    UnprocessableEntity,
)

log = logging.getLogger(__name__)

ReadinessCheck = Callable[[], Awaitable[None]]


def _field_path(loc: Sequence[Any]) -> str:
    parts = [str(p) for p in loc]
    if parts and parts[0] in {"body", "query", "path", "header", "form"}:
        parts = parts[1:]
    return ".".join(parts)


async def _app_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AppError)
    return JSONResponse(exc.envelope(), status_code=exc.status_code, headers=exc.headers())


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    fields = [FieldError(_field_path(e["loc"]), e["msg"]) for e in exc.errors()]
    error = UnprocessableEntity("The request is not valid", fields=fields)
    return JSONResponse(error.envelope(), status_code=error.status_code)


_HTTP_CODES = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}
_METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")


def allowed_methods(request: Request) -> list[str]:
    """Every method some route of the app serves on the request's path.

    Starlette's own 405 names only the first route whose path matched; a path served by
    several routes (GET and PATCH and DELETE of ``/kb/{id}``) serves all their methods.
    Each method is asked of the app's routes as the router would ask (``matches``).
    """
    routes = request.app.router.routes
    return sorted(
        method
        for method in _METHODS
        if any(r.matches({**request.scope, "method": method})[0] is Match.FULL for r in routes)
    )


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    """No route for the path (404) or the method (405), in the error envelope."""
    assert isinstance(exc, StarletteHTTPException)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = ", ".join(allowed_methods(request))
    code = _HTTP_CODES.get(exc.status_code, "HTTP_ERROR")
    body = {"error": {"code": code, "message": str(exc.detail), "details": {}}}
    return JSONResponse(body, status_code=exc.status_code, headers=headers)


async def _retryable(_request: Request, exc: Exception) -> JSONResponse:
    log.warning("upstream unavailable: %r", exc)
    error = _upstream_unavailable()
    return JSONResponse(
        error.envelope(), status_code=error.status_code, headers={"Retry-After": "5"}
    )


def _upstream_unavailable() -> Unavailable:
    return Unavailable("An upstream service is unavailable; retry in a moment")


def _internal_error() -> AppError:
    return AppError("Internal server error")


def answer_for(exc: Exception) -> AppError:
    """The error the API answers ``exc`` with, for an edge that is not a route (the MCP
    tools): an ``AppError`` as it is; a ``RetryableError`` or a lost database as the retry
    later the routes answer; anything else as an internal error that says nothing more,
    logged here as the routes' handler logs it."""
    if isinstance(exc, AppError):
        return exc
    if isinstance(exc, RetryableError) or database_unreachable(exc):
        log.warning("upstream unavailable: %r", exc)
        return _upstream_unavailable()
    log.exception("unhandled error", exc_info=exc)
    return _internal_error()


def database_unreachable(exc: BaseException) -> bool:
    """The database connection was lost or could not be had (reset, terminated, restarting,
    refused, the pool exhausted): worth a retry, not the request's fault."""
    if isinstance(exc, DBAPIError):
        sqlstate = str(getattr(exc.orig, "sqlstate", "") or "")
        return exc.connection_invalidated or sqlstate.startswith(("08", "57P"))
    return isinstance(exc, PoolTimeout | ConnectionError)


#: SQLSTATEs of a transaction Postgres aborted for conflicting with another one: a deadlock
#: (``40P01``), a serialization failure (``40001``). Nothing of it was applied.
TRANSACTION_CONFLICTS = ("40P01", "40001")


def transaction_conflict(exc: BaseException) -> bool:
    """Postgres rolled the request's transaction back for conflicting with another
    (a reindex locking a base's rows while a stage records a failure, say): the same
    request again is the remedy, as the Postgres manual prescribes."""
    return isinstance(exc, DBAPIError) and (
        str(getattr(exc.orig, "sqlstate", "") or "") in TRANSACTION_CONFLICTS
    )


async def _database_error(request: Request, exc: Exception) -> JSONResponse:
    if database_unreachable(exc):
        return await _retryable(request, exc)
    if transaction_conflict(exc):
        log.warning("transaction rolled back on a conflict: %r", exc.orig)  # type: ignore[attr-defined]
        error = Unavailable("The request met a concurrent change and was not applied; retry it")
        return JSONResponse(
            error.envelope(), status_code=error.status_code, headers={"Retry-After": "1"}
        )
    return await _unexpected(request, exc)


async def _unexpected(_request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error", exc_info=exc)
    error = _internal_error()
    return JSONResponse(error.envelope(), status_code=error.status_code)


async def exposition(_request: Request) -> Response:
    """The Prometheus exposition of this process's registry."""
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


def metrics_app() -> Starlette:
    """``GET /metrics`` and nothing else: what the metrics port serves, so a scraper
    admitted there reaches no API route, and the API port serves no counters."""
    return Starlette(routes=[Route("/metrics", exposition, methods=["GET"])])


def ops_router(checks: Sequence[ReadinessCheck], *, metrics: bool = True) -> APIRouter:
    """``/healthz`` and ``/readyz`` (the probes), and ``/metrics`` unless it has a port of
    its own (``metrics=False``)."""
    router = APIRouter(include_in_schema=False)

    @router.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @router.get("/readyz")
    async def readyz() -> Response:
        failures: list[str] = []
        for check in checks:
            try:
                await check()
            except Exception as exc:  # noqa: BLE001 - any failure means not ready
                failures.append(f"{getattr(check, '__name__', 'check')}: {type(exc).__name__}")
        if failures:
            return JSONResponse({"status": "unavailable", "failures": failures}, status_code=503)
        return JSONResponse({"status": "ready"})

    if metrics:
        router.add_api_route("/metrics", exposition, methods=["GET"])
    return router


def create_app(
    *,
    title: str,
    lifespan: Callable[[FastAPI], AbstractAsyncContextManager[None]] | None = None,
    routers: Sequence[APIRouter] = (),
    checks: Sequence[ReadinessCheck] = (),
    metrics: bool = True,
) -> FastAPI:
    app = FastAPI(title=title, lifespan=lifespan)
    app.add_exception_handler(AppError, _app_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(RetryableError, _retryable)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    for database_error in (DBAPIError, PoolTimeout, ConnectionError):
        app.add_exception_handler(database_error, _database_error)
    app.add_exception_handler(Exception, _unexpected)
    app.include_router(ops_router(checks, metrics=metrics))
    for router in routers:
        app.include_router(router)
    # One server span per request, so the outbox stamps its events with this trace.
    app.add_middleware(
        OpenTelemetryMiddleware,
        excluded_urls="healthz,readyz,metrics",
        exclude_spans=["receive", "send"],
    )
    return app
