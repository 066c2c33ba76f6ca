"""Fault-injecting proxies for the fault scenarios (issue #14): in front of Postgres, moto.

``TcpFaultProxy`` forwards TCP both ways and, when the client sends bytes containing a
chosen pattern (``b"COMMIT"``, ``b"INSERT INTO outbox"``), acts on that connection once:

- ``"reset_before"``: the bytes are dropped and both sides are reset (RST): the server
  never sees them (a COMMIT that did not happen);
- ``"reset_after"``: the bytes reach the server, then both sides are reset before its
  answer is relayed (a COMMIT whose outcome the client cannot know);
- ``"call"``: ``on_match()`` runs first (a ``pg_terminate_backend`` from the side), then
  the bytes are forwarded.

A rule armed with ``when`` acts only on a connection for which ``when(port)`` holds, given
the local port of its connection to the server (``pg_stat_activity.client_port``: which
transaction is about to commit); the others pass.

``reset_all()`` resets every open connection; ``refuse`` makes new ones be reset at once;
``upstream_ports()`` tells the server's backends of this proxy's clients from others.

``S3FaultProxy`` is an HTTP proxy in front of an S3 endpoint that answers a share of the
requests (``fail_ratio``, drawn from a seeded generator) with S3's own 503 ``SlowDown``
or 500 ``InternalError`` instead of forwarding them.

Both run on daemon threads of the test process, on 127.0.0.1 and a free port.
"""

from __future__ import annotations

import contextlib
import random
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import Literal
from urllib.parse import urlsplit

from docproc_testing.servers import KeepAliveHandler

Action = Literal["reset_before", "reset_after", "call"]


def _reset(sock: socket.socket) -> None:
    """Close with SO_LINGER 0: the peer reads ECONNRESET, as from a dropped network path."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RD)  # wakes the pump blocked reading it; sends nothing
    with contextlib.suppress(OSError):
        sock.close()


@dataclass(eq=False)
class _Rule:
    pattern: bytes
    action: Action
    on_match: Callable[[], None] | None
    times: int
    skip: int
    when: Callable[[int], bool] | None


class TcpFaultProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.refuse = False
        self.matched = 0
        self._rules: list[_Rule] = []
        self._pairs: set[tuple[socket.socket, socket.socket]] = set()
        self._muted: set[tuple[socket.socket, socket.socket]] = set()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True, name="tcp-fault-proxy").start()

    def arm(
        self,
        pattern: bytes,
        action: Action,
        *,
        on_match: Callable[[], None] | None = None,
        times: int = 1,
        skip: int = 0,
        when: Callable[[int], bool] | None = None,
    ) -> None:
        """Act on the next ``times`` client sends containing ``pattern`` (on a connection
        ``when`` accepts), after letting ``skip`` of them through."""
        with self._lock:
            self._rules.append(_Rule(pattern, action, on_match, times, skip, when))

    def disarm(self) -> None:
        with self._lock:
            self._rules.clear()

    def upstream_ports(self) -> list[int]:
        """The local ports of its open connections to the server: what Postgres shows as
        ``pg_stat_activity.client_port`` of the backends serving this proxy's clients."""
        with self._lock:
            pairs = list(self._pairs)
        ports = []
        for _, upstream in pairs:
            with contextlib.suppress(OSError):
                ports.append(int(upstream.getsockname()[1]))
        return ports

    def reset_all(self) -> None:
        with self._lock:
            pairs = list(self._pairs)
        for client, upstream in pairs:
            _reset(client)
            _reset(upstream)

    def close(self) -> None:
        self._closed = True
        _reset(self._listener)
        self.reset_all()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self.refuse:
                _reset(client)
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=10)
                upstream.settimeout(None)
            except OSError:
                _reset(client)
                continue
            pair = (client, upstream)
            with self._lock:
                self._pairs.add(pair)
            threading.Thread(target=self._pump, args=(pair, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(pair, False), daemon=True).start()

    def _rule_for(self, data: bytes, upstream: socket.socket) -> _Rule | None:
        with self._lock:
            candidates = [r for r in self._rules if r.pattern in data]
        if any(r.when is not None for r in candidates):
            try:
                port: int | None = int(upstream.getsockname()[1])
            except OSError:
                port = None
            candidates = [
                r for r in candidates if r.when is None or (port is not None and r.when(port))
            ]
        with self._lock:
            for rule in candidates:
                if rule in self._rules:
                    if rule.skip > 0:
                        rule.skip -= 1
                        return None
                    rule.times -= 1
                    if rule.times <= 0:
                        self._rules.remove(rule)
                    self.matched += 1
                    return rule
        return None

    def _pump(self, pair: tuple[socket.socket, socket.socket], from_client: bool) -> None:
        client, upstream = pair
        src, dst = (client, upstream) if from_client else (upstream, client)
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if not from_client and pair in self._muted:
                    break  # the answer to what was sent before a "reset_after" is lost
                rule = self._rule_for(data, upstream) if from_client else None
                if rule is not None and rule.action == "reset_before":
                    break
                if rule is not None and rule.action == "call" and rule.on_match is not None:
                    rule.on_match()
                if rule is not None and rule.action == "reset_after":
                    self._muted.add(pair)
                dst.sendall(data)
                if rule is not None and rule.action == "reset_after":
                    time.sleep(0.3)  # the server acts on it; its answer is never relayed
                    break
        except OSError:
            pass
        finally:
            with self._lock:
                self._pairs.discard(pair)
                self._muted.discard(pair)
            _reset(client)
            _reset(upstream)


_S3_ERRORS = {
    503: ("SlowDown", "Please reduce your request rate."),
    500: ("InternalError", "We encountered an internal error. Please try again."),
}


class S3FaultProxy:
    """``endpoint_url`` in front of ``target_url``; ``fail_ratio`` of requests answered 503/500."""

    def __init__(self, target_url: str, *, seed: int = 0) -> None:
        parts = urlsplit(target_url)
        assert parts.hostname is not None
        assert parts.port is not None
        self.fail_ratio = 0.0
        self.forwarded = 0
        self.failed = 0
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        proxy = self
        target = f"{parts.hostname}:{parts.port}"

        class Handler(KeepAliveHandler):
            def _relay(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                status = proxy._draw()
                if status is not None:
                    code, message = _S3_ERRORS[status]
                    payload = (
                        f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code>'
                        f"<Message>{message}</Message></Error>"
                    ).encode()
                    self.send_response(status)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                self.relay(target, body, timeout=60)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _relay

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.endpoint_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(
            target=self._server.serve_forever, daemon=True, name="s3-fault-proxy"
        ).start()

    def _draw(self) -> int | None:
        with self._lock:
            if self.fail_ratio > 0 and self._rng.random() < self.fail_ratio:
                self.failed += 1
                return self._rng.choice((503, 500))
            self.forwarded += 1
            return None

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
