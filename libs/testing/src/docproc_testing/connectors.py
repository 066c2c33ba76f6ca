"""How the connector tests check a source's configuration: with the deployment's default
options (``STRICT``) or a test bed's (``LAX``: private networks and plain http allowed), and
what ``check_config`` refuses a configuration with."""

from __future__ import annotations

from typing import Any

from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.config import check_config
from docproc_common.errors import InvalidInput

STRICT = ConnectorOptions()
LAX = ConnectorOptions(allow_private_networks=True, allow_plain_http=True)

#: The connectors this build ships; the API lists all but the admin-only ``local``.
SHIPPED = frozenset(
    {"local", "s3", "azure_blob", "gcs", "web", "git", "google_drive", "sharepoint", "confluence"}
)


def config_refusal(
    connector: str, config: Any, options: ConnectorOptions = STRICT
) -> dict[str, Any]:
    """The error (``code``, ``message``, ``details``) ``check_config`` refuses ``config`` with."""
    try:
        check_config(connector, config, options)
    except InvalidInput as exc:
        error: dict[str, Any] = exc.envelope()["error"]
        return error
    raise AssertionError(f"the {connector} configuration {config!r} was accepted")


def refused_fields(
    connector: str, config: Any, options: ConnectorOptions = STRICT
) -> list[dict[str, str]]:
    """The ``details.fields`` of that refusal: each refused input and why."""
    fields: list[dict[str, str]] = config_refusal(connector, config, options)["details"]["fields"]
    return fields
