"""Answers sent by ASGI middleware before any route runs (a refused host, a body too
large): the error envelope of ``docproc_common.errors``, as the routes' errors have it."""

from __future__ import annotations

import json
from typing import Any

from docproc_common.errors import AppError


async def send_error(send: Any, error: AppError) -> None:
    payload = json.dumps(error.envelope()).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
        *((k.lower().encode(), v.encode()) for k, v in error.headers().items()),
    ]
    await send({"type": "http.response.start", "status": error.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
