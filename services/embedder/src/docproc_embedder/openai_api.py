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
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
from typing import Annotated, Any, cast

import numpy as np
import numpy.typing as npt
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.embedding.local_model import LocalMiniLM
from fastapi import APIRouter, Header
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

MAX_INPUTS = 2048
MAX_INPUT_CHARS = 100_000

#: The names this endpoint answers to: the model's full and short names.
MODEL_NAMES = frozenset({LocalMiniLM.MODEL_NAME, LocalMiniLM.MODEL_NAME.split("/", 1)[1]})
#: OpenAI's encodings; none named is ``float``.
ENCODING_FORMATS = ("float", "base64")


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


def build_openai_router(clients: EmbeddingClients, token: str | None) -> APIRouter:
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

    return router
