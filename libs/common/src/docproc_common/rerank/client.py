"""Rerankers: what scores a search's candidates against its query, per collection.

A collection (a knowledge base row, ``KnowledgeBase.rerank``) names a reranker or none
(the default: no rerank stage). Providers (``RERANK_PROVIDERS``), chosen like an
embedding provider (``docproc_upload.embeddings.service.check_reranker``):

* ``local``: the cross-encoder the deployment mounts (``EMBEDDER__RERANK_MODEL_DIR``),
  run in the searching process on its own single-worker pool; keyless.
* ``cohere`` (``POST {base_url}/rerank``, Cohere's v2 API: ``model``, ``query``,
  ``documents``, ``top_n``; answer ``results[].index`` / ``relevance_score``) and ``jina``
  (Jina's ``/v1/rerank``, the same shape): a vault ``api_key`` of that provider, sent as
  a bearer token, at the provider's own host or the collection's ``base_url``.
* ``tei``: Hugging Face Text Embeddings Inference's ``POST {base_url}/rerank``
  (``query``, ``texts``; answer ``[{index, score}]``), at a ``base_url`` the deployment
  allows (``EMBEDDER__ALLOWED_BASE_URLS``), with a vault key sent as its bearer token
  (TEI's ``--api-key``).

Resolution (``resolve_reranker``) refuses nothing, as the embedding one: a key that was
deleted, cannot be opened or holds no key of the provider, or a ``local`` reranker on a
deployment that mounts none, resolves *degraded*, and the search refuses with
``RerankNotConfiguredError`` (409) naming the collection and the case. A provider's
answer is mapped as an embedding provider's is: 401/403 the key was rejected, 404 the
endpoint or model is not there, other 4xx a refused request (502 each, the answer in
the log only); 408/409/425/429, 5xx, timeouts and unreachable hosts are
``RerankProviderUnavailable`` (503, try again).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import httpx
import numpy as np
import numpy.typing as npt
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_common.blocking import BlockingPool
from docproc_common.db.models import KnowledgeBase
from docproc_common.embedding.catalog import ProviderSpec
from docproc_common.errors import AppError, RetryableError
from docproc_common.rerank.cross_encoder import CrossEncoder, CrossEncoderMissing
from docproc_common.settings import Settings
from docproc_common.vault import SecretKind, VaultError, secret_in_org, unseal

log = logging.getLogger(__name__)

Wire = Literal["local", "cohere", "tei"]


@dataclass(frozen=True, slots=True)
class RerankProvider:
    name: str
    label: str
    credential: Literal["none", "secret"]
    wire: Wire
    base_url: str | None = None
    base_url_hosts: tuple[str, ...] = ()
    #: Whether a collection names the model (Cohere and Jina serve several; TEI one).
    needs_model: bool = False

    def as_provider(self) -> ProviderSpec:
        """The shape ``embeddings.base_urls.check_base_url`` checks an address against."""
        return ProviderSpec(
            name=self.name,
            label=self.label,
            credential=self.credential,
            base_url=self.base_url,
            base_url_hosts=self.base_url_hosts,
            max_inputs_per_request=0,
            max_tokens_per_request=None,
            models={},
        )


RERANK_PROVIDERS: Mapping[str, RerankProvider] = {
    p.name: p
    for p in (
        RerankProvider("local", "Cross-encoder mounted on this deployment", "none", "local"),
        RerankProvider(
            "cohere",
            "Cohere",
            "secret",
            "cohere",
            "https://api.cohere.com/v2",
            ("api.cohere.com",),
            needs_model=True,
        ),
        RerankProvider(
            "jina",
            "Jina AI",
            "secret",
            "cohere",
            "https://api.jina.ai/v1",
            ("api.jina.ai",),
            needs_model=True,
        ),
        RerankProvider("tei", "Text Embeddings Inference (your own)", "secret", "tei"),
    )
}


@dataclass(frozen=True, slots=True)
class RerankConfig:
    """What ``KnowledgeBase.rerank`` holds (JSON); null there is "no reranker"."""

    provider: str
    model: str | None = None
    secret_id: uuid.UUID | None = None
    base_url: str | None = None

    @classmethod
    def of(cls, raw: Mapping[str, Any] | None) -> RerankConfig | None:
        if not raw:
            return None
        secret = raw.get("secret_id")
        return cls(
            provider=str(raw["provider"]),
            model=raw.get("model"),
            secret_id=uuid.UUID(str(secret)) if secret else None,
            base_url=raw.get("base_url"),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "secret_id": str(self.secret_id) if self.secret_id else None,
            "base_url": self.base_url,
        }


class RerankNotConfiguredError(AppError):
    """The collection's reranker has no usable key or model: refused before any call."""

    status_code = 409
    code = "RERANK_NOT_CONFIGURED"


class RerankProviderError(AppError):
    status_code = 502
    code = "RERANK_PROVIDER_ERROR"


class RerankCredentialRejectedError(RerankProviderError):
    code = "RERANK_CREDENTIAL_REJECTED"


class RerankEndpointNotFoundError(RerankProviderError):
    code = "RERANK_ENDPOINT_NOT_FOUND"


class RerankProviderUnavailable(RetryableError):
    """The provider timed out, could not be reached, or answered 408/409/425/429/5xx."""


@dataclass(frozen=True, slots=True)
class ResolvedReranker:
    collection_name: str
    provider: str
    model: str | None
    base_url: str | None
    api_key: str | None = field(repr=False)
    #: Why it cannot rerank (None: it can).
    degraded: str | None = None

    def refusal(self) -> RerankNotConfiguredError:
        return RerankNotConfiguredError(
            f"The reranker of collection '{self.collection_name}' ({self.provider}) cannot "
            f"be used: {self.degraded}"
        )


async def resolve_reranker(
    session: AsyncSession, kb: KnowledgeBase, settings: Settings
) -> ResolvedReranker | None:
    """What ``kb`` reranks with (None: no reranker), its key opened for ``kb``'s own
    organization; never raises for a missing key (see the module docstring)."""
    config = RerankConfig.of(kb.rerank)
    if config is None:
        return None
    spec = RERANK_PROVIDERS.get(config.provider)

    def resolved(degraded: str | None = None, key: str | None = None) -> ResolvedReranker:
        if degraded is not None:
            log.warning(
                "reranker of collection %s (%s, org %s) degraded: %s",
                kb.collection_name,
                config.provider,
                kb.organization_id,
                degraded,
            )
        return ResolvedReranker(
            kb.collection_name,
            config.provider,
            config.model,
            config.base_url or (spec.base_url if spec else None),
            key,
            degraded,
        )

    if spec is None:
        return resolved("this deployment does not offer the provider")
    if spec.credential == "none":
        if settings.embedder.rerank_model_dir is None:
            return resolved("this deployment mounts no cross-encoder")
        return resolved()
    if config.secret_id is None:
        return resolved("the collection names no key")
    secret = await secret_in_org(session, config.secret_id, kb.organization_id)
    if secret is None:
        return resolved("the secret was deleted")
    try:
        value = unseal(secret, settings.vault.key())
    except VaultError as exc:
        log.warning("secret %s of collection %s: %s", secret.id, kb.collection_name, exc)
        return resolved("the secret could not be opened")
    key = value.get("api_key")
    if (
        secret.kind != SecretKind.API_KEY
        or secret.provider != config.provider
        or not isinstance(key, str)
        or not key
    ):
        return resolved("the secret holds no API key for this provider")
    return resolved(None, key)


class Reranker(Protocol):
    async def rerank(self, query: str, passages: list[str]) -> npt.NDArray[np.float64]:
        """Each passage's relevance to ``query`` (higher is better), in the passages' order."""
        ...


class LocalReranker:
    """The mounted cross-encoder on its own single-worker pool (off the event loop)."""

    def __init__(self, model: CrossEncoder, pool: BlockingPool) -> None:
        self._model = model
        self._pool = pool
        #: The name the model answers to (its card's, else its directory's).
        self.name = model.name

    async def rerank(self, query: str, passages: list[str]) -> npt.NDArray[np.float64]:
        if not passages:
            return np.zeros(0, dtype=np.float64)
        return await self._pool.run(self._model.score, query, passages)


class HttpReranker:
    """A provider's ``POST {base_url}/rerank`` (Cohere/Jina or TEI shape)."""

    def __init__(self, resolved: ResolvedReranker, wire: Wire, http: httpx.AsyncClient) -> None:
        if resolved.base_url is None:
            raise ValueError("an HTTP reranker needs a base URL")
        self._r = resolved
        self._wire = wire
        self._http = http
        self._url = resolved.base_url.rstrip("/") + "/rerank"

    async def rerank(self, query: str, passages: list[str]) -> npt.NDArray[np.float64]:
        if not passages:
            return np.zeros(0, dtype=np.float64)
        r = self._r
        body: dict[str, Any]
        if self._wire == "tei":
            body = {"query": query, "texts": passages, "raw_scores": False, "truncate": True}
        else:
            body = {"model": r.model, "query": query, "documents": passages}
            body["top_n"] = len(passages)
        headers = {"Authorization": f"Bearer {r.api_key}"} if r.api_key else {}
        try:
            response = await self._http.post(self._url, json=body, headers=headers)
        except httpx.TimeoutException:
            log.warning("rerank provider %s timed out (%s)", r.provider, r.collection_name)
            raise RerankProviderUnavailable(
                f"The rerank provider '{r.provider}' did not answer in time"
            ) from None
        except httpx.TransportError as exc:
            log.warning("rerank provider %s unreachable: %r", r.provider, exc)
            raise RerankProviderUnavailable(
                f"The rerank provider '{r.provider}' could not be reached"
            ) from None
        if response.status_code != 200:
            self._raise_for(response.status_code, response.text)
        try:
            payload = response.json()
        except ValueError:
            payload = None
        return self._scores(payload, len(passages))

    def _raise_for(self, status: int, text: str) -> None:
        r = self._r
        log.warning(
            "rerank provider %s answered HTTP %s for collection %s: %s",
            r.provider,
            status,
            r.collection_name,
            text[:1000],
        )
        if status in (401, 403):
            raise RerankCredentialRejectedError(
                f"The rerank provider '{r.provider}' rejected the key of collection "
                f"'{r.collection_name}' (HTTP {status}) - replace the key in the vault or "
                "name another one in the collection's rerank setting"
            )
        if status == 404:
            raise RerankEndpointNotFoundError(
                f"The rerank endpoint of collection '{r.collection_name}' ({r.provider}) does "
                f"not serve /rerank or the model '{r.model}' (HTTP 404) - correct the "
                "collection's rerank setting"
            )
        if status in (408, 409, 425, 429) or status >= 500:
            raise RerankProviderUnavailable(
                f"The rerank provider '{r.provider}' is unavailable (HTTP {status})"
            )
        raise RerankProviderError(
            f"The rerank provider '{r.provider}' refused the request of collection "
            f"'{r.collection_name}' (HTTP {status}); the log has its answer"
        )

    def _scores(self, payload: Any, count: int) -> npt.NDArray[np.float64]:
        r = self._r
        items = (
            payload
            if self._wire == "tei"
            else (payload.get("results") if isinstance(payload, dict) else None)
        )
        score_key = "score" if self._wire == "tei" else "relevance_score"
        unreadable = RerankProviderError(
            f"The rerank provider '{r.provider}' answered collection '{r.collection_name}' "
            "with something that is not a ranking of the passages sent"
        )
        if not isinstance(items, list) or len(items) != count:
            log.warning("rerank provider %s: unreadable answer %.500r", r.provider, payload)
            raise unreadable
        out = np.full(count, np.nan, dtype=np.float64)
        for item in items:
            index = item.get("index") if isinstance(item, dict) else None
            score = item.get(score_key) if isinstance(item, dict) else None
            if (
                not isinstance(index, int)
                or not 0 <= index < count
                or not np.isnan(out[index])
                or not isinstance(score, int | float)
            ):
                log.warning("rerank provider %s: unreadable item %.200r", r.provider, item)
                raise unreadable
            out[index] = float(score)
        return out


class Rerankers:
    """Opens a collection's reranker: one mounted cross-encoder per process (loaded on first
    use, off the event loop) and the HTTP pool ``http`` gives."""

    def __init__(self, settings: Settings, http: Callable[[], httpx.AsyncClient]) -> None:
        self._settings = settings
        self._http = http
        self._local: LocalReranker | None = None
        self._pool: BlockingPool | None = None
        self._lock = threading.Lock()

    async def resolve(self, session: AsyncSession, kb: KnowledgeBase) -> ResolvedReranker | None:
        return await resolve_reranker(session, kb, self._settings)

    async def open(self, resolved: ResolvedReranker) -> Reranker:
        """The reranker of a resolution; its refusal when it is degraded or the mounted
        directory holds no model."""
        if resolved.degraded is not None:
            raise resolved.refusal()
        spec = RERANK_PROVIDERS[resolved.provider]
        if spec.wire != "local":
            return HttpReranker(resolved, spec.wire, self._http())
        try:
            return await asyncio.to_thread(self.local)
        except CrossEncoderMissing as exc:
            log.error("the mounted cross-encoder cannot be loaded: %s", exc)
            raise RerankNotConfiguredError(
                f"The reranker of collection '{resolved.collection_name}' (local) cannot be "
                "used: the cross-encoder this deployment mounts cannot be loaded (the log "
                "says why)"
            ) from None

    def local(self) -> LocalReranker:
        """The mounted cross-encoder (``CrossEncoderMissing`` when there is none to load)."""
        with self._lock:
            if self._local is None:
                directory = self._settings.embedder.rerank_model_dir
                if directory is None:
                    raise CrossEncoderMissing("EMBEDDER__RERANK_MODEL_DIR is not set")
                model = CrossEncoder(directory, self._settings.embedder.rerank_threads)
                self._pool = BlockingPool(1, name="docproc-rerank-local")
                self._local = LocalReranker(model, self._pool)
            return self._local

    async def aclose(self) -> None:
        if self._pool is not None:
            pool, self._pool, self._local = self._pool, None, None
            await asyncio.to_thread(pool.shutdown)
