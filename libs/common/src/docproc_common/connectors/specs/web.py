"""website: the configuration the API checks (the connector runs in ``docproc_sync.connectors.web``)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field

from docproc_common.connectors.base import (
    ConfigRefusal,
    ConnectorOptions,
    ConnectorSpec,
)
from docproc_common.egress.rules import literal_refusal


class WebConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", title="Website")

    start_url: str = Field(max_length=2000, description="Where the crawl starts (http or https)")
    max_pages: int = Field(default=200, ge=1, le=5000, description="Pages fetched at most per run")
    path_prefix: str | None = Field(
        default=None,
        max_length=1000,
        description="Only pages whose path starts with this (default: the whole site)",
    )
    include_documents: bool = Field(
        default=True, description="Also sync PDF, DOCX, Markdown and text files the pages link to"
    )
    page_timeout_s: float = Field(default=15.0, gt=0, le=120)


def normalize(url: str) -> str | None:
    """The crawl's identity for a URL: no fragment, lowercase scheme and host, no default port."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in {"http", "https"} or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port and not ((scheme == "http" and port == 80) or (scheme == "https" and port == 443)):
        host = f"{host}:{port}"
    return urlunsplit((scheme, host, parts.path or "/", parts.query, ""))


class WebSpec(ConnectorSpec):
    NAME = "web"
    TITLE = "Website"
    DESCRIPTION = "Crawl one site (robots.txt obeyed) and index its pages as text"
    CONFIG_MODEL = WebConfig
    SECRET_KIND = None
    DESTINATION_FIELDS = frozenset({"start_url"})
    CHANGE_SIGNAL = "ETag / Last-Modified"

    @classmethod
    def validate_config(cls, config: object, options: ConnectorOptions) -> ConfigRefusal | None:
        assert isinstance(config, WebConfig)
        url = normalize(config.start_url)
        if url is None:
            return ConfigRefusal("The start URL must be an http or https URL", "start_url")
        if urlsplit(url).scheme == "http" and not options.allow_plain_http:
            return ConfigRefusal("The start URL must use https", "start_url")
        reason = literal_refusal(url)
        if reason and not options.allow_private_networks:
            return ConfigRefusal(f"The start URL is refused: {reason}", "start_url")
        if config.path_prefix is not None:
            if not config.path_prefix.startswith("/"):
                return ConfigRefusal("A path prefix starts with /", "path_prefix")
            if not urlsplit(url).path.startswith(config.path_prefix):
                return ConfigRefusal("The start URL is outside the path prefix", "path_prefix")
        return None
