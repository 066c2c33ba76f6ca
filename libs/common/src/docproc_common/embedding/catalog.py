"""The embedding catalog: which provider serves which model, at which width and input window."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from docproc_common.errors import FieldError, InvalidInput


@dataclass(frozen=True, slots=True)
class ModelSpec:
    provider: str
    model: str
    dimensions: int
    max_input_tokens: int


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    name: str
    label: str
    keyless: bool
    base_url: str | None
    models: dict[str, ModelSpec]


@lru_cache(maxsize=1)
def catalog() -> dict[str, ProviderSpec]:
    raw = json.loads(resources.files(__package__).joinpath("catalog.json").read_text())
    out: dict[str, ProviderSpec] = {}
    for name, spec in raw["providers"].items():
        models = {
            m: ModelSpec(name, m, int(v["dimensions"]), int(v["max_input_tokens"]))
            for m, v in spec["models"].items()
        }
        out[name] = ProviderSpec(
            name, spec["label"], bool(spec["keyless"]), spec.get("base_url"), models
        )
    return out


def model_spec(provider: str, model: str) -> ModelSpec:
    """The catalog entry for (provider, model); a 400 naming the field otherwise."""
    providers = catalog()
    if provider not in providers:
        raise InvalidInput(
            f"Unknown embedding provider '{provider}'",
            fields=[FieldError("embedding_provider", f"must be one of {sorted(providers)}")],
        )
    spec = providers[provider].models.get(model)
    if spec is None:
        raise InvalidInput(
            f"Provider '{provider}' does not serve the model '{model}'",
            fields=[
                FieldError(
                    "embedding_model", f"must be one of {sorted(providers[provider].models)}"
                )
            ],
        )
    return spec
