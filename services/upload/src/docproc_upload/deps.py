"""What every route of the public API is given: the process's services, the caller, a session.

``app.build`` makes one ``Upload`` per process and ``UploadScope`` hands it to each
request; the routes (module-level routers, one package per resource) name what they
need with the ``Annotated`` aliases below and never build their own.

The edge owns the transaction: a route that writes opens ``async with db.begin():``
around the service calls of one unit of work, and a service takes the session and
never commits. A route that must not hold a connection across slow I/O (storing an
upload's file, streaming a download) ends its transaction before it and opens another
after. ``Session`` is closed when the route returns, before the answer is sent.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

from docproc_common.auth import Principal
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.runtime import Runtime
from fastapi import Depends, Header, Request
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.bearer import principal_from_header
from docproc_upload.chat.service import ChatParser
from docproc_upload.intake import IntakeGuard
from docproc_upload.search.service import PlanCache

# anyio's asyncio backend, which FastAPI's cleanup scope around ``session`` needs, is
# loaded with the app: imported by a first request it held that request's event loop for
# a few hundred milliseconds (tests/integration/test_chat_first_upload.py).
importlib.import_module("anyio._backends._asyncio")

#: The key of ``Upload`` in the ASGI scope's ``state``.
STATE_KEY = "docproc_upload"


@dataclass(frozen=True, slots=True)
class Upload:
    """The upload service's long-lived parts, closed at shutdown (``app.build``)."""

    runtime: Runtime
    clients: EmbeddingClients
    #: How chat uploads are parsed (its child processes).
    chat: ChatParser
    intake: IntakeGuard
    #: The planner's estimates between searches (``search.service.search_collection``).
    plans: PlanCache

    @classmethod
    def create(cls, runtime: Runtime) -> Upload:
        return cls(
            runtime,
            EmbeddingClients(runtime.settings),
            ChatParser(runtime.settings.limits),
            IntakeGuard(runtime),
            PlanCache(),
        )

    async def close(self) -> None:
        await self.clients.aclose()
        await self.chat.close()


class UploadScope:
    """ASGI middleware: every request's ``state`` carries the process's ``Upload``."""

    def __init__(self, app: Any, upload: Upload) -> None:
        self.app = app
        self.upload = upload

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope.setdefault("state", {})[STATE_KEY] = self.upload
        await self.app(scope, receive, send)


async def upload(request: Request) -> Upload:
    found: Upload = getattr(request.state, STATE_KEY)
    return found


async def runtime(service: Annotated[Upload, Depends(upload)]) -> Runtime:
    return service.runtime


async def caller(
    rt: Annotated[Runtime, Depends(runtime)],
    authorization: Annotated[str | None, Header()] = None,
) -> Principal:
    return principal_from_header(rt.settings.auth, authorization)


async def session(rt: Annotated[Runtime, Depends(runtime)]) -> AsyncIterator[AsyncSession]:
    async with rt.sessionmaker() as db:
        yield db


UploadDep = Annotated[Upload, Depends(upload)]
RuntimeDep = Annotated[Runtime, Depends(runtime)]
Caller = Annotated[Principal, Depends(caller)]
Session = Annotated[AsyncSession, Depends(session, scope="function")]
