"""Helpers of the chat-upload integration tests: an app on a fresh database, and probes."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from docproc_common.auth import mint_token
from docproc_common.runtime import Runtime, build_app
from docproc_common.settings import (
    DatabaseSettings,
    LimitSettings,
    Settings,
    StorageBackend,
    StorageSettings,
)
from docproc_common.storage import S3Storage
from docproc_testing.auth import DEV_AUTH
from docproc_testing.db import fetch
from docproc_upload.app import build
from docproc_upload.chat.service import owner_segment


def token(user: str, **claims: Any) -> str:
    return mint_token(DEV_AUTH, user_id=user, **claims)


def auth(user: str, **claims: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {token(user, **claims)}"}


@dataclass
class ChatApi:
    client: httpx.AsyncClient
    runtime: Runtime
    backend: str
    database_url: str

    async def upload(
        self,
        user: str,
        filename: str,
        data: bytes,
        mime: str | None = "application/octet-stream",
        unit: str | None = None,
    ) -> httpx.Response:
        form = {"organizational_unit": unit} if unit is not None else None
        part: tuple[Any, ...] = (filename, data) if mime is None else (filename, data, mime)
        return await self.client.post(
            "/api/v1/files/upload", files={"file": part}, data=form, headers=auth(user)
        )

    async def fetch(self, sql: str, *args: Any) -> list[asyncpg.Record]:
        return await fetch(self.database_url, sql, *args)

    async def rows(self, user: str) -> int:
        rows = await self.fetch("SELECT count(*) AS n FROM chat_files WHERE user_id = $1", user)
        return int(rows[0]["n"])

    async def events(self) -> int:
        rows = await self.fetch("SELECT count(*) AS n FROM outbox")
        return int(rows[0]["n"])

    def keys(self, prefix: str) -> list[str]:
        """Every stored key under ``prefix`` (relative to the store's root)."""
        storage = self.runtime.storage.sync
        if isinstance(storage, S3Storage):
            full = f"{storage.prefix}/{prefix}" if storage.prefix else prefix
            listed = storage.client.list_objects_v2(Bucket=storage.bucket, Prefix=full)
            cut = len(storage.prefix) + 1 if storage.prefix else 0
            return sorted(o["Key"][cut:] for o in listed.get("Contents", []))
        root = Path(storage.root)  # type: ignore[attr-defined]
        base = root / prefix
        if not base.exists():
            return []
        return sorted(str(p.relative_to(root)) for p in base.rglob("*") if p.is_file())

    def stored(self, user: str) -> list[str]:
        return self.keys(owner_segment(user) + "/")

    def workspace(self, user: str, agent: str, conversation: str) -> list[str]:
        root = f"workspaces/{owner_segment(user)}/{agent}/{conversation}/"
        return [k[len(root) :] for k in self.keys(root)]


def make_settings(
    database_url: str,
    infra: dict[str, str],
    backend: str,
    tmp: Path,
    storage_options: dict[str, Any] | None = None,
    **limits: Any,
) -> Settings:
    if backend == "s3":
        storage = StorageSettings(
            backend=StorageBackend.S3,
            s3_bucket=infra["STORAGE__S3_BUCKET"],
            s3_endpoint_url=infra["STORAGE__S3_ENDPOINT_URL"],
            s3_prefix=f"chat-{uuid.uuid4().hex[:10]}",
            **(storage_options or {}),
        )
    else:
        storage = StorageSettings(media_dir=tmp / f"media-{uuid.uuid4().hex[:6]}")
    return Settings(
        database=DatabaseSettings(url=database_url, pool_size=5, max_overflow=5),
        storage=storage,
        limits=LimitSettings(**limits),
    )


@asynccontextmanager
async def chat_api(
    database_url: str,
    infra: dict[str, str],
    backend: str,
    tmp: Path,
    storage_options: dict[str, Any] | None = None,
    **limits: Any,
) -> AsyncIterator[ChatApi]:
    settings = make_settings(database_url, infra, backend, tmp, storage_options, **limits)
    runtime = Runtime.create(settings)
    spec = build(runtime)
    app = build_app(runtime, [spec], [], "t")
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1", timeout=120
        ) as client:
            yield ChatApi(client, runtime, backend, database_url)
    finally:
        for hook in spec.on_shutdown:
            await hook()
        await runtime.close()


#: ``async with local_api(**limits) as api``: an app of one test's own over the local store,
#: with those limits (the ``local_api`` fixture).
LocalApi = Callable[..., AbstractAsyncContextManager[ChatApi]]


def raw_multipart(filename: bytes, data: bytes, content_type: str) -> tuple[bytes, str]:
    """A multipart body with the file name's bytes exactly as given (NUL, bidi, ...)."""
    boundary = f"chat-{uuid.uuid4().hex}"
    body = (
        f"--{boundary}\r\n".encode()
        + b'Content-Disposition: form-data; name="file"; filename="'
        + filename
        + b'"\r\n'
        + f"Content-Type: {content_type}\r\n\r\n".encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return body, f"multipart/form-data; boundary={boundary}"


class HookedStorage:
    """A real store whose ``put`` first calls ``hook(key)`` (to fail, wait or count)."""

    def __init__(self, inner: Any, hook: Any) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.encrypted = inner.encrypted
        self.hook = hook
        self.puts: list[str] = []

    def put(self, key: str, data: bytes, content_type: str | None = None) -> None:
        self.hook(key)
        self.inner.put(key, data, content_type)
        self.puts.append(key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@asynccontextmanager
async def hooked(api: ChatApi, hook: Any) -> AsyncIterator[HookedStorage]:
    """Swap the app's store for a hooked one for the duration of the block."""
    from docproc_common.storage import AsyncStorage

    original = api.runtime.storage
    store = HookedStorage(original.sync, hook)
    api.runtime.storage = AsyncStorage(store, api.runtime.pool)
    try:
        yield store
    finally:
        api.runtime.storage = original
