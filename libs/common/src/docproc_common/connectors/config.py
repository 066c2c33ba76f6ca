"""Checking a source's configuration where it is submitted, with refusals rooted at the document.

Four questions, in this order: does the document carry a credential (refused
with "a credential does not go in a source's configuration"), does it fit the
connector's ``CONFIG_MODEL``, can its URLs be taken apart, and does
``validate_config`` accept it. Each
refusal names its input rooted at the submitted document, ``folder_id`` ->
``config.folder_id``, so a form can mark the box.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError

from docproc_common.connectors import CONNECTORS
from docproc_common.connectors.base import ConnectorOptions, ConnectorSpec
from docproc_common.errors import FieldError, InvalidInput

ROOT = "config"
CREDENTIAL_REFUSAL = "a credential does not go in a source's configuration"
_CREDENTIAL_KEY = re.compile(
    r"(password|passwd|secret|token|credential|private_?key|api_?key|access_?key|"
    r"service_?account|client_?secret|authorization|bearer|session_?key|account_?key|"
    r"connection_?string|shared_?access|^sas|^sig$|^auth$|^key$|"
    r"^client_?id$|^tenant_?id$|^email$)",
    re.IGNORECASE,
)


def connector_class(name: str, field: str = "connector") -> type[ConnectorSpec]:
    try:
        return CONNECTORS[name]
    except KeyError:
        known = ", ".join(sorted(CONNECTORS))
        raise InvalidInput(
            f"Unknown connector '{name[:50]}' (known: {known})",
            fields=[FieldError(field, "unknown connector")],
        ) from None


def _join(root: str, *parts: object) -> str:
    return ".".join([root, *(str(p) for p in parts)] if root else [str(p) for p in parts])


def _credentials(value: Any, path: str) -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            here = _join(path, key)
            if _CREDENTIAL_KEY.search(str(key)):
                yield here
            else:
                yield from _credentials(inner, here)
    elif isinstance(value, list):
        for n, inner in enumerate(value):
            yield from _credentials(inner, _join(path, n))
    elif isinstance(value, str) and "://" in value:
        try:
            parts = urlsplit(value.strip())
            query = (name for name, _, _ in (p.partition("=") for p in parts.query.split("&")))
            if parts.username or parts.password or any(_CREDENTIAL_KEY.search(q) for q in query):
                yield path  # user:password@, or ?sig=... (a SAS), ?access_token=...
        except ValueError:
            return


def _readable(value: object) -> bool:
    """False for a URL that ``urlsplit`` refuses (``https://[::1``) or whose port is no port."""
    if not isinstance(value, str) or "://" not in value:
        return True
    try:
        urlsplit(value.strip()).port  # noqa: B018 - the property raises
    except ValueError:
        return False
    return True


def check_config(name: str, raw: Any, options: ConnectorOptions, *, root: str = ROOT) -> BaseModel:
    """The connector's config model for ``raw``, or ``InvalidInput`` naming the refused inputs."""
    cls = connector_class(name)
    if not isinstance(raw, dict):
        raise InvalidInput(
            "The configuration must be an object",
            fields=[FieldError(root or "config", "must be an object")],
        )
    found = list(_credentials(raw, root))
    if found:
        raise InvalidInput(
            f"{CREDENTIAL_REFUSAL[0].upper()}{CREDENTIAL_REFUSAL[1:]}: "
            f"store it in the vault as a {cls.SECRET_KIND or 'secret'} and name it in secret_id",
            fields=[FieldError(f, CREDENTIAL_REFUSAL) for f in found],
        )
    try:
        config = cls.CONFIG_MODEL.model_validate(raw)
    except ValidationError as exc:
        fields = [FieldError(_join(root, *err["loc"]), err["msg"]) for err in exc.errors()]
        raise InvalidInput(f"The {cls.NAME} configuration is not valid", fields=fields) from exc
    unreadable = [name for name, value in config if not _readable(value)]
    if unreadable:  # ``validate_config`` and the connector take a URL apart: not this one
        raise InvalidInput(
            "A URL of the configuration cannot be read (its host or port)",
            fields=[FieldError(_join(root, name), "not a readable URL") for name in unreadable],
        )
    refusal = cls.validate_config(config, options)
    if refusal is not None:
        fields = [FieldError(_join(root, refusal.field), refusal.message)] if refusal.field else []
        raise InvalidInput(refusal.message, fields=fields)
    return config


def describe(name: str) -> dict[str, Any]:
    cls = connector_class(name)
    return {
        "name": cls.NAME,
        "title": cls.TITLE,
        "description": cls.DESCRIPTION,
        "config_schema": cls.CONFIG_MODEL.model_json_schema(),
        "secret_kind": cls.SECRET_KIND,
        "secret_required": bool(cls.SECRET_KIND and cls.SECRET_REQUIRED),
        "admin_only": cls.ADMIN_ONLY,
        "change_signal": cls.CHANGE_SIGNAL,
    }
