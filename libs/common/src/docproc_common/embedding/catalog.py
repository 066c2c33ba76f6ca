"""The embedding catalog: which provider serves which model, at which width and input window.

``catalog.json`` beside this module is the packaged catalog; a deployment may add
models to its providers with ``EMBEDDER__CATALOG_PATH`` (a file of the same shape),
e.g. the models an OpenAI-compatible gateway of its own serves. Providers are code
paths and cannot be added that way.

Per provider: ``credential`` says what a collection on it names (``secret``: a vault
``api_key`` of that provider; ``endpoint``: a registered keyless service; ``none``),
``base_url`` is the default endpoint, ``base_url_hosts`` the hosts a collection's own
``embedding_base_url`` may name without the deployment's allowlist, and
``max_inputs_per_request`` / ``max_tokens_per_request`` bound one HTTP request.

Per model: ``dimensions``, ``max_input_tokens`` and ``space``, the model's identity
across providers: two catalog entries with the same ``space`` and width produce
vectors of one embedding space, which is what lets ``PATCH /kb/{id}`` move a
collection between providers without re-indexing.

The models a deployment mounts (``EMBEDDER__MODELS_DIR``, ``mounted``) are added to the
``local`` provider under their cards' names, at their cards' width and window.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from docproc_common.errors import FieldError, InvalidInput

Credential = Literal["secret", "endpoint", "none"]


@dataclass(frozen=True, slots=True)
class ModelSpec:
    provider: str
    model: str
    dimensions: int
    max_input_tokens: int
    space: str


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    name: str
    label: str
    credential: Credential
    base_url: str | None
    base_url_hosts: tuple[str, ...]
    max_inputs_per_request: int
    max_tokens_per_request: int | None
    models: dict[str, ModelSpec]

    @property
    def keyless(self) -> bool:
        return self.credential != "secret"

    @property
    def supports_base_url(self) -> bool:
        """Whether a collection may name its own endpoint (``embedding_base_url``)."""
        return self.credential == "secret"

    def model_in_space(self, space: str, dimensions: int) -> ModelSpec | None:
        for spec in self.models.values():
            if spec.space == space and spec.dimensions == dimensions:
                return spec
        return None


Catalog = dict[str, ProviderSpec]


def _models(provider: str, raw: dict[str, Any]) -> dict[str, ModelSpec]:
    return {
        m: ModelSpec(
            provider,
            m,
            int(v["dimensions"]),
            int(v["max_input_tokens"]),
            str(v.get("space") or f"{provider}/{m}"),
        )
        for m, v in raw.items()
    }


def _parse(raw: dict[str, Any]) -> Catalog:
    out: Catalog = {}
    for name, spec in raw["providers"].items():
        credential = spec["credential"]
        if credential not in ("secret", "endpoint", "none"):
            raise ValueError(f"provider {name}: unknown credential {credential!r}")
        out[name] = ProviderSpec(
            name=name,
            label=spec["label"],
            credential=credential,
            base_url=spec.get("base_url"),
            base_url_hosts=tuple(spec.get("base_url_hosts", ())),
            max_inputs_per_request=int(spec.get("max_inputs_per_request", 64)),
            max_tokens_per_request=(
                int(spec["max_tokens_per_request"]) if spec.get("max_tokens_per_request") else None
            ),
            models=_models(name, spec["models"]),
        )
    return out


def _with_mounted(providers: Catalog, models_dir: Path) -> Catalog:
    from docproc_common.embedding.mounted import mounted_models

    base = providers["local"]
    mounted = {
        name: ModelSpec("local", name, m.card.dimensions, m.card.window, m.space)
        for name, m in mounted_models(models_dir).items()
    }
    local = ProviderSpec(
        name=base.name,
        label=base.label,
        credential=base.credential,
        base_url=base.base_url,
        base_url_hosts=base.base_url_hosts,
        max_inputs_per_request=base.max_inputs_per_request,
        max_tokens_per_request=base.max_tokens_per_request,
        models={**base.models, **mounted},
    )
    return {**providers, "local": local}


@lru_cache(maxsize=8)
def load_catalog(extra: Path | None = None, models_dir: Path | None = None) -> Catalog:
    """The packaged catalog, plus the models of ``extra`` and the models mounted under
    ``models_dir`` when given (cached per paths; a bad mounted model raises
    ``mounted.ModelCardError``)."""
    packaged = json.loads(resources.files(__package__).joinpath("catalog.json").read_text())
    providers = _parse(packaged)
    if models_dir is not None:
        providers = _with_mounted(providers, models_dir)
    if extra is None:
        return providers
    added = json.loads(Path(extra).read_text())
    for name, spec in added.get("providers", {}).items():
        if name not in providers:
            raise ValueError(f"{extra}: unknown provider {name!r} (models may only be added)")
        base = providers[name]
        providers[name] = ProviderSpec(
            name=base.name,
            label=base.label,
            credential=base.credential,
            base_url=base.base_url,
            base_url_hosts=base.base_url_hosts,
            max_inputs_per_request=base.max_inputs_per_request,
            max_tokens_per_request=base.max_tokens_per_request,
            models={**base.models, **_models(name, spec.get("models", {}))},
        )
    return providers


def catalog(extra: Path | None = None, models_dir: Path | None = None) -> Catalog:
    return load_catalog(extra, models_dir)


def provider_spec(provider: str, cat: Catalog | None = None) -> ProviderSpec:
    providers = cat if cat is not None else catalog()
    spec = providers.get(provider)
    if spec is None:
        raise InvalidInput(
            f"Unknown embedding provider '{provider}'",
            fields=[FieldError("embedding_provider", f"must be one of {sorted(providers)}")],
        )
    return spec


def model_spec(provider: str, model: str, cat: Catalog | None = None) -> ModelSpec:
    """The catalog entry for (provider, model); a 400 naming the field otherwise."""
    pspec = provider_spec(provider, cat)
    spec = pspec.models.get(model)
    if spec is None:
        raise InvalidInput(
            f"Provider '{provider}' does not serve the model '{model}'",
            fields=[FieldError("embedding_model", f"must be one of {sorted(pspec.models)}")],
        )
    return spec
