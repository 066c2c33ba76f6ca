"""A knowledge base's ingestion configuration (the API checks a client's against it,
``docproc_upload.ingestion_config``; the parser, sync and the CLI read it).

Field names are the seed's (see "Opciones de LiteParse" and "Configuración de
la fragmentación"); docs/parsing.md says what each one does on each parser.
Credentials are never part of this document: ``llamaparse_secret_id`` and
``vision_profile.secret_id`` name vault secrets of the collection's organization
(``IngestionConfig.secret_bindings``: the API checks each binding where it is made,
the parser opens only what the document's stored configuration binds).

Image description names its model one of two ways: ``vision_profile_id``, one of the
organization's vision model profiles (``/api/v1/vision-profiles``; the API checks the
profile's key as a binding when the profile is selected, the parser resolves the profile
when it parses), or an inline ``vision_profile`` (kept for clients written before
profiles; docs/decisions/0019-vision-model-profiles.md).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from docproc_common.splitters import ChunkingStrategy
from docproc_common.vault import SecretKind

Parser = Literal["pymupdf", "liteparse", "llamaparse"]

#: Tesseract codes: three letters (an optional ``_script`` suffix, e.g. ``chi_sim``), ``+`` for several.
_OCR_LANGUAGE = re.compile(r"^[a-z]{3}(?:_[a-z]+)?(?:\+[a-z]{3}(?:_[a-z]+)?)*$")


#: A vision model profile's providers, and the address each one's requests go to (None: the
#: profile names its own, an OpenAI-compatible server the deployment allows).
VISION_PROVIDERS: dict[str, str | None] = {
    "openai": "https://api.openai.com/v1",
    "openrouter": "https://openrouter.ai/api/v1",
    "openai-compatible": None,
}
#: The hosts a vision key may be sent to without the deployment listing them (https only).
VISION_KNOWN_HOSTS = ("api.openai.com", "openrouter.ai")


def vision_address_allowed(base_url: str, allowed_prefixes: Sequence[str]) -> bool:
    """Whether a vision request (and its key) may go to ``base_url``: one of the well-known
    hosts over https, or under an address the deployment lists
    (``PARSER__VISION_ALLOWED_BASE_URLS``, the chart's ``vision.allowedBaseUrls``). The API
    asks it when a profile is made, the parser again before a byte is sent."""
    url = urlsplit(base_url)
    host = (url.hostname or "").lower()
    if url.scheme == "https" and host in VISION_KNOWN_HOSTS:
        return True
    for prefix in allowed_prefixes:
        a = urlsplit(prefix.rstrip("/"))
        if (url.scheme, host, url.port) != (a.scheme, (a.hostname or "").lower(), a.port):
            continue
        path = a.path.rstrip("/")
        if not path or url.path == path or url.path.startswith(path + "/"):
            return True
    return False


class VisionProfile(BaseModel):
    """An OpenAI-compatible chat endpoint with vision, and the vault key that pays for it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(min_length=1, max_length=500)
    model: str = Field(min_length=1, max_length=200)
    #: A vault secret of kind ``api_key`` in the collection's organization; None for a
    #: keyless endpoint (a model served inside the deployment).
    secret_id: uuid.UUID | None = None
    timeout_seconds: float = Field(default=60, gt=0, le=600)
    max_images: int = Field(default=50, ge=1, le=500)

    @field_validator("base_url", "model")
    @classmethod
    def _no_nul(cls, value: str) -> str:
        if "\x00" in value:  # PostgreSQL refuses it in the stored configuration
            raise ValueError("must not contain a NUL character")
        return value

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ValueError("must be an http(s) URL such as https://api.openai.com/v1")
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ValueError("must not carry credentials, a query or a fragment")
        return value.rstrip("/")


@dataclass(frozen=True, slots=True)
class SecretBinding:
    """A vault secret a configuration lends: the field naming it, the kind its use needs, and
    the address it is sent to (None: the deployment's own endpoint, which no tenant names).

    Two configurations binding the same secret to the same address lend it the same way;
    a new secret or a new address is a new loan, checked against whoever makes it.
    """

    field: str
    secret_id: uuid.UUID
    kind: SecretKind
    destination: str | None = None


class IngestionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    parser: Parser = "pymupdf"
    chunk_size: int = Field(default=2500, ge=1, le=100_000)
    chunk_overlap: int = Field(default=200, ge=0)
    chunking_strategy: ChunkingStrategy = ChunkingStrategy.RECURSIVE

    # LiteParse ("Opciones de LiteParse").
    liteparse_output_format: Literal["markdown", "text"] = "markdown"
    auto_ocr: bool = True
    ocr_language: str = Field(default="eng", max_length=100)
    liteparse_dpi: int = Field(default=150, ge=50, le=600)

    # Every parser: what bounds a document's cost, and how long the parser may take.
    max_pages: int = Field(default=1000, ge=1, le=10_000)
    parse_timeout_seconds: int = Field(default=300, ge=5, le=3600)

    # LlamaParse: the organization's key, named by the collection; there is no deployment key.
    llamaparse_secret_id: uuid.UUID | None = None

    # Image description (PyMuPDF): off by default; then embedded images are not even extracted.
    image_description: bool = False
    #: One of the organization's vision model profiles (the console's choice).
    vision_profile_id: uuid.UUID | None = None
    #: An inline profile (the API's older form); never together with ``vision_profile_id``.
    vision_profile: VisionProfile | None = None

    @field_validator("ocr_language")
    @classmethod
    def _tesseract_codes(cls, value: str) -> str:
        if not _OCR_LANGUAGE.match(value):
            raise ValueError(
                "must be Tesseract language codes of three letters joined with '+', e.g. eng+pol"
            )
        return value

    def secret_bindings(self) -> frozenset[SecretBinding]:
        """Every vault secret this configuration lends (the parser's key, the vision key)."""
        bound: set[SecretBinding] = set()
        if self.llamaparse_secret_id is not None:
            bound.add(
                SecretBinding(
                    "llamaparse_secret_id", self.llamaparse_secret_id, SecretKind.LLAMAPARSE
                )
            )
        profile = self.vision_profile
        if profile is not None and profile.secret_id is not None:
            bound.add(
                SecretBinding(
                    "vision_profile.secret_id",
                    profile.secret_id,
                    SecretKind.API_KEY,
                    profile.base_url,
                )
            )
        return frozenset(bound)

    @model_validator(mode="after")
    def _pairs(self) -> IngestionConfig:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError("chunk_overlap must be smaller than chunk_size")
        if self.parser == "llamaparse" and self.llamaparse_secret_id is None:
            raise ValueError(
                "the llamaparse parser needs llamaparse_secret_id, a LlamaParse key in the "
                "organization's vault (there is no deployment key)"
            )
        if self.vision_profile is not None and self.vision_profile_id is not None:
            raise ValueError(
                "choose a vision model profile (vision_profile_id) or an inline "
                "vision_profile, not both"
            )
        if (
            self.image_description
            and self.vision_profile is None
            and self.vision_profile_id is None
        ):
            raise ValueError(
                "image_description needs a vision model profile (vision_profile_id) or an "
                "inline vision_profile"
            )
        return self

    def with_vision(self, profile: VisionProfile) -> IngestionConfig:
        """This configuration with its selected profile resolved (the parser's, at parse time)."""
        return self.model_copy(update={"vision_profile": profile, "vision_profile_id": None})
