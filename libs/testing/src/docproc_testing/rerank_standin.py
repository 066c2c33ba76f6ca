"""A strict stand-in of a provider's rerank API on 127.0.0.1, for tests.

``flavour`` picks the documented API it holds requests to:

* ``cohere``: ``POST /v2/rerank`` (Cohere's v2 API): ``model``, ``query`` and
  ``documents`` (strings) required, ``top_n`` and ``max_tokens_per_doc`` optional; the
  answer ``{"id", "results": [{"index", "relevance_score"}], "meta"}``, best first, cut to
  ``top_n``; errors ``{"message"}``.
* ``jina``: ``POST /v1/rerank``: ``model``, ``query``, ``documents`` required, ``top_n``
  and ``return_documents`` optional; the answer ``{"model", "usage": {"total_tokens"},
  "results": [{"index", "relevance_score"}]}``; errors ``{"detail"}``.
* ``tei``: ``POST /rerank`` (Text Embeddings Inference): ``query`` and ``texts`` required,
  ``raw_scores``, ``return_text``, ``truncate`` and ``truncation_direction`` optional; the
  answer ``[{"index", "score"}]``, best first; errors ``{"error", "error_type"}``.

Any other field, a wrong type, a missing bearer token or another token than ``api_key``
is refused as the provider refuses it (422/400, 401). It scores a passage by the tiny
cross-encoder's rule over every word (``tiny_rerankers.overlap``), squashed to (0, 1), so a
test knows the order in advance. ``status``/``body`` script another answer; every request
is recorded.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from docproc_testing.embedding_standin import Recorded
from docproc_testing.servers import QuietHandler, serving
from docproc_testing.tiny_rerankers import overlap

Flavour = Literal["cohere", "jina", "tei"]

_PATHS = {"cohere": "/v2/rerank", "jina": "/v1/rerank", "tei": "/rerank"}
_FIELDS: dict[str, tuple[dict[str, type], dict[str, type | tuple[type, ...]]]] = {
    # required, optional
    "cohere": (
        {"model": str, "query": str, "documents": list},
        {"top_n": int, "max_tokens_per_doc": int},
    ),
    "jina": (
        {"model": str, "query": str, "documents": list},
        {"top_n": int, "return_documents": bool},
    ),
    "tei": (
        {"query": str, "texts": list},
        {"raw_scores": bool, "return_text": bool, "truncate": bool, "truncation_direction": str},
    ),
}


def standin_score(query: str, passage: str) -> float:
    """The stand-in's relevance of ``passage`` to ``query``."""
    return 1.0 / (1.0 + math.exp(-overlap(query, passage, [query, passage])))


@dataclass
class RerankStandIn:
    flavour: Flavour = "cohere"
    api_key: str = "rk-test"  # noqa: S105 - a test key
    status: int = 200
    #: A JSON body to answer with instead of a ranking (any status).
    body: Any = None
    requests: list[Recorded] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        """The base URL a collection names (its ``/rerank`` appended)."""
        return f"http://127.0.0.1:{self.port}" + _PATHS[self.flavour].removesuffix("/rerank")

    def _error(self, status: int, message: str) -> tuple[int, Any]:
        if self.flavour == "tei":
            return status, {"error": message, "error_type": "Validation"}
        if self.flavour == "jina":
            return status, {"detail": message}
        return status, {"message": message}

    def _invalid(self, body: Any) -> str | None:
        required, optional = _FIELDS[self.flavour]
        if not isinstance(body, dict):
            return "the body is not a JSON object"
        for name in body:
            if name not in required and name not in optional:
                return f"unknown field {name!r}"
        for name, kind in required.items():
            if not isinstance(body.get(name), kind):
                return f"{name} is required"
        for name, kinds in optional.items():
            if name in body and not isinstance(body[name], kinds):
                return f"{name} has the wrong type"
        passages = body["texts" if self.flavour == "tei" else "documents"]
        if not passages or not all(isinstance(p, str) for p in passages):
            return "the passages must be a non-empty list of strings"
        if "top_n" in body and body["top_n"] < 1:
            return "top_n must be positive"
        return None

    def _answer(self, method: str, path: str, bearer: str | None, body: Any) -> tuple[int, Any]:
        self.requests.append(Recorded(method, path, bearer, body))
        if self.body is not None:
            return self.status, self.body
        if self.status != 200:
            return self._error(self.status, f"scripted {self.status}")
        if method != "POST" or path != _PATHS[self.flavour]:
            return self._error(404, "not found")
        if bearer != self.api_key:
            return self._error(401, "invalid api token")
        problem = self._invalid(body)
        if problem is not None:
            return self._error(422 if self.flavour == "tei" else 400, problem)
        query = body["query"]
        if self.flavour == "tei":
            scored = [(i, standin_score(query, t)) for i, t in enumerate(body["texts"])]
            scored.sort(key=lambda s: -s[1])
            return 200, [{"index": i, "score": s} for i, s in scored]
        scored = [(i, standin_score(query, d)) for i, d in enumerate(body["documents"])]
        scored.sort(key=lambda s: -s[1])
        results = [{"index": i, "relevance_score": s} for i, s in scored][: body.get("top_n")]
        if self.flavour == "jina":
            tokens = sum(len(d.split()) for d in body["documents"])
            return 200, {
                "model": body["model"],
                "usage": {"total_tokens": tokens},
                "results": results,
            }
        return 200, {
            "id": str(uuid.uuid4()),
            "results": results,
            "meta": {"billed_units": {"search_units": 1}},
        }


@contextmanager
def running_rerank_standin(
    standin: RerankStandIn | None = None, **options: Any
) -> Iterator[RerankStandIn]:
    """Serve ``standin`` (or ``RerankStandIn(**options)``) on a free loopback port until exit."""
    s = standin or RerankStandIn(**options)

    class Handler(QuietHandler):
        def _serve(self, method: str) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
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
