"""The parser's own settings: ``PARSER__*`` environment variables (the shared ones live in common)."""

from __future__ import annotations

from docproc_common.settings import SectionSettings
from pydantic import Field
from pydantic_settings import SettingsConfigDict

from docproc_parser.engine.llamaparse import DEFAULT_BASE_URL


class ParserSettings(SectionSettings):
    model_config = SettingsConfigDict(env_prefix="PARSER__", env_ignore_empty=True, extra="ignore")

    #: Address-space cap of each parse child (RLIMIT_AS), in MiB. LibreOffice runs under it too.
    memory_limit_mb: int = Field(default=2048, ge=256)
    #: The largest file a parse child may write (RLIMIT_FSIZE), in MiB, LibreOffice's too: a
    #: document that would write more fails as on a full disk instead of filling the host's.
    max_temp_file_mb: int = Field(default=4096, ge=1)
    #: Documents parsed at once by one process (each in its own child).
    max_concurrent: int = Field(default=2, ge=1, le=64)
    #: Where LlamaParse is reached (the EU region is https://api.cloud.eu.llamaindex.ai).
    llamaparse_base_url: str = DEFAULT_BASE_URL
    llamaparse_tier: str = "cost_effective"
    #: Address prefixes a collection's vision profile may name besides the known providers'
    #: hosts, e.g. an in-cluster model server (JSON list in the environment).
    vision_allowed_base_urls: list[str] = Field(default_factory=list)
    #: Timeouts of the HTTP client used for LlamaParse and vision endpoints, in seconds.
    http_connect_timeout_s: float = 10.0
    http_read_timeout_s: float = 120.0
