"""Confluence Cloud: the configuration the API checks (the connector runs in ``docproc_sync.connectors.confluence``)."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from docproc_common.connectors.base import (
    ConfigRefusal,
    ConnectorOptions,
    ConnectorSpec,
)
from docproc_common.egress.rules import literal_refusal

SPACE_KEY = re.compile(r"^[A-Za-z0-9]{1,255}$")


CONTENT_ID = re.compile(r"^[0-9]{1,20}$")


DNS_NAME = re.compile(
    r"^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$"
)


SITE_PATHS = {"", "/", "/wiki", "/wiki/"}


class ConfluenceConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", title="Confluence Cloud")

    site_url: str = Field(
        max_length=500, description="The site's address, https://<site>.atlassian.net"
    )
    space_key: str = Field(max_length=255, description="The space's key (letters and digits)")
    root_page_id: str | None = Field(
        default=None,
        max_length=20,
        description="Only this page and the pages under it (its id); empty for the whole space",
    )
    include_attachments: bool = Field(
        default=False,
        description="Also sync the pages' attachments (PDF, DOCX, Markdown, text)",
    )

    @field_validator("root_page_id", mode="before")
    @classmethod
    def _id_as_text(cls, value: object) -> object:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def site_origin(url: str, options: ConnectorOptions) -> tuple[str | None, str | None]:
    """``(origin, None)`` for an acceptable site URL, else ``(None, why)``."""
    parts = urlsplit(url.strip())
    schemes = {"https", "http"} if options.allow_plain_http else {"https"}
    if parts.scheme.lower() not in schemes or not parts.hostname:
        return None, "The site URL must be an https:// URL, https://<site>.atlassian.net"
    if parts.username or parts.password:
        return None, "a credential does not go in a source's configuration"
    if parts.query or parts.fragment or parts.path not in SITE_PATHS:
        return None, "The site URL is the site's address alone, https://<site>.atlassian.net"
    host = parts.hostname.lower()
    try:
        ipaddress.ip_address(host)
        literal = True
    except ValueError:
        literal = False
    if not options.allow_private_networks:
        if literal or not DNS_NAME.fullmatch(host):
            return None, "The site URL names its site by a DNS name, https://<site>.atlassian.net"
        reason = literal_refusal(url)
        if reason:
            return None, f"The site URL is refused: {reason}"
    shown = f"[{host}]" if ":" in host else host
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme.lower()}://{shown}{port}", None


class ConfluenceSpec(ConnectorSpec):
    NAME = "confluence"
    TITLE = "Confluence Cloud"
    DESCRIPTION = "The pages of one Confluence Cloud space (or one page tree), as text"
    CONFIG_MODEL = ConfluenceConfig
    SECRET_KIND = "confluence_token"
    DESTINATION_FIELDS = frozenset({"site_url"})
    CHANGE_SIGNAL = "version.number"
    REACH = "every page of the space it can see, restricted pages included"

    @classmethod
    def validate_config(cls, config: object, options: ConnectorOptions) -> ConfigRefusal | None:
        assert isinstance(config, ConfluenceConfig)
        _origin, refusal = site_origin(config.site_url, options)
        if refusal is not None:
            return ConfigRefusal(refusal, "site_url")
        if not SPACE_KEY.fullmatch(config.space_key):
            return ConfigRefusal("A space key is letters and digits", "space_key")
        if config.root_page_id is not None and not CONTENT_ID.fullmatch(config.root_page_id):
            return ConfigRefusal("A page id is digits", "root_page_id")
        return None
