"""What S3, Azure Blob and GCS share before they run: the change signal, the endpoint rule and
the ``prefix`` / ``endpoint_url`` fields.

The listing loop and the retries are the sync service's (``docproc_sync.connectors.object_store``).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field

from docproc_common.connectors.base import ConfigRefusal, ConnectorOptions, ConnectorSpec
from docproc_common.egress.rules import literal_refusal


def prefix_field(description: str) -> Any:
    """A store's ``prefix``: a literal name prefix (empty: the whole container)."""
    return Field(default="", max_length=1024, description=description)


def endpoint_field(description: str) -> Any:
    """A store's optional ``endpoint_url`` (empty: the provider itself)."""
    return Field(default=None, max_length=500, description=description)


def endpoint_refusal(url: str, field: str, options: ConnectorOptions) -> ConfigRefusal | None:
    """An endpoint a tenant may name: https (http where the deployment allows it), no query or
    fragment, and no internal host unless the deployment allows private networks."""
    if not re.match(r"^https?://", url) or (
        url.startswith("http://") and not options.allow_plain_http
    ):
        return ConfigRefusal("The endpoint must be an https:// URL", field)
    if urlsplit(url)[3:] != ("", ""):
        return ConfigRefusal("The endpoint URL has no query or fragment", field)
    reason = literal_refusal(url)
    if reason and not options.allow_private_networks:
        return ConfigRefusal(f"The endpoint is refused: {reason}", field)
    return None


class ObjectStoreSpec(ConnectorSpec):
    CHANGE_SIGNAL = "ETag"
