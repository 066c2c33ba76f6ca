"""A client's ingestion configuration: a collection's, or a per-upload override checked on
the merged pair (``docproc_common.ingestion.IngestionConfig``).

The override carries only what changes, so two individually legal numbers can
make an illegal pair (``chunk_overlap: 4096`` against a collection chunking at
2500). The merge is re-validated and refused with a 400 naming the fields,
before the file is stored and before any document row exists.
"""

from __future__ import annotations

from typing import Any

from docproc_common.errors import FieldError, InvalidInput
from docproc_common.ingestion import IngestionConfig
from pydantic import ValidationError

ROOT = "ingestion_config"


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
    """The collection's configuration with the upload's changes on top, validated as one.

    A ``vision_profile`` in the override replaces the collection's whole profile
    (it is one choice: endpoint, model and key belong together).
    """
    try:
        return IngestionConfig.model_validate({**base, **(override or {})})
    except ValidationError as exc:
        raise InvalidInput(
            "The ingestion configuration is not valid", fields=field_errors(exc)
        ) from exc
