"""The embedded all-in-one: five services in one process on the outbox bus.

Embedded Postgres (unless ``DATABASE__URL`` is given), local storage under
``DOCPROC_HOME``, the built-in local model, no Kafka. The handlers are the same
code that runs behind Kafka. The one module of the CLI that imports the services: each
one's ``app`` (its ``build``, what ``python -m docproc_<svc>`` runs), and upload's
development sign-in guard, checked before the embedded database starts
(``tests/test_layout.py``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from docproc_common.db.migrate import upgrade_async
from docproc_common.runtime import Runtime, ServiceSpec, serve
from docproc_common.settings import BusMode, Settings
from docproc_embedder.app import build as build_embedder
from docproc_parser.app import build as build_parser
from docproc_sync.app import build as build_sync
from docproc_teardown.app import build as build_teardown
from docproc_upload.app import build as build_upload
from docproc_upload.console import ExposedSignInError, dev_sign_in_guard

from docproc_cli.postgres import start_embedded_postgres

__all__ = ["BUILDERS", "ExposedSignInError", "dev_settings", "embedded_settings", "run_dev"]
BUILDERS = (build_upload, build_parser, build_embedder, build_sync, build_teardown)


def dev_settings(**http: Any) -> Settings:
    """The settings of ``docproc dev`` (and of the CLI on its data): ``ENV=dev`` whatever
    the environment says, so an unset key is the development one, on the embedded bus;
    ``http`` replaces HTTP settings. ``ExposedSignInError`` (before the embedded database
    starts) when the development sign-in would be reachable beyond this machine."""
    settings = Settings(env="dev")
    settings = settings.model_copy(
        update={
            "http": settings.http.model_copy(update=http),
            "bus": settings.bus.model_copy(update={"mode": BusMode.EMBEDDED}),
        }
    )
    dev_sign_in_guard(settings)
    return embedded_settings(settings)


def embedded_settings(settings: Settings) -> Settings:
    """Embedded bus, and the embedded database unless one is given."""
    database = settings.database
    if not database.url:
        database = database.model_copy(update={"url": start_embedded_postgres()})
    return settings.model_copy(
        update={
            "database": database,
            "bus": settings.bus.model_copy(update={"mode": BusMode.EMBEDDED}),
        }
    )


async def run_dev(settings: Settings, stop: asyncio.Event | None = None) -> None:
    await upgrade_async(settings.database.url)
    runtime = Runtime.create(settings)
    specs: list[ServiceSpec] = [build(runtime) for build in BUILDERS]
    try:
        await serve(runtime, specs, title="docproc", stop=stop)
    finally:
        await runtime.close()
