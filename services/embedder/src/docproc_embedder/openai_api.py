"""The local model as an OpenAI-compatible ``POST /v1/embeddings`` (and ``GET /v1/models``).

Off unless ``EMBEDDER__SERVE_OPENAI_API=true``. It is what tests the HTTP provider
path for real: a collection on the ``openai`` provider whose ``embedding_base_url``
names this service gets its vectors through the same client, batching and error
mapping as one on api.openai.com. When ``EMBEDDER__OPENAI_API_TOKEN`` is set, an
embeddings request must carry it as its bearer token (401 otherwise, like OpenAI);
``/v1/models`` is open, as OpenRouter's is, so that a collection's endpoint can be
asked which models it serves before a key is lent to it. Answers and
errors have OpenAI's shapes, not docproc's envelope, because OpenAI clients read them.

Inputs are embedded whole: the local model windows a long text itself rather than
truncating it (``LocalMiniLM``). Vectors come back as float lists, or, with
``encoding_format: "base64"`` (what the ``openai`` SDK and libraries built on it ask for
unless told otherwise), as base64 of their little-endian float32 bytes, as OpenAI's do.
Inputs must be text: token arrays (LangChain's ``OpenAIEmbeddings`` sends tiktoken ids
unless ``check_embedding_ctx_length=False``) are refused, since this model has its own
tokenizer.

``POST /v1/rerank`` serves the cross-encoder the deployment mounts
(``EMBEDDER__RERANK_MODEL_DIR``) beside it, in the two shapes docproc's rerank providers
speak (``docproc_common.rerank.client``): Cohere's and Jina's (``model``, ``query``,
``documents``, ``top_n``; answer ``results[]`` of ``index`` and ``relevance_score``, best
first, errors ``{"message"}``) and Text Embeddings Inference's (``query``, ``texts``;
answer ``[{index, score}]``, best first, errors ``{"error", "error_type"}``), behind the
same bearer token. It is what tests the provider path against a real model.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, cast

import numpy as np
import numpy.typing as npt
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.embedding.local_model import LocalMiniLM
from docproc_common.rerank.cross_encoder import CrossEncoderMissing
from fastapi import APIRouter, Header
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

log = logging.getLogger(__name__)

MAX_INPUTS = 2048
MAX_INPUT_CHARS = 100_000

#: The names this endpoint answers to: the model's full and short names.
MODEL_NAMES = frozenset({LocalMiniLM.MODEL_NAME, LocalMiniLM.MODEL_NAME.split("/", 1)[1]})
#: OpenAI's encodings; none named is ``float``.
ENCODING_FORMATS = ("float", "base64")


#: Passages one rerank request may score (Cohere's limit).
MAX_RERANK_DOCUMENTS = 1000


class RerankRequest(BaseModel):
    """Cohere's/Jina's body (``documents``) or TEI's (``texts``); other fields are ignored."""

    model: str | None = None
    query: str
    documents: list[str] | None = None
    top_n: int | None = Field(default=None, ge=1)
    texts: list[str] | None = None
    raw_scores: bool = False


class EmbeddingsRequest(BaseModel):
    model: str
    #: Token arrays are read only to be refused in OpenAI's shape.
    input: str | list[str] | list[int] | list[list[int]] = Field(union_mode="left_to_right")
    encoding_format: str | None = None
    dimensions: int | None = None
    user: str | None = None


def _error(
    status: int, message: str, kind: str, code: str | None = None, param: str | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message, "type": kind, "param": param, "code": code}},
        status_code=status,
    )


def _embedding(vector: npt.NDArray[np.float32], encoding_format: str) -> str | list[float]:
    if encoding_format == "base64":
        return base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
    return cast(list[float], vector.tolist())


def render(vectors: npt.NDArray[np.float32], encoding_format: str, tokens: int) -> bytes:
    """The answer's JSON, for a worker thread. One vector at a time: a single ``json.dumps``
    of 2048 float lists holds the GIL, and so stalls the event loop, for about a second."""
    items = ",".join(
        json.dumps(
            {"object": "embedding", "index": i, "embedding": _embedding(v, encoding_format)},
            separators=(",", ":"),
        )
        for i, v in enumerate(vectors)
    )
    rest = json.dumps(
        {
            "model": LocalMiniLM.MODEL_NAME,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        },
        separators=(",", ":"),
    )
    return f'{{"object":"list","data":[{items}],{rest[1:]}'.encode()


def build_openai_router(
    clients: EmbeddingClients, token: str | None, *, rerank: bool = False
) -> APIRouter:
    """``/v1/models`` and ``/v1/embeddings``, and ``/v1/rerank`` when ``rerank`` (a
    cross-encoder is mounted)."""
    router = APIRouter(prefix="/v1", tags=["openai-compatible"])

    def unauthorized(authorization: str | None) -> JSONResponse | None:
        if token is None:
            return None
        given = (
            (authorization or "")[7:].strip()
            if (authorization or "")[:7].lower() == "bearer "
            else ""
        )
        if not given or not hmac.compare_digest(given.encode(), token.encode()):
            return _error(
                401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key"
            )
        return None

    @router.get("/models")
    async def models() -> dict[str, Any]:
        """Open, like OpenRouter's: a collection's endpoint is asked before any key is lent."""
        return {
            "object": "list",
            "data": [{"id": LocalMiniLM.MODEL_NAME, "object": "model", "owned_by": "docproc"}],
        }

    @router.post("/embeddings", response_model=None)
    async def embeddings(
        body: EmbeddingsRequest,
        authorization: Annotated[str | None, Header()] = None,
    ) -> Response:
        refused = unauthorized(authorization)
        if refused is not None:
            return refused
        if body.model not in MODEL_NAMES:
            return _error(
                404,
                f"The model '{body.model}' does not exist or you do not have access to it.",
                "invalid_request_error",
                "model_not_found",
            )
        given = [body.input] if isinstance(body.input, str) else body.input
        if not given or len(given) > MAX_INPUTS:
            return _error(
                400,
                f"'input' must hold 1 to {MAX_INPUTS} texts",
                "invalid_request_error",
                param="input",
            )
        texts = [t for t in given if isinstance(t, str)]
        if len(texts) != len(given):
            return _error(
                400,
                "'input' must be text: this model does not read token arrays (LangChain's "
                "OpenAIEmbeddings sends them unless check_embedding_ctx_length=False)",
                "invalid_request_error",
                param="input",
            )
        if any(not t or len(t) > MAX_INPUT_CHARS for t in texts):
            return _error(
                400,
                f"each input must be a non-empty string of at most {MAX_INPUT_CHARS} characters",
                "invalid_request_error",
                param="input",
            )
        if body.dimensions not in (None, LocalMiniLM.DIMENSIONS):
            return _error(
                400,
                f"this model only embeds at {LocalMiniLM.DIMENSIONS} dimensions",
                "invalid_request_error",
                param="dimensions",
            )
        encoding_format = "float" if body.encoding_format is None else body.encoding_format
        if encoding_format not in ENCODING_FORMATS:
            return _error(
                400,
                "'encoding_format' must be 'float' or 'base64'",
                "invalid_request_error",
                param="encoding_format",
            )
        local = clients.local()
        vectors = await local.embed(texts)
        tokens = sum(max(1, len(t) // 4) for t in texts)
        content = await asyncio.to_thread(render, vectors, encoding_format, tokens)
        return Response(content, media_type="application/json")

    if rerank:
        router.add_api_route(
            "/rerank", _rerank_route(clients, unauthorized), methods=["POST"], response_model=None
        )
    return router


def _rerank_route(
    clients: EmbeddingClients, unauthorized: Callable[[str | None], JSONResponse | None]
) -> Callable[..., Awaitable[Response]]:
    async def rerank(
        body: RerankRequest, authorization: Annotated[str | None, Header()] = None
    ) -> Response:
        tei = body.texts is not None

        def refuse(status: int, message: str, kind: str = "Validation") -> JSONResponse:
            content = {"error": message, "error_type": kind} if tei else {"message": message}
            return JSONResponse(content, status_code=status)

        if unauthorized(authorization) is not None:
            return refuse(401, "invalid api token", "Unauthorized")
        if (body.documents is not None) == tei:
            return refuse(400, "give either documents (Cohere, Jina) or texts (TEI)")
        passages = (body.texts if tei else body.documents) or []
        if not body.query or not passages or len(passages) > MAX_RERANK_DOCUMENTS:
            return refuse(
                400, f"a non-empty query and 1 to {MAX_RERANK_DOCUMENTS} documents are required"
            )
        try:  # loaded on first use, off the event loop
            local = await asyncio.to_thread(clients.rerankers.local)
        except CrossEncoderMissing as exc:
            log.error("the mounted cross-encoder cannot be loaded: %s", exc)
            return refuse(503, "the reranking model cannot be loaded", "Unhealthy")
        if not tei and body.model not in (None, local.name):
            return refuse(404, f"model '{body.model}' not found")
        scores = await local.rerank(body.query, passages)
        order = sorted(range(len(passages)), key=lambda i: -float(scores[i]))
        if tei:
            kept = np.clip(scores, 1e-12, 1 - 1e-12)  # a logit back, finite
            values = np.log(kept / (1.0 - kept)) if body.raw_scores else scores
            return JSONResponse([{"index": i, "score": float(values[i])} for i in order])
        results = [{"index": i, "relevance_score": float(scores[i])} for i in order]
        return JSONResponse(
            {
                "id": str(uuid.uuid4()),
                "model": local.name,
                "results": results[: body.top_n] if body.top_n else results,
                "meta": {"billed_units": {"search_units": 1}},
            }
        )

    return rerank
