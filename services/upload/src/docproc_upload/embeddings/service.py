"""A collection's embeddings: the catalog, registered keyless endpoints, choosing at creation,
moving between providers.

Rules (seed: "Embeddings - the model, whose endpoint answers and whose key pays"):

* **Model and width** are chosen at creation from the catalog and never change; there
  is no deployment default. A knowledge base created on an existing collection name
  adopts that collection's model, width and provider (and, in the same organization,
  its key and endpoint); an explicit choice that contradicts them is refused, so one
  table never holds two embedding spaces.
* **Provider** is movable (``PATCH /kb/{id}``, ``move_embedding``) to one that serves the same model at
  the same width (the catalog's ``space``); everything indexed stays valid.
* **Credential**: a keyed provider names a vault ``api_key`` of that provider
  (``embedding_secret_id``). Binding a key lends it, so the caller must be able to
  see it (own, or shared with the organization and ``secrets:view``); a key of
  another organization, of another purpose, or one the caller cannot see is refused
  with one and the same "not found" answer, so the refusal enumerates nothing.
  ``ollama`` is keyless and names a registered endpoint (``embedding_endpoint_id``)
  instead; naming a key with it is refused. An app-scoped collection has no vault:
  it may only use a keyless provider on a deployment-wide endpoint.
* **Endpoint**: a keyed provider may name its own ``embedding_base_url`` within the
  provider's hosts or the deployment's allowlist (it receives the key). Changing it
  while a key is bound sends that key elsewhere, so it needs what binding the key needs
  (``credentials.service.may_repoint``, else a 403 naming ``embedding_base_url``). Such an
  endpoint is asked which models it serves (``GET {base_url}/models``); a model it
  does not list is refused, in ``embedding_model`` at creation and in
  ``embedding_base_url`` on a move. An endpoint that cannot be asked is "unconfirmed",
  never a refusal.

Registered endpoints: an organization's members with ``collections:edit`` register
and delete their organization's; the app admin registers and deletes deployment-wide
ones (``scope: "deployment"``). One still named by a collection cannot be deleted. An
organization's endpoint receives its members' chunk text from inside the deployment, so its
address must be public (``docproc_common.egress``; checked literally here, resolved and
pinned at each request) unless ``EMBEDDER__ALLOW_PRIVATE_ENDPOINTS``; a deployment-wide one
is the operator's and free-form.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import httpx
from docproc_common.auth import EDIT, Principal
from docproc_common.db.models import EmbeddingEndpoint, KnowledgeBase, Scope
from docproc_common.egress.rules import literal_refusal
from docproc_common.embedding.catalog import (
    Catalog,
    ModelSpec,
    ProviderSpec,
    catalog,
    model_spec,
    provider_spec,
)
from docproc_common.errors import Conflict, FieldError, Forbidden, InvalidInput, NotFound
from docproc_common.rerank.client import RERANK_PROVIDERS, RerankConfig
from docproc_common.settings import Settings
from docproc_common.vault import SecretKind
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.audit import record
from docproc_upload.credentials.repository import lendable_secret
from docproc_upload.credentials.service import may_repoint
from docproc_upload.embeddings import repository
from docproc_upload.embeddings.base_urls import check_base_url, normalize_url
from docproc_upload.embeddings.schemas import (
    EmbeddingCatalogOut,
    EmbeddingEndpointCreate,
    EmbeddingModelOut,
    EmbeddingProviderOut,
    ServedModelsOut,
)
from docproc_upload.knowledge_bases.schemas import KnowledgeBasePatch, RerankSetting

log = logging.getLogger(__name__)


#: The fields of ``PATCH /kb/{id}`` that ``move_embedding`` decides.
EMBEDDING_FIELDS = frozenset(
    {
        "embedding_provider",
        "embedding_model",
        "embedding_secret_id",
        "embedding_base_url",
        "embedding_endpoint_id",
    }
)


# -- asking an endpoint -------------------------------------------------------------------


async def served_models(base_url: str, timeout_s: float) -> set[str] | None:
    """The model ids ``GET {base_url}/models`` lists; None when the endpoint cannot be asked."""
    try:
        async with httpx.AsyncClient(timeout=timeout_s, follow_redirects=False) as http:
            response = await http.get(f"{base_url.rstrip('/')}/models")
        if response.status_code != 200:
            log.info("model listing at %s answered HTTP %s", base_url, response.status_code)
            return None
        data = response.json().get("data")
        if not isinstance(data, list):
            return None
        return {str(m["id"]) for m in data if isinstance(m, dict) and "id" in m}
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        log.info("model listing at %s is unconfirmed: %s", base_url, type(exc).__name__)
        return None


# -- choosing ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EmbeddingChoice:
    provider: str
    model: str
    dimensions: int
    secret_id: uuid.UUID | None
    base_url: str | None
    endpoint_id: uuid.UUID | None


def _key_not_found(provider: str) -> InvalidInput:
    # One answer for absent, another organization's, another purpose's and invisible keys.
    return InvalidInput(
        f"No {provider} API key with this id was found in the vault",
        fields=[FieldError("embedding_secret_id", "not found")],
    )


def _endpoint_not_found() -> InvalidInput:
    return InvalidInput(
        "No registered embedding endpoint with this id was found",
        fields=[FieldError("embedding_endpoint_id", "not found")],
    )


async def _check_credential(
    session: AsyncSession,
    principal: Principal,
    settings: Settings,
    pspec: ProviderSpec,
    spec: ModelSpec,
    *,
    scope: Scope,
    organization_id: str | None,
    secret_id: uuid.UUID | None,
    base_url: str | None,
    endpoint_id: uuid.UUID | None,
    check_secret: bool,
    check_endpoint: bool,
    probe_field: str | None,
) -> str | None:
    """Refuse what ``pspec`` does not accept; returns the normalized base URL."""
    if pspec.credential != "secret":
        if secret_id is not None:
            raise InvalidInput(
                f"The provider '{pspec.name}' needs no key; a collection on it names none",
                fields=[FieldError("embedding_secret_id", f"not accepted with {pspec.name}")],
            )
        if base_url is not None:
            check_base_url(base_url, pspec, [])  # raises: keyless providers take no base URL
    if pspec.credential == "none":
        if endpoint_id is not None:
            raise InvalidInput(
                f"The provider '{pspec.name}' runs in-process and names no endpoint",
                fields=[FieldError("embedding_endpoint_id", f"not accepted with {pspec.name}")],
            )
        return None
    if pspec.credential == "endpoint":
        if endpoint_id is None:
            raise InvalidInput(
                f"A collection on '{pspec.name}' names a registered embedding endpoint",
                fields=[FieldError("embedding_endpoint_id", "required")],
            )
        if check_endpoint:
            endpoint = await repository.endpoint(session, endpoint_id)
            allowed_orgs: tuple[str | None, ...] = (
                (None,) if scope is Scope.APP else (None, organization_id)
            )
            if endpoint is None or endpoint.organization_id not in allowed_orgs:
                raise _endpoint_not_found()
        return None
    # a keyed provider
    if scope is Scope.APP:
        raise InvalidInput(
            "An app-scoped collection has no vault to name a key from; choose a keyless "
            "provider (ollama on a deployment-wide endpoint, or local)",
            fields=[FieldError("embedding_provider", "needs a key; not for app scope")],
        )
    if endpoint_id is not None:
        raise InvalidInput(
            f"The provider '{pspec.name}' is reached with a key, not a registered endpoint",
            fields=[FieldError("embedding_endpoint_id", f"not accepted with {pspec.name}")],
        )
    if secret_id is None:
        raise InvalidInput(
            f"A collection on '{pspec.name}' names the vault key that pays for its embeddings",
            fields=[FieldError("embedding_secret_id", "required")],
        )
    if check_secret and (
        await lendable_secret(
            session,
            principal,
            secret_id,
            kind=SecretKind.API_KEY,
            organization_id=organization_id,
            provider=pspec.name,
        )
        is None
    ):
        raise _key_not_found(pspec.name)
    if base_url is None:
        return None
    normalized = check_base_url(base_url, pspec, settings.embedder.allowed_base_urls)
    if probe_field is not None:
        served = await served_models(normalized, settings.embedder.probe_timeout_s)
        if served is not None and spec.model not in served:
            raise InvalidInput(
                f"The endpoint {normalized} does not serve the model '{spec.model}'",
                fields=[FieldError(probe_field, "the endpoint does not serve this model")],
            )
    return normalized


async def choose_embedding(
    session: AsyncSession,
    principal: Principal,
    settings: Settings,
    *,
    scope: Scope,
    organization_id: str | None,
    provider: str | None,
    model: str | None,
    secret_id: uuid.UUID | None,
    base_url: str | None,
    endpoint_id: uuid.UUID | None,
    existing: Sequence[KnowledgeBase],
) -> EmbeddingChoice:
    """What a new knowledge base embeds with (``existing``: the rows already on its name)."""
    cat = catalog(settings.embedder.catalog_path, settings.embedder.models_dir)
    adopted = False
    if existing:
        first = existing[0]
        name = first.collection_name
        for field, mine, theirs in (
            ("embedding_provider", provider, first.embedding_provider),
            ("embedding_model", model, first.embedding_model),
        ):
            if mine is not None and mine != theirs:
                raise InvalidInput(
                    f"The collection '{name}' embeds with "
                    f"{first.embedding_provider}/{first.embedding_model} "
                    f"({first.embedding_dim} dims); a knowledge base on the same name adopts it",
                    fields=[FieldError(field, "contradicts the existing collection")],
                )
        pspec = provider_spec(first.embedding_provider, cat)
        spec = pspec.models.get(first.embedding_model) or ModelSpec(
            first.embedding_provider,
            first.embedding_model,
            first.embedding_dim,
            8191,
            f"{first.embedding_provider}/{first.embedding_model}",
        )
        same_org = [kb for kb in existing if kb.organization_id == organization_id]
        if base_url is not None:
            base_url = normalize_url(base_url, field="embedding_base_url")
        if same_org:
            source = same_org[0]
            adopted_fields: tuple[tuple[str, object, object], ...] = (
                ("embedding_secret_id", secret_id, source.embedding_secret_id),
                ("embedding_base_url", base_url, source.embedding_base_url),
                ("embedding_endpoint_id", endpoint_id, source.embedding_endpoint_id),
            )
            for attr, given_, kept in adopted_fields:
                if given_ is not None and given_ != kept:
                    raise InvalidInput(
                        f"The collection '{name}' already names its "
                        f"{attr.removeprefix('embedding_').replace('_', ' ')}; a knowledge "
                        "base on the same name adopts it",
                        fields=[FieldError(attr, "contradicts the existing collection")],
                    )
            secret_id = source.embedding_secret_id
            base_url = source.embedding_base_url
            endpoint_id = source.embedding_endpoint_id
            adopted = True
        dims = first.embedding_dim
    else:
        missing = [
            FieldError(f, "required for a new collection")
            for f, v in (("embedding_provider", provider), ("embedding_model", model))
            if v is None
        ]
        if missing:
            raise InvalidInput(
                "A new collection chooses its embedding provider and model", fields=missing
            )
        assert provider is not None
        assert model is not None
        spec = model_spec(provider, model, cat)
        pspec = provider_spec(provider, cat)
        dims = spec.dimensions
    normalized = await _check_credential(
        session,
        principal,
        settings,
        pspec,
        spec,
        scope=scope,
        organization_id=organization_id,
        secret_id=secret_id,
        base_url=base_url,
        endpoint_id=endpoint_id,
        check_secret=not adopted,
        check_endpoint=not adopted or scope is Scope.APP,
        probe_field=None if adopted else "embedding_model",
    )
    return EmbeddingChoice(
        provider=pspec.name,
        model=spec.model,
        dimensions=dims,
        secret_id=secret_id,
        base_url=base_url if adopted else normalized,
        endpoint_id=endpoint_id,
    )


async def move_embedding(
    session: AsyncSession,
    principal: Principal,
    settings: Settings,
    kb: KnowledgeBase,
    patch: KnowledgeBasePatch,
) -> KnowledgeBase:
    """Move a collection (resolved for editing) to another provider, key or endpoint serving
    the same model."""
    cat: Catalog = catalog(settings.embedder.catalog_path, settings.embedder.models_dir)
    given = patch.model_fields_set
    target = patch.embedding_provider or kb.embedding_provider
    pspec = provider_spec(target, cat)
    current = cat.get(kb.embedding_provider)
    current_spec = current.models.get(kb.embedding_model) if current else None
    space = current_spec.space if current_spec else f"{kb.embedding_provider}/{kb.embedding_model}"
    moving = target != kb.embedding_provider
    spec = pspec.model_in_space(space, kb.embedding_dim)
    if spec is None:
        raise InvalidInput(
            f"The provider '{target}' does not serve the model '{kb.embedding_model}' at "
            f"{kb.embedding_dim} dimensions; a collection's model is fixed at creation",
            fields=[FieldError("embedding_provider", "does not serve the collection's model")],
        )
    if patch.embedding_model is not None and patch.embedding_model not in (
        spec.model,
        kb.embedding_model,
    ):
        raise InvalidInput(
            "A collection's model is fixed at creation; create a new collection for another",
            fields=[FieldError("embedding_model", "cannot change")],
        )
    secret_id = patch.embedding_secret_id if "embedding_secret_id" in given else None
    if not moving and "embedding_secret_id" not in given:
        secret_id = kb.embedding_secret_id
    base_url = patch.embedding_base_url if "embedding_base_url" in given else None
    if not moving and "embedding_base_url" not in given:
        base_url = kb.embedding_base_url
    endpoint_id = patch.embedding_endpoint_id if "embedding_endpoint_id" in given else None
    if not moving and "embedding_endpoint_id" not in given:
        endpoint_id = kb.embedding_endpoint_id
    base_changed = "embedding_base_url" in given or moving
    repointed = "embedding_base_url" in given and kb.embedding_base_url != (
        None if base_url is None else normalize_url(base_url, field="embedding_base_url")
    )
    if repointed and secret_id is not None and not moving and "embedding_secret_id" not in given:
        # the collection's own key, sent to another address: lent again (before any probe)
        await may_repoint(
            session,
            principal,
            secret_id,
            kind=SecretKind.API_KEY,
            organization_id=kb.organization_id,
            provider=pspec.name,
            holder="this collection",
            fields=["embedding_base_url"],
        )
    normalized = await _check_credential(
        session,
        principal,
        settings,
        pspec,
        spec,
        scope=Scope(kb.scope),
        organization_id=kb.organization_id,
        secret_id=secret_id,
        base_url=base_url,
        endpoint_id=endpoint_id,
        check_secret="embedding_secret_id" in given or moving,
        check_endpoint="embedding_endpoint_id" in given or moving,
        probe_field="embedding_base_url" if base_changed else None,
    )
    before = (kb.embedding_provider, kb.embedding_secret_id, kb.embedding_base_url)
    kb.embedding_provider = pspec.name
    kb.embedding_model = spec.model
    kb.embedding_secret_id = secret_id
    kb.embedding_base_url = normalized if base_changed else base_url
    kb.embedding_endpoint_id = endpoint_id
    await record(
        session,
        principal,
        "kb.embedding_moved",
        kb,
        {
            "from_provider": before[0],
            "to_provider": kb.embedding_provider,
            "secret_changed": before[1] != kb.embedding_secret_id,
            "base_url": kb.embedding_base_url,
        },
    )
    await session.flush()
    return kb


# -- registered endpoints -----------------------------------------------------------------


def _may_manage(principal: Principal, organization_id: str | None) -> bool:
    if organization_id is None:
        return principal.app_admin
    return principal.organization_id == organization_id and principal.has(EDIT)


def _endpoint_address(base_url: str, *, org_scoped: bool, settings: Settings) -> str:
    """The normalized ``base_url``; an organization's must name no internal host (literally:
    what a name resolves to is checked at each request) unless the deployment allows it."""
    normalized = normalize_url(base_url, field="base_url")
    if org_scoped and not settings.embedder.allow_private_endpoints:
        reason = literal_refusal(normalized)
        if reason is not None:
            raise InvalidInput(
                f"The address is refused: {reason}; an organization's endpoint must be "
                "reachable at a public address",
                fields=[FieldError("base_url", reason)],
            )
    return normalized


async def register_endpoint(
    session: AsyncSession,
    principal: Principal,
    body: EmbeddingEndpointCreate,
    settings: Settings,
) -> EmbeddingEndpoint:
    org = None if body.scope == "deployment" else principal.organization_id
    if body.scope == "org" and org is None:
        raise Forbidden("An organization endpoint is registered from within an organization")
    if not _may_manage(principal, org):
        raise Forbidden(
            "Registering a deployment-wide endpoint is for the app admin"
            if org is None
            else "Registering an endpoint needs collections:edit in the organization"
        )
    endpoint = EmbeddingEndpoint(
        organization_id=org,
        name=body.name,
        base_url=_endpoint_address(body.base_url, org_scoped=org is not None, settings=settings),
        created_by=principal.user_id,
    )
    session.add(endpoint)
    await session.flush()
    await record(
        session,
        principal,
        "embedding_endpoint.registered",
        endpoint,
        {"name": endpoint.name, "base_url": endpoint.base_url},
    )
    return endpoint


async def delete_endpoint(
    session: AsyncSession, principal: Principal, endpoint_id: uuid.UUID
) -> None:
    endpoint = await repository.lock_visible_endpoint(session, principal, endpoint_id)
    if endpoint is None:
        raise NotFound("Embedding endpoint not found")
    if not _may_manage(principal, endpoint.organization_id):
        raise Forbidden("Deleting this endpoint is for whoever may register it")
    users = await repository.collections_through(session, endpoint_id)
    if users:
        raise Conflict(
            f"{users} knowledge base(s) embed through this endpoint; move them first "
            "(PATCH /kb/{id})"
        )
    await session.delete(endpoint)
    await record(session, principal, "embedding_endpoint.deleted", endpoint)


def _models_out(models: Sequence[ModelSpec]) -> list[EmbeddingModelOut]:
    return [
        EmbeddingModelOut(
            model=m.model, dimensions=m.dimensions, max_input_tokens=m.max_input_tokens
        )
        for m in models
    ]


def catalog_out(settings: Settings) -> EmbeddingCatalogOut:
    return EmbeddingCatalogOut(
        providers=[
            EmbeddingProviderOut(
                name=p.name,
                label=p.label,
                credential=p.credential,
                supports_base_url=p.supports_base_url,
                default_base_url=p.base_url,
                models=_models_out(list(p.models.values())),
            )
            for p in catalog(settings.embedder.catalog_path, settings.embedder.models_dir).values()
        ]
    )


async def served(settings: Settings, provider: str, base_url: str | None) -> ServedModelsOut:
    """The catalog models that ``base_url`` (default: the provider's) says it serves."""
    providers = catalog(settings.embedder.catalog_path, settings.embedder.models_dir)
    if provider not in providers:
        raise NotFound(f"The catalog has no embedding provider '{provider}'")
    pspec = providers[provider]
    if not pspec.supports_base_url or pspec.base_url is None:
        raise NotFound(f"The provider '{provider}' has no endpoint to ask")
    url = (
        check_base_url(base_url, pspec, settings.embedder.allowed_base_urls, field="base_url")
        if base_url
        else pspec.base_url
    )
    ids = await served_models(url, settings.embedder.probe_timeout_s)
    models = list(pspec.models.values())
    if ids is not None:
        models = [m for m in models if m.model in ids]
    return ServedModelsOut(
        provider=provider, base_url=url, confirmed=ids is not None, models=_models_out(models)
    )


# -- rerankers ---------------------------------------------------------------------------


def _rerank_key_not_found(provider: str) -> InvalidInput:
    # One answer for absent, another organization's, another purpose's and invisible keys.
    return InvalidInput(
        f"No {provider} API key with this id was found in the vault",
        fields=[FieldError("rerank.secret_id", "not found")],
    )


async def check_reranker(
    session: AsyncSession,
    principal: Principal,
    settings: Settings,
    setting: RerankSetting | None,
    *,
    scope: Scope,
    organization_id: str | None,
    kept: RerankConfig | None = None,
) -> RerankConfig | None:
    """The reranker a base may name (None: none), checked as an embedding provider and key are.

    ``local`` needs the deployment's mounted cross-encoder and takes no key or address. A
    provider's key must be one the caller may lend (``lendable_secret``: visible to them,
    an ``api_key`` of that provider, in the base's organization; one "not found" for every
    failure), unless it is the key the base already names (``kept``) at the same address;
    the same key sent to another address needs what binding it needs (``may_repoint``).
    """
    if setting is None:
        return None
    spec = RERANK_PROVIDERS.get(setting.provider)
    if spec is None:
        raise InvalidInput(
            f"Unknown rerank provider '{setting.provider}'",
            fields=[FieldError("rerank.provider", f"must be one of {sorted(RERANK_PROVIDERS)}")],
        )
    if spec.credential == "none":
        for name, value in (
            ("model", setting.model),
            ("secret_id", setting.secret_id),
            ("base_url", setting.base_url),
        ):
            if value is not None:
                raise InvalidInput(
                    f"The rerank provider '{spec.name}' is the cross-encoder this deployment "
                    f"mounts; it takes no {name}",
                    fields=[FieldError(f"rerank.{name}", f"not accepted with {spec.name}")],
                )
        if settings.embedder.rerank_model_dir is None:
            raise InvalidInput(
                "This deployment mounts no cross-encoder (EMBEDDER__RERANK_MODEL_DIR); choose "
                "a provider's reranker instead",
                fields=[FieldError("rerank.provider", "no cross-encoder on this deployment")],
            )
        return RerankConfig(spec.name)
    if scope is Scope.APP:
        raise InvalidInput(
            "An app-scoped collection has no vault to name a key from; its reranker can only "
            "be the local one",
            fields=[FieldError("rerank.provider", "needs a key; not for app scope")],
        )
    if spec.needs_model and setting.model is None:
        raise InvalidInput(
            f"A reranker on '{spec.name}' names the model it ranks with",
            fields=[FieldError("rerank.model", "required")],
        )
    if setting.secret_id is None:
        raise InvalidInput(
            f"A reranker on '{spec.name}' names the vault key that pays for it",
            fields=[FieldError("rerank.secret_id", "required")],
        )
    if setting.base_url is None and spec.base_url is None:
        raise InvalidInput(
            f"A reranker on '{spec.name}' names the address of its service",
            fields=[FieldError("rerank.base_url", "required")],
        )
    base_url = (
        check_base_url(
            setting.base_url,
            spec.as_provider(),
            settings.embedder.allowed_base_urls,
            field="rerank.base_url",
        )
        if setting.base_url is not None
        else None
    )
    config = RerankConfig(spec.name, setting.model, setting.secret_id, base_url)
    same_key = (
        kept is not None and kept.provider == config.provider and kept.secret_id == config.secret_id
    )
    if not same_key:
        lendable = await lendable_secret(
            session,
            principal,
            setting.secret_id,
            kind=SecretKind.API_KEY,
            organization_id=organization_id,
            provider=spec.name,
        )
        if lendable is None:
            raise _rerank_key_not_found(spec.name)
    elif kept is not None and kept.base_url != config.base_url:
        await may_repoint(
            session,
            principal,
            setting.secret_id,
            kind=SecretKind.API_KEY,
            organization_id=organization_id,
            provider=spec.name,
            holder="the collection's reranker",
            fields=["rerank.base_url"],
        )
    return config
