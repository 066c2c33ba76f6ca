"""What S3, Azure Blob and GCS share before they run: the change signal and the endpoint rule.

The listing loop and the retries are the sync service's (``docproc_sync.connectors.object_store``).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from docproc_common.connectors.base import ConfigRefusal, ConnectorOptions, ConnectorSpec
from docproc_common.connectors.network import literal_refusal


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
