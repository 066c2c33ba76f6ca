"""A knowledge base's ingestion configuration, and the per-upload override checked on the merged pair.

The override carries only what changes, so two individually legal numbers can
make an illegal pair (``chunk_overlap: 4096`` against a collection chunking at
2500). The merge is re-validated and refused with a 400 naming the fields,
before the file is stored and before any document row exists.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from docproc_common.errors import FieldError, InvalidInput
from docproc_common.splitters import ChunkingStrategy

ROOT = "ingestion_config"


class IngestionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    parser: Literal["pymupdf", "liteparse", "llamaparse"] = "pymupdf"
    chunk_size: int = Field(default=2500, ge=1, le=100_000)
    chunk_overlap: int = Field(default=200, ge=0)
    chunking_strategy: ChunkingStrategy = ChunkingStrategy.RECURSIVE

    @model_validator(mode="after")
    def _overlap_below_size(self) -> IngestionConfig:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError("chunk_overlap must be smaller than chunk_size")
        return self


def field_errors(exc: ValidationError, root: str = ROOT) -> list[FieldError]:
    """Pydantic errors as form fields rooted at the submitted document.

    A model-level rule (the pair) names the object itself, because Pydantic does
    not attribute an ``after`` validator to either of the fields it is about.
    """
    out: list[FieldError] = []
    for err in exc.errors():
        path = ".".join(str(p) for p in err["loc"])
        out.append(FieldError(f"{root}.{path}" if path else root, err["msg"]))
    return out


def merge_config(base: dict[str, Any], override: dict[str, Any] | None) -> IngestionConfig:
    try:
        return IngestionConfig.model_validate({**base, **(override or {})})
    except ValidationError as exc:
        raise InvalidInput(
            "The ingestion configuration is not valid", fields=field_errors(exc)
        ) from exc
