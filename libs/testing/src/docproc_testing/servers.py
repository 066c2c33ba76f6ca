"""An HTTP request handler served on a free port of 127.0.0.1 in a thread of its own."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


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
