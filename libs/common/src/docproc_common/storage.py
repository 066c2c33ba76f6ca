"""One storage interface for every file: ``local`` (under ``MEDIA_DIR``) or ``s3``.

Whatever the backend, a row records the same storage path,
``{owner}/{uuid}_{filename}``; the filename part is derived from the untrusted
name, never taken as is. S3 objects are written with server-side encryption
(SSE-S3 by default, SSE-KMS with a configured key).

A store that cannot take a write or answer now raises ``StorageUnavailable`` (S3 5xx,
throttling, an unreachable endpoint, once boto's retries are spent) or ``StorageFull``
(a full, over-quota or read-only disk: 507): both are retryable for a pipeline stage,
and the API answers 503 with ``Retry-After`` or 507. A local write that fails leaves no
partial file.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import unicodedata
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Protocol

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotoConnectionError

from docproc_common.blocking import BlockingPool
from docproc_common.errors import (
    NO_ROOM_ERRNOS,
    NOT_WRITABLE_ERRNOS,
    InsufficientStorage,
    InvalidInput,
    RetryableError,
)
from docproc_common.settings import StorageBackend, StorageSettings

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

log = logging.getLogger(__name__)

MAX_FILENAME_BYTES = 150
MAX_LABEL_CHARS = 255
_WINDOWS_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$", re.IGNORECASE)
_UNSAFE = re.compile(r"[^\w.\- ]+", re.UNICODE)


def safe_filename(name: str) -> str:
    """A filename that is a label, never a path: ``../../etc/passwd`` -> ``etc_passwd``.

    Control, format (bidi overrides) and separator characters are removed, path
    components are joined with ``_``, Windows device names are defused and the
    result is bounded in bytes on a character boundary.
    """
    name = unicodedata.normalize("NFC", name)
    name = "".join(
        ch for ch in name if unicodedata.category(ch)[0] != "C"
    )  # Cc, Cf (bidi), Cs, Co, Cn
    parts = [p for p in re.split(r"[\\/]+", name) if p not in {"", ".", ".."}]
    name = "_".join(parts)
    name = _UNSAFE.sub("_", name).strip(" .")
    if _WINDOWS_RESERVED.match(name):
        name = f"_{name}"
    encoded = name.encode()[:MAX_FILENAME_BYTES]
    name = encoded.decode(errors="ignore").strip(" .")
    return name or "file"


def clean_filename(raw: str | None) -> str:
    """The name the person sees: control and format characters (NUL, bidi overrides) removed.

    It stays a label (a chat file's, a knowledge-base document's): the storage path and
    a workspace path derive their own safe names from it. A long name is cut keeping its
    extension.
    """
    name = unicodedata.normalize("NFC", raw or "")
    name = "".join(c for c in name if unicodedata.category(c)[0] != "C").strip()
    if len(name) > MAX_LABEL_CHARS:
        stem, dot, ext = name.rpartition(".")
        if dot and stem and len(ext) <= 16:
            name = f"{stem[: MAX_LABEL_CHARS - len(ext) - 1]}.{ext}"
        else:
            name = name[:MAX_LABEL_CHARS]
    return name or "file"


def new_storage_path(owner: str, filename: str) -> str:
    return f"{owner}/{uuid.uuid4().hex}_{safe_filename(filename)}"


def _checked_key(key: str) -> str:
    path = PurePosixPath(key)
    if path.is_absolute() or any(part in {"", ".", ".."} for part in key.split("/")):
        raise InvalidInput("Invalid storage path")
    return key


#: What one read of a streamed object asks for.
STREAM_CHUNK_BYTES = 1024 * 1024


class StorageUnavailable(RetryableError):
    """The file store failed or throttled the call (after its own retries)."""


class StorageFull(InsufficientStorage, RetryableError):
    """The disk refused the write: no room (full, over quota, a file-size limit) or not
    writable (read-only, permissions); ``no_room`` says which."""

    def __init__(self, *, no_room: bool) -> None:
        super().__init__("The file store is full or read-only; nothing was kept, try again later")
        self.no_room = no_room


_S3_BUSY_CODES = {"SlowDown", "Throttling", "ThrottlingException", "RequestTimeout"}


@contextlib.contextmanager
def _disk_errors() -> Iterator[None]:
    try:
        yield
    except OSError as exc:
        if exc.errno in NO_ROOM_ERRNOS | NOT_WRITABLE_ERRNOS:
            raise StorageFull(no_room=exc.errno in NO_ROOM_ERRNOS) from exc
        raise


@contextlib.contextmanager
def _s3_errors() -> Iterator[None]:
    try:
        yield
    except ClientError as exc:
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        if status >= 500 or exc.response.get("Error", {}).get("Code") in _S3_BUSY_CODES:
            raise StorageUnavailable(f"the file store answered {status}") from exc
        raise
    except (HTTPClientError, BotoConnectionError) as exc:
        raise StorageUnavailable(f"the file store is unreachable: {type(exc).__name__}") from exc


class Reader(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...
    def close(self) -> None: ...


class Storage(Protocol):
    backend: str
    encrypted: bool

    def put(self, key: str, data: bytes, content_type: str | None = None) -> None: ...
    def get(self, key: str) -> bytes: ...
    def open(self, key: str) -> Reader:
        """The object for reading piecewise; ``FileNotFoundError`` when there is none."""
        ...

    def exists(self, key: str) -> bool: ...
    def delete(self, key: str) -> None: ...
    def delete_prefix(self, prefix: str) -> int: ...
    def list_prefix(self, prefix: str) -> list[tuple[str, int]]:
        """Every object under the folder ``prefix``: its key and size, sorted by key."""
        ...


class LocalStorage:
    backend = "local"
    encrypted = False

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def _path(self, key: str) -> Path:
        path = (self.root / _checked_key(key)).resolve()
        if not path.is_relative_to(self.root):
            raise InvalidInput("Invalid storage path")
        return path

    def put(self, key: str, data: bytes, content_type: str | None = None) -> None:  # noqa: ARG002
        path = self._path(key)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
        try:
            with _disk_errors():
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp.write_bytes(data)
                tmp.replace(path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def get(self, key: str) -> bytes:
        return self._path(key).read_bytes()

    def open(self, key: str) -> Reader:
        return self._path(key).open("rb")

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def delete_prefix(self, prefix: str) -> int:
        base = self._path(prefix.rstrip("/"))
        if not base.exists():
            return 0
        files = [p for p in base.rglob("*") if p.is_file()]
        for p in files:
            p.unlink(missing_ok=True)
        for d in sorted((p for p in base.rglob("*") if p.is_dir()), reverse=True):
            d.rmdir()
        if base.is_dir():
            base.rmdir()
        return len(files)

    def list_prefix(self, prefix: str) -> list[tuple[str, int]]:
        base = self._path(prefix.rstrip("/"))
        if not base.is_dir():
            return []
        return sorted(
            (p.relative_to(self.root).as_posix(), p.stat().st_size)
            for p in base.rglob("*")
            if p.is_file()
        )


class S3Storage:
    backend = "s3"
    encrypted = True

    def __init__(self, settings: StorageSettings, client: S3Client | None = None) -> None:
        if not settings.s3_bucket:
            raise ValueError("STORAGE__S3_BUCKET is required with the s3 backend")
        self.bucket = settings.s3_bucket
        self.prefix = settings.s3_prefix.strip("/")
        self.sse = settings.s3_sse
        self.kms_key_id = settings.s3_kms_key_id
        self.client: S3Client = client or boto3.client(
            "s3",
            endpoint_url=settings.s3_endpoint_url,
            region_name=settings.s3_region,
            config=Config(
                connect_timeout=settings.connect_timeout_s,
                read_timeout=settings.read_timeout_s,
                retries={"mode": "standard", "max_attempts": settings.max_attempts},
            ),
        )

    def _key(self, key: str) -> str:
        key = _checked_key(key)
        return f"{self.prefix}/{key}" if self.prefix else key

    def put(self, key: str, data: bytes, content_type: str | None = None) -> None:
        extra: dict[str, Any] = {"ServerSideEncryption": self.sse}
        if self.sse == "aws:kms" and self.kms_key_id:
            extra["SSEKMSKeyId"] = self.kms_key_id
        if content_type:
            extra["ContentType"] = content_type
        with _s3_errors():
            self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=data, **extra)

    def get(self, key: str) -> bytes:
        with _s3_errors():
            return self.client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"].read()

    def open(self, key: str) -> Reader:
        try:
            with _s3_errors():
                return self.client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"]
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in {"404", "NoSuchKey", "NotFound"}:
                raise FileNotFoundError(key) from exc
            raise

    def exists(self, key: str) -> bool:
        try:
            with _s3_errors():
                self.client.head_object(Bucket=self.bucket, Key=self._key(key))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in {"404", "NoSuchKey", "NotFound"}:
                return False
            raise
        return True

    def delete(self, key: str) -> None:
        with _s3_errors():
            self.client.delete_object(Bucket=self.bucket, Key=self._key(key))

    def delete_prefix(self, prefix: str) -> int:
        full = self._key(prefix.rstrip("/")) + "/"
        deleted = 0
        paginator = self.client.get_paginator("list_objects_v2")
        with _s3_errors():
            for page in paginator.paginate(Bucket=self.bucket, Prefix=full):
                keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
                if keys:
                    self.client.delete_objects(Bucket=self.bucket, Delete={"Objects": keys})  # type: ignore[typeddict-item]
                    deleted += len(keys)
        return deleted

    def list_prefix(self, prefix: str) -> list[tuple[str, int]]:
        full = self._key(prefix.rstrip("/")) + "/"
        cut = len(self.prefix) + 1 if self.prefix else 0
        found: list[tuple[str, int]] = []
        paginator = self.client.get_paginator("list_objects_v2")
        with _s3_errors():
            for page in paginator.paginate(Bucket=self.bucket, Prefix=full):
                found.extend((o["Key"][cut:], o["Size"]) for o in page.get("Contents", []))
        return sorted(found)


def create_storage(settings: StorageSettings) -> Storage:
    if settings.backend is StorageBackend.S3:
        return S3Storage(settings)
    return LocalStorage(settings.media_dir)


class AsyncStorage:
    """The storage interface off the event loop, on the dedicated blocking pool."""

    def __init__(self, storage: Storage, pool: BlockingPool) -> None:
        self.sync = storage
        self._pool = pool

    async def put(self, key: str, data: bytes, content_type: str | None = None) -> None:
        """Cancellation-safe: a cancelled caller waits for the write, then deletes what it wrote.

        The caller never received the path, so otherwise nobody could record or
        clean up the orphan.
        """
        task = asyncio.ensure_future(self._pool.run(self.sync.put, key, data, content_type))
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            try:
                await task
            finally:
                await self._pool.run(self.sync.delete, key)
            raise

    async def get(self, key: str) -> bytes:
        return await self._pool.run(self.sync.get, key)

    async def open(self, key: str) -> StoredStream:
        """The object opened now (``FileNotFoundError`` when missing), read as it is iterated."""
        return StoredStream(await self._pool.run(self.sync.open, key), self._pool)

    async def exists(self, key: str) -> bool:
        return await self._pool.run(self.sync.exists, key)

    async def delete(self, key: str) -> None:
        await self._pool.run(self.sync.delete, key)

    async def delete_prefix(self, prefix: str) -> int:
        return await self._pool.run(self.sync.delete_prefix, prefix)

    async def list_prefix(self, prefix: str) -> list[tuple[str, int]]:
        return await self._pool.run(self.sync.list_prefix, prefix)


class StoredStream:
    """An opened object, read ``STREAM_CHUNK_BYTES`` at a time on the blocking pool, so a
    download holds one piece in memory and never reads on the event loop. Closed when the
    iteration ends, however it ends."""

    def __init__(self, reader: Reader, pool: BlockingPool) -> None:
        self._reader = reader
        self._pool = pool

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            while piece := await self._pool.run(self._reader.read, STREAM_CHUNK_BYTES):
                yield piece
        finally:
            await self.close()

    async def close(self) -> None:
        await self._pool.run(self._reader.close)
