"""Servers for tests on a free port of 127.0.0.1: an HTTP request handler in a thread of its
own (for a block, or an object's life), an ASGI app by uvicorn on the running event loop."""

from __future__ import annotations

import asyncio
import http.client
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

import uvicorn

from docproc_testing.infra import free_port


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that writes no access log into the tests' output."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's name
        pass


class KeepAliveHandler(QuietHandler):
    """A quiet handler on HTTP/1.1: connections stay open, so every answer says its length."""

    protocol_version = "HTTP/1.1"

    def relay(self, netloc: str, body: bytes, *, timeout: float) -> None:
        """Pass this request on to ``netloc`` (``host:port``) and its whole answer back."""
        upstream = http.client.HTTPConnection(netloc, timeout=timeout)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
            headers["Host"] = netloc
            upstream.request(self.command, self.path, body=body, headers=headers)
            answer = upstream.getresponse()
            data = answer.read()
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in {"content-length", "transfer-encoding", "connection"}:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        finally:
            upstream.close()


class ThreadedServer:
    """``handler`` answering in a thread of its own from construction until ``close`` (or the
    end of a ``with`` block)."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _traceback: TracebackType | None,
    ) -> None:
        self.close()


@contextmanager
def serving(
    handler: type[BaseHTTPRequestHandler], *, daemon_threads: bool = False
) -> Iterator[int]:
    """``handler`` answering until the block ends: its port. ``daemon_threads``: closing does
    not wait for the requests still being answered."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = daemon_threads
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@asynccontextmanager
async def serving_app(app: Any) -> AsyncIterator[int]:
    """``app`` (ASGI, no lifespan) answering until the block ends: its port."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    task = asyncio.create_task(server.serve())
    for _ in range(100):
        if server.started:
            break
        await asyncio.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        await task
