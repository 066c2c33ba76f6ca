"""A scripted OpenAI-compatible embeddings endpoint on 127.0.0.1, for tests.

It answers ``POST /v1/embeddings`` with deterministic unit vectors (a hash of each
input) or with the status it is told to return (401, 404, 429, 500...), and
``GET /v1/models`` with the model ids it is told to list. Every request is recorded
(path, bearer token, JSON body) so tests can check batching and headers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from docproc_testing.servers import QuietHandler, serving


def standin_vector(text: str, dims: int) -> list[float]:
    """The unit vector the stand-in returns for ``text``."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    v = np.random.default_rng(seed).standard_normal(dims)
    return [float(x) for x in v / np.linalg.norm(v)]


@dataclass
class Recorded:
    method: str
    path: str
    bearer: str | None
    body: Any


@dataclass
class StandIn:
    dims: int = 8
    status: int = 200
    models: Sequence[str] = ()
    #: A JSON body to answer with instead of embeddings (any status).
    body: Any = None
    requests: list[Recorded] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _answer(self, method: str, path: str, bearer: str | None, body: Any) -> tuple[int, Any]:
        self.requests.append(Recorded(method, path, bearer, body))
        if self.body is not None:
            return self.status, self.body
        if self.status != 200:
            return self.status, {"error": {"message": f"scripted {self.status}", "code": None}}
        if method == "GET" and path == "/v1/models":
            return 200, {"data": [{"id": m, "object": "model"} for m in self.models]}
        if method == "POST" and path == "/v1/embeddings":
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = [
                {"object": "embedding", "index": i, "embedding": standin_vector(t, self.dims)}
                for i, t in enumerate(inputs)
            ]
            return 200, {"object": "list", "data": data, "model": body.get("model")}
        return 404, {"error": {"message": "no such route"}}


@contextmanager
def running_standin(standin: StandIn | None = None, **options: Any) -> Iterator[StandIn]:
    """Serve ``standin`` (or ``StandIn(**options)``) on a free loopback port until exit."""
    s = standin or StandIn(**options)

    class Handler(QuietHandler):
        def _serve(self, method: str) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            auth = self.headers.get("authorization")
            bearer = auth[7:] if auth and auth.lower().startswith("bearer ") else None
            status, payload = s._answer(method, self.path, bearer, body)
            out = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._serve("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._serve("POST")

    with serving(Handler) as port:
        s.port = port
        yield s
