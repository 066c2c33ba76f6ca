"""Embedding clients: what the embedder and the search path call, whatever the provider.

Resolution (``resolve_embedding``) turns a collection into what to call: provider,
model, width, endpoint and key. It refuses nothing: a key that was deleted, cannot
be opened or holds no API key resolves to *no* key, because which key pays must
never decide whether the collection's row can be read. The client it yields then
refuses to embed with a message naming the collection, its provider and which case
happened; there is no deployment-wide key to fall back to. Every degraded
resolution is logged with the case it landed in (``CredentialSource``).

HTTP providers (``openai``, ``openrouter``, ``ollama``) speak the OpenAI
``POST {base_url}/embeddings`` protocol:

* **Batching.** One request carries at most the provider's ``max_inputs_per_request``
  inputs and, when the catalog says so, about ``max_tokens_per_request`` tokens.
* **Long inputs.** A text longer than the model's ``max_input_tokens`` (estimated at
  ``CHARS_PER_TOKEN`` characters per token, a deliberately low figure so that an
  estimate errs towards smaller pieces) is cut into pieces at whitespace, each piece
  is embedded, and the pieces' (unit) vectors are averaged weighted by their length
  in characters, then L2-normalized: the same windowing and pooling as the local
  model, with characters standing in for word-pieces.
* **Errors** become docproc's own messages (``failures.failure_message`` passes an
  ``AppError`` whole, never the HTTP client's text, which may hold hosts and keys):
  401/403 the credential was rejected, 404 the endpoint does not serve the model,
  other 4xx a refused request; 429, 5xx, timeouts and connection failures are a
  ``RetryableError`` so the bus tries again. The provider's answer goes to the log.
* **An organization's endpoint** (a registered one, not the deployment's) is reached through
  the pinned transport of ``docproc_common.egress`` unless
  ``EMBEDDER__ALLOW_PRIVATE_ENDPOINTS``: its name is resolved, every answer must be public,
  and the request goes to the address checked. A refused address is one error whatever
  the reason (a literal, a name resolving inside, no answer at all) and is known before any
  connection, so no status, timeout or refused port tells a member what listens inside.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import uuid
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

import httpx
import numpy as np
import numpy.typing as npt
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from docproc_common.blocking import BlockingPool
from docproc_common.connectors.errors import NetworkRefusedError
from docproc_common.db.models import EmbeddingEndpoint, KnowledgeBase
from docproc_common.egress.pinned import PinnedTransport
from docproc_common.embedding.catalog import Catalog, catalog
from docproc_common.embedding.local_model import InputKind, LocalMiniLM, WindowedEncoder
from docproc_common.embedding.mounted import ModelCardError, MountedModel, mounted_models
from docproc_common.errors import AppError, RetryableError
from docproc_common.rerank.client import Rerankers
from docproc_common.settings import Settings
from docproc_common.vault import SecretKind, VaultError, secret_in_org, unseal

log = logging.getLogger(__name__)

#: Characters per token assumed when cutting long inputs for an HTTP model (see module doc).
CHARS_PER_TOKEN = 3
#: How long the pinned client keeps an organization endpoint's checked address: an endpoint
#: that moves is followed within this, and every new answer is checked again.
ENDPOINT_PIN_TTL_S = 300.0
#: Each HTTP pool's connections (one pool for providers, one for organizations' endpoints).
_LIMITS = httpx.Limits(max_connections=16, max_keepalive_connections=8)


class EmbeddingProviderUnavailable(RetryableError):
    """The provider timed out, could not be reached, or answered 408/409/425/429/5xx."""


class EmbeddingNotConfiguredError(AppError):
    """The collection has no usable credential or service: docproc refuses before any call."""

    status_code = 409
    code = "EMBEDDING_NOT_CONFIGURED"


class EmbeddingEndpointRefusedError(AppError):
    """An organization's endpoint whose host this deployment does not let it reach: one error,
    raised before any connection, whatever the reason (see the module docstring)."""

    status_code = 409
    code = "EMBEDDING_ENDPOINT_REFUSED"


class EmbeddingProviderError(AppError):
    """The provider answered, and the answer was a refusal docproc can name."""

    status_code = 502
    code = "EMBEDDING_PROVIDER_ERROR"


class EmbeddingCredentialRejectedError(EmbeddingProviderError):
    code = "EMBEDDING_CREDENTIAL_REJECTED"


class EmbeddingModelNotServedError(EmbeddingProviderError):
    code = "EMBEDDING_MODEL_NOT_SERVED"


class CredentialSource(StrEnum):
    """Where a resolution found (or failed to find) what pays for the embeddings."""

    COLLECTION_SECRET = "collection_secret"  # the collection's vault key, opened
    KEYLESS = "keyless"  # a provider that needs no key (local, ollama)
    NO_SECRET = "no_secret"  # degraded: the collection names no key
    SECRET_DELETED = "secret_deleted"  # degraded: the named key is gone (from this org)
    SECRET_UNOPENABLE = "secret_unopenable"  # degraded: the key cannot be decrypted
    SECRET_WITHOUT_KEY = "secret_without_key"  # degraded: not an API key of this provider
    ENDPOINT_MISSING = "endpoint_missing"  # degraded: the keyless service is gone or unnamed
    UNKNOWN_PROVIDER = "unknown_provider"  # degraded: the catalog no longer has the provider
    MODEL_NOT_MOUNTED = "model_not_mounted"  # degraded: a local model this deployment lacks


_DEGRADED_TEXT = {
    CredentialSource.NO_SECRET: "the collection names no key",
    CredentialSource.SECRET_DELETED: "the secret was deleted",
    CredentialSource.SECRET_UNOPENABLE: "the secret could not be opened",
    CredentialSource.SECRET_WITHOUT_KEY: "the secret holds no API key for this provider",
    CredentialSource.ENDPOINT_MISSING: "its registered embedding service was deleted",
    CredentialSource.UNKNOWN_PROVIDER: "this deployment does not offer the provider",
    CredentialSource.MODEL_NOT_MOUNTED: "this deployment does not mount its model",
}


@dataclass(frozen=True, slots=True)
class EmbeddingTarget:
    """What a collection says about its embeddings (a ``KnowledgeBase`` row, detached)."""

    collection_name: str
    organization_id: str | None
    provider: str
    model: str
    dimensions: int
    secret_id: uuid.UUID | None = None
    base_url: str | None = None
    endpoint_id: uuid.UUID | None = None

    @classmethod
    def of(cls, kb: KnowledgeBase | EmbeddingTarget) -> EmbeddingTarget:
        if isinstance(kb, EmbeddingTarget):
            return kb
        return cls(
            collection_name=kb.collection_name,
            organization_id=kb.organization_id,
            provider=kb.embedding_provider,
            model=kb.embedding_model,
            dimensions=kb.embedding_dim,
            secret_id=kb.embedding_secret_id,
            base_url=kb.embedding_base_url,
            endpoint_id=kb.embedding_endpoint_id,
        )


@dataclass(frozen=True, slots=True)
class ResolvedEmbedding:
    collection_name: str
    provider: str
    model: str
    dims: int
    base_url: str | None
    api_key: str | None = field(repr=False)
    source: CredentialSource
    max_input_tokens: int = 8191
    max_inputs_per_request: int = 64
    max_tokens_per_request: int | None = None
    #: An organization's endpoint on a deployment that allows no private ones: reached through
    #: the pinned transport, its address checked (``docproc_common.egress``).
    public_only: bool = False

    @property
    def degraded_reason(self) -> str | None:
        return _DEGRADED_TEXT.get(self.source)

    def refusal(self) -> EmbeddingNotConfiguredError:
        what = "credential" if self.source.value.startswith(("secret", "no_")) else "service"
        return EmbeddingNotConfiguredError(
            f"No embedding {what} is configured for this collection '{self.collection_name}' "
            f"({self.provider}): {self.degraded_reason}"
        )


async def resolve_embedding(
    session: AsyncSession,
    kb: KnowledgeBase | EmbeddingTarget,
    settings: Settings,
    cat: Catalog | None = None,
) -> ResolvedEmbedding:
    """What ``kb`` embeds with, opening its key for the collection's own organization."""
    target = EmbeddingTarget.of(kb)
    providers = (
        cat
        if cat is not None
        else catalog(settings.embedder.catalog_path, settings.embedder.models_dir)
    )
    pspec = providers.get(target.provider)

    def resolved(
        source: CredentialSource,
        base_url: str | None = None,
        key: str | None = None,
        *,
        public_only: bool = False,
    ) -> ResolvedEmbedding:
        spec = pspec.models.get(target.model) if pspec else None
        out = ResolvedEmbedding(
            collection_name=target.collection_name,
            provider=target.provider,
            model=target.model,
            dims=target.dimensions,
            base_url=base_url,
            api_key=key,
            source=source,
            max_input_tokens=spec.max_input_tokens if spec else 8191,
            max_inputs_per_request=pspec.max_inputs_per_request if pspec else 64,
            max_tokens_per_request=pspec.max_tokens_per_request if pspec else None,
            public_only=public_only,
        )
        if out.degraded_reason is not None:
            log.warning(
                "embedding resolution degraded for collection %s (%s, org %s): %s [%s]",
                target.collection_name,
                target.provider,
                target.organization_id,
                out.degraded_reason,
                source.value,
            )
        return out

    if pspec is None:
        return resolved(CredentialSource.UNKNOWN_PROVIDER)
    if pspec.credential == "none":
        if target.model not in pspec.models:  # a mounted model no longer mounted
            return resolved(CredentialSource.MODEL_NOT_MOUNTED)
        return resolved(CredentialSource.KEYLESS)
    if pspec.credential == "endpoint":
        endpoint = (
            await session.get(EmbeddingEndpoint, target.endpoint_id) if target.endpoint_id else None
        )
        if endpoint is None or endpoint.organization_id not in (None, target.organization_id):
            return resolved(CredentialSource.ENDPOINT_MISSING)
        org_scoped = endpoint.organization_id is not None
        return resolved(
            CredentialSource.KEYLESS,
            endpoint.base_url,
            public_only=org_scoped and not settings.embedder.allow_private_endpoints,
        )
    base_url = target.base_url or pspec.base_url
    if target.secret_id is None:
        return resolved(CredentialSource.NO_SECRET, base_url)
    secret = await secret_in_org(session, target.secret_id, target.organization_id)
    if secret is None:
        return resolved(CredentialSource.SECRET_DELETED, base_url)
    try:
        value = unseal(secret, settings.vault.key())
    except VaultError as exc:
        log.warning("secret %s of collection %s: %s", secret.id, target.collection_name, exc)
        return resolved(CredentialSource.SECRET_UNOPENABLE, base_url)
    key = value.get("api_key")
    if (
        secret.kind != SecretKind.API_KEY
        or secret.provider != target.provider
        or not isinstance(key, str)
        or not key
    ):
        return resolved(CredentialSource.SECRET_WITHOUT_KEY, base_url)
    return resolved(CredentialSource.COLLECTION_SECRET, base_url, key)


class EmbeddingClient(Protocol):
    dimensions: int

    async def embed(self, texts: list[str], kind: InputKind = "passage") -> npt.NDArray[np.float32]:
        """``texts`` embedded as ``kind``: chunks are passages (the default), a search's
        text is a query; a mounted model puts its card's prefix before each (HTTP
        providers' models take no prefix)."""
        ...

    def count_tokens(self, texts: list[str]) -> int:
        """Tokens these texts cost (exact for the local model, estimated for HTTP providers)."""
        ...


@dataclass(slots=True)
class _EmbedRequest:
    texts: list[str]
    done: asyncio.Future[npt.NDArray[np.float32]]
    kind: InputKind = "passage"


class LocalEmbeddingClient:
    """The in-process model on its own single-worker pool, fusing concurrent requests.

    onnxruntime already spreads one inference over its intra-op threads; a second
    worker would only oversubscribe the cores, and sharing the file-I/O pool would
    queue storage reads behind inference.

    Requests that arrive while the model is busy wait in a queue, and the next call
    embeds all of them together (whole requests, in arrival order, up to
    ``max_fused_texts`` texts, at least one request), so the windows of documents
    embedded at the same time share the model's length-sorted batches. Each text's
    vector is the one embedding it alone gives (the model pools per text; batching
    moves results by ~1e-8). If a fused call fails, its requests are embedded one by
    one, so an error belongs to the request that caused it. Only requests of one kind
    (query or passage) are fused, since the kind chooses a mounted model's prefix.

    The built-in model and every mounted one each have a client; they share one pool.
    """

    def __init__(
        self, model: WindowedEncoder, pool: BlockingPool, max_fused_texts: int = 128
    ) -> None:
        self._model = model
        self._pool = pool
        self._max_fused_texts = max_fused_texts
        self._queue: deque[_EmbedRequest] = deque()
        self._worker: asyncio.Task[None] | None = None
        self.dimensions = model.dimensions

    async def embed(self, texts: list[str], kind: InputKind = "passage") -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        loop = asyncio.get_running_loop()
        request = _EmbedRequest(list(texts), loop.create_future(), kind)
        self._queue.append(request)
        if self._worker is None or self._worker.done():
            self._worker = loop.create_task(self._drain(), name="docproc-embed-local-fuse")
        return await request.done

    def count_tokens(self, texts: list[str]) -> int:
        return sum(self._model.count_tokens(t) for t in texts)

    async def _drain(self) -> None:
        fused: list[_EmbedRequest] = []
        try:
            while self._queue:
                fused = self._next_call()
                if fused:
                    await self._run(fused)
        finally:  # normally all answered; if cancelled (the loop closing), nobody will answer
            for request in [*fused, *self._queue]:
                request.done.cancel()
            self._queue.clear()

    def _next_call(self) -> list[_EmbedRequest]:
        """Whole queued requests of one kind (a cancelled one is dropped) up to
        ``max_fused_texts``."""
        fused: list[_EmbedRequest] = []
        count = 0
        while self._queue:
            request = self._queue[0]
            if fused and (
                count + len(request.texts) > self._max_fused_texts or request.kind != fused[0].kind
            ):
                break
            self._queue.popleft()
            if not request.done.done():
                fused.append(request)
                count += len(request.texts)
        return fused

    async def _run(self, fused: list[_EmbedRequest]) -> None:
        try:
            vectors = await self._pool.run(
                self._model.embed, [t for r in fused for t in r.texts], kind=fused[0].kind
            )
        except Exception as exc:
            if len(fused) > 1:
                for request in fused:
                    await self._run([request])
            elif not fused[0].done.done():
                fused[0].done.set_exception(exc)
            return
        begin = 0
        for request in fused:
            end = begin + len(request.texts)
            if not request.done.done():
                request.done.set_result(vectors[begin:end])
            begin = end


class RefusingClient:
    """What an unresolvable collection gets: every call raises the resolution's refusal."""

    def __init__(self, error: AppError, dimensions: int) -> None:
        self._error = error
        self.dimensions = dimensions

    async def embed(
        self,
        texts: list[str],  # noqa: ARG002
        kind: InputKind = "passage",  # noqa: ARG002
    ) -> npt.NDArray[np.float32]:
        raise self._error

    def count_tokens(self, texts: list[str]) -> int:  # noqa: ARG002
        return 0


def split_text(text: str, max_chars: int) -> list[str]:
    """``text`` cut into pieces of at most ``max_chars``, at whitespace when one is near."""
    if len(text) <= max_chars:
        return [text if text.strip() else " "]  # an empty input is a 400 at OpenAI
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + max_chars, len(text))
        if end < len(text):
            floor = start + max_chars // 2
            cut = max(text.rfind(" ", floor, end), text.rfind("\n", floor, end))
            if cut > start:
                end = cut + 1
        piece = text[start:end]
        if piece.strip():
            pieces.append(piece)
        start = end
    return pieces or [" "]


class HttpEmbeddingClient:
    """An OpenAI-compatible ``/embeddings`` endpoint (see the module docstring)."""

    def __init__(self, resolved: ResolvedEmbedding, http: httpx.AsyncClient) -> None:
        if resolved.base_url is None:
            raise ValueError("an HTTP client needs a base URL")
        self._r = resolved
        self._http = http
        self._url = resolved.base_url.rstrip("/") + "/embeddings"
        self._host = httpx.URL(self._url).host
        self.dimensions = resolved.dims

    def count_tokens(self, texts: list[str]) -> int:
        return sum(max(1, len(t) // CHARS_PER_TOKEN) for t in texts)

    async def embed(
        self,
        texts: list[str],
        kind: InputKind = "passage",  # noqa: ARG002 (catalog models take no prefix)
    ) -> npt.NDArray[np.float32]:
        r = self._r
        if not texts:
            return np.zeros((0, r.dims), dtype=np.float32)
        max_chars = max(1, r.max_input_tokens * CHARS_PER_TOKEN)
        owners: list[int] = []
        pieces: list[str] = []
        for index, text in enumerate(texts):
            for piece in split_text(text, max_chars):
                owners.append(index)
                pieces.append(piece)
        vectors = np.zeros((len(pieces), r.dims), dtype=np.float64)
        for begin, end in self._batches(pieces):
            vectors[begin:end] = await self._request(pieces[begin:end])
        weights = np.array([len(p) for p in pieces], dtype=np.float64)[:, None]
        sums = np.zeros((len(texts), r.dims), dtype=np.float64)
        np.add.at(sums, owners, vectors * weights)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        result: npt.NDArray[np.float32] = (sums / np.maximum(norms, 1e-12)).astype(np.float32)
        return result

    def _batches(self, pieces: Sequence[str]) -> list[tuple[int, int]]:
        limit_inputs = max(1, self._r.max_inputs_per_request)
        limit_tokens = self._r.max_tokens_per_request
        out: list[tuple[int, int]] = []
        begin, tokens = 0, 0
        for i, piece in enumerate(pieces):
            estimate = math.ceil(len(piece) / CHARS_PER_TOKEN)
            full = i - begin >= limit_inputs or (
                limit_tokens is not None and i > begin and tokens + estimate > limit_tokens
            )
            if full:
                out.append((begin, i))
                begin, tokens = i, 0
            tokens += estimate
        out.append((begin, len(pieces)))
        return out

    async def _request(self, inputs: list[str]) -> npt.NDArray[np.float64]:
        r = self._r
        headers = {"Authorization": f"Bearer {r.api_key}"} if r.api_key else {}
        body = {"model": r.model, "input": inputs, "encoding_format": "float"}
        try:
            response = await self._http.post(self._url, json=body, headers=headers)
        except NetworkRefusedError as exc:
            log.warning("embedding endpoint of %s refused: %s", r.collection_name, exc.message)
            raise EmbeddingEndpointRefusedError(
                f"The embedding endpoint of collection '{r.collection_name}' ({r.provider}) is "
                f"refused: {self._host} is not a public address this deployment lets an "
                "organization's endpoint reach"
            ) from None
        except httpx.TimeoutException:
            log.warning("embedding provider %s timed out (%s)", r.provider, r.collection_name)
            raise EmbeddingProviderUnavailable(
                f"The embedding provider '{r.provider}' did not answer in time"
            ) from None
        except httpx.TransportError as exc:
            log.warning("embedding provider %s unreachable: %r", r.provider, exc)
            raise EmbeddingProviderUnavailable(
                f"The embedding provider '{r.provider}' could not be reached"
            ) from None
        status = response.status_code
        payload: Any = None
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if status == 200 and isinstance(payload, dict) and "data" not in payload:
            # OpenRouter may answer 200 with {"error": {"code": 4xx, ...}}
            error = payload.get("error")
            code = error.get("code") if isinstance(error, dict) else None
            status = code if isinstance(code, int) and 400 <= code < 600 else 502
        if status != 200:
            self._raise_for(status, response.text)
        return self._vectors(payload, len(inputs))

    def _raise_for(self, status: int, text: str) -> None:
        r = self._r
        log.warning(
            "embedding provider %s answered HTTP %s for collection %s: %s",
            r.provider,
            status,
            r.collection_name,
            text[:1000],
        )
        if status in (401, 403):
            raise EmbeddingCredentialRejectedError(
                f"The embedding provider '{r.provider}' rejected the credential of collection "
                f"'{r.collection_name}' (HTTP {status}) - replace the key in the vault or bind "
                "another one to the collection"
            )
        if status == 404:
            raise EmbeddingModelNotServedError(
                f"The embedding endpoint of collection '{r.collection_name}' ({r.provider}) does "
                f"not serve the model '{r.model}' (HTTP 404) - move the collection to a provider "
                "or endpoint that serves it"
            )
        if status in (408, 409, 425, 429) or status >= 500:
            raise EmbeddingProviderUnavailable(
                f"The embedding provider '{r.provider}' is unavailable (HTTP {status})"
            )
        raise EmbeddingProviderError(
            f"The embedding provider '{r.provider}' refused the request of collection "
            f"'{r.collection_name}' (HTTP {status}); the worker log has its answer"
        )

    def _vectors(self, payload: Any, count: int) -> npt.NDArray[np.float64]:
        r = self._r
        data = payload.get("data") if isinstance(payload, dict) else None
        unreadable = EmbeddingProviderError(
            f"The embedding provider '{r.provider}' answered collection '{r.collection_name}' "
            "with something that is not an embedding list"
        )
        if not isinstance(data, list) or len(data) != count:
            log.warning("embedding provider %s: unreadable answer %.500r", r.provider, payload)
            raise unreadable
        out = np.zeros((count, r.dims), dtype=np.float64)
        seen: set[int] = set()
        for position, item in enumerate(data):
            if not isinstance(item, dict) or not isinstance(item.get("embedding"), list):
                raise unreadable
            index = item.get("index", position)
            if not isinstance(index, int) or not 0 <= index < count or index in seen:
                raise unreadable
            vector = item["embedding"]
            if len(vector) != r.dims:
                raise EmbeddingProviderError(
                    f"The embedding provider '{r.provider}' returned vectors of width "
                    f"{len(vector)} for the model '{r.model}'; collection '{r.collection_name}' "
                    f"stores {r.dims}"
                )
            seen.add(index)
            out[index] = np.asarray(vector, dtype=np.float64)
        return out


class EmbeddingClients:
    """Resolves a collection to a client; one local model and two HTTP pools per process: the
    plain one (providers, the deployment's endpoints) and the pinned one (organizations'
    endpoints, ``public_only``), whose pins last ``ENDPOINT_PIN_TTL_S``."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        e = settings.embedder
        if e.models_dir is not None:  # a bad mounted model stops the process at start-up
            catalog(e.catalog_path, e.models_dir)
        self._cache_dir = e.model_cache_dir
        self._threads = e.threads
        self._batch_tokens = e.batch_tokens
        self._locals: dict[str, LocalEmbeddingClient] = {}
        self._local_pool: BlockingPool | None = None
        self._http: httpx.AsyncClient | None = None
        self._pinned: httpx.AsyncClient | None = None
        self._lock = threading.Lock()
        #: Collections' rerankers (docs/search.md, "Reranking"), on the providers' HTTP pool.
        self.rerankers = Rerankers(settings, self.http)

    @property
    def catalog(self) -> Catalog:
        return catalog(self._settings.embedder.catalog_path, self._settings.embedder.models_dir)

    async def resolve(
        self,
        kb: KnowledgeBase | EmbeddingTarget,
        session: AsyncSession | async_sessionmaker[AsyncSession],
    ) -> ResolvedEmbedding:
        if isinstance(session, AsyncSession):
            return await resolve_embedding(session, kb, self._settings, self.catalog)
        async with session() as own:
            return await resolve_embedding(own, kb, self._settings, self.catalog)

    async def for_collection(
        self,
        kb: KnowledgeBase | EmbeddingTarget,
        session: AsyncSession | async_sessionmaker[AsyncSession],
    ) -> EmbeddingClient:
        """The client for ``kb``; ``session`` (or a sessionmaker) is used to open its key."""
        return await self.open(await self.resolve(EmbeddingTarget.of(kb), session))

    async def open(self, resolved: ResolvedEmbedding) -> EmbeddingClient:
        """The client for a resolution, the local model built first when it is the one."""
        if (
            resolved.provider == "local"
            and resolved.degraded_reason is None
            and resolved.model not in self._locals
        ):
            try:
                await asyncio.to_thread(self.local, resolved.model)
            except (ModelCardError, OSError) as exc:
                return RefusingClient(self._unloadable(resolved, exc), resolved.dims)
        return self.client(resolved)

    @property
    def local_loaded(self) -> bool:
        return LocalMiniLM.MODEL_NAME in self._locals

    @property
    def loaded(self) -> frozenset[str]:
        """The local models (built-in or mounted) loaded in this process."""
        return frozenset(self._locals)

    async def warm(self, model: str = LocalMiniLM.MODEL_NAME) -> None:
        """Build (or load the cached graph of) a local model off the event loop."""
        await asyncio.to_thread(self.local, model)

    @staticmethod
    def _unloadable(resolved: ResolvedEmbedding, exc: Exception) -> EmbeddingNotConfiguredError:
        log.error("mounted model %s cannot be loaded: %s", resolved.model, exc)
        return EmbeddingNotConfiguredError(
            f"The model '{resolved.model}' of collection '{resolved.collection_name}' cannot "
            "be loaded on this deployment; the service log says why"
        )

    def client(self, resolved: ResolvedEmbedding) -> EmbeddingClient:
        if resolved.degraded_reason is not None:
            return RefusingClient(resolved.refusal(), resolved.dims)
        if resolved.provider == "local":
            try:
                local = self.local(resolved.model)
            except (ModelCardError, OSError) as exc:
                return RefusingClient(self._unloadable(resolved, exc), resolved.dims)
            if local.dimensions != resolved.dims:
                return RefusingClient(
                    EmbeddingProviderError(
                        f"The model '{resolved.model}' embeds at width {local.dimensions}; "
                        f"collection '{resolved.collection_name}' stores {resolved.dims}"
                    ),
                    resolved.dims,
                )
            return local
        return HttpEmbeddingClient(
            resolved, self.pinned_http() if resolved.public_only else self.http()
        )

    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(
                timeout=self._timeout(),
                follow_redirects=False,  # a redirect must not carry the key elsewhere
                limits=_LIMITS,
            )
        return self._http

    def pinned_http(self) -> httpx.AsyncClient:
        """The client for organizations' endpoints: each host resolved, checked and pinned
        (no environment proxy: the connection goes to the address checked)."""
        if self._pinned is None:
            wire = httpx.AsyncHTTPTransport(limits=_LIMITS)
            self._pinned = httpx.AsyncClient(
                timeout=self._timeout(),
                follow_redirects=False,  # nor an endpoint's request to an unchecked address
                transport=PinnedTransport(
                    allow_private=False, inner=wire, pin_ttl_s=ENDPOINT_PIN_TTL_S
                ),
            )
        return self._pinned

    def _timeout(self) -> httpx.Timeout:
        seconds = self._settings.embedder.request_timeout_s
        return httpx.Timeout(seconds, connect=min(10.0, seconds))

    def local(self, model: str = LocalMiniLM.MODEL_NAME) -> LocalEmbeddingClient:
        """The in-process client of the built-in model or of a mounted one (loaded once;
        a mounted model that cannot be loaded raises ``ModelCardError``)."""
        with self._lock:
            client = self._locals.get(model)
            if client is None:
                encoder: WindowedEncoder
                if model == LocalMiniLM.MODEL_NAME:
                    encoder = LocalMiniLM(
                        cache_dir=self._cache_dir,
                        threads=self._threads,
                        batch_tokens=self._batch_tokens,
                    )
                else:
                    root = self._settings.embedder.models_dir
                    mounted = mounted_models(root).get(model) if root is not None else None
                    if mounted is None:
                        raise ModelCardError(f"no mounted model is named {model!r}")
                    encoder = MountedModel(mounted, self._threads, self._batch_tokens)
                if self._local_pool is None:
                    self._local_pool = BlockingPool(1, name="docproc-embed-local")
                client = self._locals[model] = LocalEmbeddingClient(encoder, self._local_pool)
            return client

    async def aclose(self) -> None:
        await self.rerankers.aclose()
        for http in (self._http, self._pinned):
            if http is not None:
                await http.aclose()
        self._http = self._pinned = None
        if self._local_pool is not None:
            pool, self._local_pool = self._local_pool, None
            self._locals.clear()
            await asyncio.to_thread(pool.shutdown)
