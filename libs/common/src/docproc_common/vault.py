"""The vault: credentials encrypted at rest, referenced by id, never placed in a config document.

Envelope encryption, one data key per secret:

* a random 32-byte **data key** encrypts the secret's value (its JSON) with AES-256-GCM;
* the data key is **wrapped** (AES-256-GCM again) with the deployment's **master key**,
  ``VAULT__MASTER_KEY`` (base64 of 32 bytes; in Kubernetes a Secret, see
  docs/embeddings.md), which never touches the database;
* both carry the row's identity as AEAD associated data: the secret's id, its
  organization, its kind and its provider. A ciphertext or a wrapped key copied into
  another row, or a row moved to another organization or relabelled as another kind,
  no longer authenticates, so it opens as nothing rather than as someone else's key.

Stored layout (``secrets.wrapped_key`` / ``secrets.ciphertext``)::

    wrapped_key = 0x01 | key id (8 bytes: sha256(master)[:8]) | nonce (12) | GCM(master, data key)
    ciphertext  = 0x01 | nonce (12) | GCM(data key, json(value))

The key id says which master key wrapped a row, so rotation (``rewrap``) only has to
re-wrap 60-byte data keys, never re-encrypt values.

Who sees what: a ``private`` secret is its owner's; an ``org`` secret is shared with
the members of its organization who hold ``secrets:view``. A caller who may not see a
secret is told it does not exist. Values are never logged and never returned by the API.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import os
import uuid
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from cryptography.exceptions import InvalidTag, UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_common.db.models import Secret
from docproc_common.errors import FieldError, InvalidInput
from docproc_common.settings import decode_master_key

log = logging.getLogger(__name__)

_VERSION = b"\x01"
_NONCE = 12
_KEY_ID = 8


class SecretKind(StrEnum):
    API_KEY = "api_key"
    AWS_CREDENTIALS = "aws_credentials"
    CONFLUENCE_TOKEN = "confluence_token"
    AZURE_STORAGE = "azure_storage"
    GCP_SERVICE_ACCOUNT = "gcp_service_account"
    GIT_TOKEN = "git_token"
    LLAMAPARSE = "llamaparse"
    MS_GRAPH_APP = "ms_graph_app"


class Visibility(StrEnum):
    PRIVATE = "private"
    ORG = "org"


class _Value(BaseModel):
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)


class ApiKeyValue(_Value):
    """A provider API key (``provider`` on the row says whose: ``openai``, ``openrouter``...)."""

    api_key: str = Field(min_length=1, max_length=4096)


class AwsCredentialsValue(_Value):
    access_key_id: str = Field(min_length=1, max_length=256)
    secret_access_key: str = Field(min_length=1, max_length=1024)
    session_token: str | None = Field(default=None, max_length=8192)
    region: str | None = Field(default=None, max_length=64)


class GcpServiceAccountValue(_Value):
    """A service-account key file as Google issues it (further fields are kept as given)."""

    model_config = ConfigDict(extra="allow", hide_input_in_errors=True)

    type: Literal["service_account"]
    client_email: str = Field(min_length=3, max_length=320)
    private_key: str = Field(min_length=1, max_length=16384)
    private_key_id: str | None = None
    project_id: str | None = None
    token_uri: str | None = Field(default=None, max_length=500, pattern=r"^https?://[^\s]+$")

    @field_validator("private_key")
    @classmethod
    def _a_pem_rsa_key(cls, value: str) -> str:
        """Google signs its token requests with this key: an RSA key in PEM, unencrypted.

        Parsed only (the consistency check takes ~100 ms, too long for a request's event
        loop); the connector loads it in full, in a worker thread, when it signs."""
        try:
            key = load_pem_private_key(
                value.encode(), password=None, unsafe_skip_rsa_key_validation=True
            )
        except (ValueError, TypeError, UnsupportedAlgorithm):
            raise ValueError(
                "not a PEM private key (the private_key of Google's JSON key file)"
            ) from None
        if not isinstance(key, RSAPrivateKey):
            raise ValueError("not an RSA private key")
        return value


class AzureStorageValue(_Value):
    """An Azure storage account's credential, in one of three forms: a connection string
    (its ``AccountName`` + ``AccountKey``, or its ``SharedAccessSignature``), an
    ``account_name`` + ``account_key``, or a ``sas_token``. Where the account is reached is
    the source's configuration (``account_url``), never this value."""

    connection_string: str | None = Field(default=None, min_length=1, max_length=4096)
    account_name: str | None = Field(default=None, pattern=r"^[a-z0-9]{3,24}$")
    account_key: str | None = Field(default=None, min_length=1, max_length=1024)
    sas_token: str | None = Field(default=None, min_length=1, max_length=8192)

    @field_validator("connection_string")
    @classmethod
    def _a_credential_inside(cls, value: str | None) -> str | None:
        if value is not None:
            parts = connection_string_parts(value)
            if not (
                {"AccountName", "AccountKey"} <= parts.keys() or "SharedAccessSignature" in parts
            ):
                raise ValueError("holds neither AccountName + AccountKey nor SharedAccessSignature")
            if "AccountKey" in parts:
                _base64(parts["AccountKey"])
        return value

    @field_validator("account_key")
    @classmethod
    def _a_base64_key(cls, value: str | None) -> str | None:
        return None if value is None else _base64(value)

    @field_validator("sas_token")
    @classmethod
    def _a_signature(cls, value: str | None) -> str | None:
        if value is not None and "sig=" not in value:
            raise ValueError("a shared access signature has a sig= parameter")
        return value

    @model_validator(mode="after")
    def _one_form(self) -> AzureStorageValue:
        key = self.account_name is not None or self.account_key is not None
        if sum((self.connection_string is not None, key, self.sas_token is not None)) != 1:
            raise ValueError(
                "give one of connection_string, account_name + account_key, or sas_token"
            )
        if key and (self.account_name is None or self.account_key is None):
            raise ValueError("account_name and account_key go together")
        return self


def connection_string_parts(value: str) -> dict[str, str]:
    """``Name=value;Name=value`` (an account key's ``=`` padding kept), names as Azure spells them."""
    parts: dict[str, str] = {}
    for item in value.split(";"):
        name, sep, inner = item.strip().partition("=")
        if sep and name.lower() in _CONNECTION_PARTS:
            parts[_CONNECTION_PARTS[name.lower()]] = inner.strip()
    return parts


_CONNECTION_PARTS = {
    name.lower(): name for name in ("AccountName", "AccountKey", "SharedAccessSignature")
}


def _base64(value: str) -> str:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("an account key is base64 (as the portal shows it)") from None
    return value


class GitTokenValue(_Value):
    token: str = Field(min_length=1, max_length=4096)
    username: str | None = Field(default=None, max_length=256)


class ConfluenceTokenValue(_Value):
    """An Atlassian account's email and API token (HTTP Basic), or a bearer token alone
    (an OAuth 2.0 access token, a personal access token): one of the two, never both."""

    email: str | None = Field(default=None, min_length=3, max_length=320)
    api_token: str | None = Field(default=None, min_length=1, max_length=4096)
    bearer_token: str | None = Field(default=None, min_length=1, max_length=8192)

    @model_validator(mode="after")
    def _one_form(self) -> ConfluenceTokenValue:
        basic = self.email is not None and self.api_token is not None
        if basic == (self.bearer_token is not None) or (
            not basic and (self.email is not None or self.api_token is not None)
        ):
            raise ValueError("give email and api_token, or bearer_token alone")
        return self


class LlamaParseValue(_Value):
    api_key: str = Field(min_length=1, max_length=4096)


GUID = r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}"


class MsGraphAppValue(_Value):
    """An Entra app registration's client credentials (Microsoft Graph, app-only). The tenant
    is its id or a verified domain (``contoso.onmicrosoft.com``): it is a path segment of the
    token URL, so nothing else is taken."""

    tenant_id: str = Field(
        max_length=253, pattern=rf"^(?:{GUID}|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)$"
    )
    client_id: str = Field(pattern=rf"^{GUID}$")
    client_secret: str = Field(min_length=1, max_length=1024)


VALUE_MODELS: dict[str, type[_Value]] = {
    SecretKind.API_KEY: ApiKeyValue,
    SecretKind.AWS_CREDENTIALS: AwsCredentialsValue,
    SecretKind.CONFLUENCE_TOKEN: ConfluenceTokenValue,
    SecretKind.AZURE_STORAGE: AzureStorageValue,
    SecretKind.GCP_SERVICE_ACCOUNT: GcpServiceAccountValue,
    SecretKind.GIT_TOKEN: GitTokenValue,
    SecretKind.LLAMAPARSE: LlamaParseValue,
    SecretKind.MS_GRAPH_APP: MsGraphAppValue,
}


class VaultError(Exception):
    """A secret that exists but cannot be opened (wrong master key, tampered row, bad format).

    The message never carries key material or the value.
    """


@dataclass(frozen=True, slots=True)
class OpenedSecret:
    id: uuid.UUID
    kind: str
    provider: str | None
    value: dict[str, Any] = field(repr=False)


def validate_value(kind: str, value: dict[str, Any]) -> dict[str, Any]:
    """The value normalized by its kind's model; a 400 naming ``value.<field>`` otherwise.

    Refusals name the field and the rule only, never the submitted value.
    """
    model = VALUE_MODELS.get(kind)
    if model is None:
        raise InvalidInput(
            f"Unknown secret kind '{kind}'",
            fields=[FieldError("kind", f"must be one of {sorted(VALUE_MODELS)}")],
        )
    try:
        parsed = model.model_validate(value)
    except ValidationError as exc:
        fields = [
            FieldError(".".join(["value", *(str(p) for p in e["loc"])]), e["msg"])
            for e in exc.errors(include_input=False, include_url=False)
        ]
        raise InvalidInput(f"The value is not a valid {kind}", fields=fields) from None
    return parsed.model_dump(mode="json", exclude_none=True)


# -- crypto -------------------------------------------------------------------------------


def _master(master_key: str) -> bytes:
    try:
        return decode_master_key(master_key)
    except ValueError as exc:
        raise VaultError(str(exc)) from None


def key_id(master_key: str) -> bytes:
    return hashlib.sha256(_master(master_key)).digest()[:_KEY_ID]


def associated_data(
    secret_id: uuid.UUID, organization_id: str | None, kind: str, provider: str | None
) -> bytes:
    """What binds a row's ciphertext and wrapped key to that row and nothing else."""
    return json.dumps(
        ["docproc-vault", 1, str(secret_id), organization_id, kind, provider],
        separators=(",", ":"),
    ).encode()


def seal(
    value: dict[str, Any],
    *,
    secret_id: uuid.UUID,
    organization_id: str | None,
    kind: str,
    provider: str | None,
    master_key: str,
) -> tuple[bytes, bytes]:
    """``(wrapped_key, ciphertext)`` for ``value`` under a fresh data key."""
    master = _master(master_key)
    aad = associated_data(secret_id, organization_id, kind, provider)
    data_key = AESGCM.generate_key(bit_length=256)
    nonce = os.urandom(_NONCE)
    ciphertext = (
        _VERSION
        + nonce
        + AESGCM(data_key).encrypt(nonce, json.dumps(value).encode(), b"value:" + aad)
    )
    return _wrap(data_key, master, aad), ciphertext


def _wrap(data_key: bytes, master: bytes, aad: bytes) -> bytes:
    nonce = os.urandom(_NONCE)
    kid = hashlib.sha256(master).digest()[:_KEY_ID]
    return _VERSION + kid + nonce + AESGCM(master).encrypt(nonce, data_key, b"key:" + aad)


def _unwrap(wrapped: bytes, master: bytes, aad: bytes) -> bytes:
    if len(wrapped) < 1 + _KEY_ID + _NONCE + 16 or wrapped[:1] != _VERSION:
        raise VaultError("the wrapped key has an unknown format")
    kid = wrapped[1 : 1 + _KEY_ID]
    if kid != hashlib.sha256(master).digest()[:_KEY_ID]:
        raise VaultError("the secret was wrapped with another master key")
    nonce = wrapped[1 + _KEY_ID : 1 + _KEY_ID + _NONCE]
    try:
        return AESGCM(master).decrypt(nonce, wrapped[1 + _KEY_ID + _NONCE :], b"key:" + aad)
    except InvalidTag:
        raise VaultError("the wrapped key does not authenticate for this row") from None


def unseal(secret: Secret, master_key: str) -> dict[str, Any]:
    """The value of ``secret``; ``VaultError`` when it cannot be opened."""
    master = _master(master_key)
    aad = associated_data(secret.id, secret.organization_id, secret.kind, secret.provider)
    data_key = _unwrap(bytes(secret.wrapped_key), master, aad)
    blob = bytes(secret.ciphertext)
    if len(blob) < 1 + _NONCE + 16 or blob[:1] != _VERSION:
        raise VaultError("the ciphertext has an unknown format")
    try:
        plain = AESGCM(data_key).decrypt(blob[1 : 1 + _NONCE], blob[1 + _NONCE :], b"value:" + aad)
    except InvalidTag:
        raise VaultError("the ciphertext does not authenticate for this row") from None
    value = json.loads(plain)
    if not isinstance(value, dict):
        raise VaultError("the value is not an object")
    return value


def rewrap(secret: Secret, *, old_master_key: str, new_master_key: str) -> bool:
    """Re-wrap ``secret``'s data key under ``new_master_key``; False when it already is.

    Rotation: deploy the new key to every service only after every row is re-wrapped
    (docs/embeddings.md). The value itself is never decrypted.
    """
    new = _master(new_master_key)
    if bytes(secret.wrapped_key)[1 : 1 + _KEY_ID] == hashlib.sha256(new).digest()[:_KEY_ID]:
        return False
    aad = associated_data(secret.id, secret.organization_id, secret.kind, secret.provider)
    data_key = _unwrap(bytes(secret.wrapped_key), _master(old_master_key), aad)
    secret.wrapped_key = _wrap(data_key, new, aad)
    return True


# -- rows ---------------------------------------------------------------------------------


async def create_secret(
    session: AsyncSession,
    *,
    owner_id: str,
    organization_id: str | None,
    name: str,
    kind: str,
    value: dict[str, Any],
    visibility: str,
    master_key: str,
    provider: str | None = None,
) -> Secret:
    """Validate ``value`` for ``kind``, seal it and add the row (flushed, not committed)."""
    normalized = validate_value(kind, value)
    if visibility not in {v.value for v in Visibility}:
        raise InvalidInput(
            f"Unknown visibility '{visibility}'",
            fields=[FieldError("visibility", "must be 'private' or 'org'")],
        )
    if visibility == Visibility.ORG and not organization_id:
        raise InvalidInput(
            "Only a secret in an organization can be shared with it",
            fields=[FieldError("visibility", "needs an organization")],
        )
    if kind == SecretKind.API_KEY and not provider:
        raise InvalidInput(
            "An api_key names the provider it is for",
            fields=[FieldError("provider", "required for an api_key")],
        )
    secret_id = uuid.uuid4()
    wrapped, ciphertext = seal(
        normalized,
        secret_id=secret_id,
        organization_id=organization_id,
        kind=kind,
        provider=provider,
        master_key=master_key,
    )
    secret = Secret(
        id=secret_id,
        organization_id=organization_id,
        owner_id=owner_id,
        name=name,
        kind=kind,
        provider=provider,
        visibility=visibility,
        wrapped_key=wrapped,
        ciphertext=ciphertext,
    )
    session.add(secret)
    await session.flush()
    log.info("secret %s (%s) created by %s", secret_id, kind, owner_id)
    return secret


async def secret_in_org(
    session: AsyncSession,
    secret_id: uuid.UUID,
    organization_id: str | None,
    *,
    kind: str | None = None,
) -> Secret | None:
    """The row when it exists *in this organization* (null matches only null), and is of
    ``kind`` when one is given."""
    org_match = (
        Secret.organization_id.is_(None)
        if organization_id is None
        else Secret.organization_id == organization_id
    )
    query = select(Secret).where(Secret.id == secret_id, org_match)
    if kind is not None:
        query = query.where(Secret.kind == kind)
    return (await session.execute(query)).scalar_one_or_none()


async def open_secret(
    session: AsyncSession,
    *,
    secret_id: uuid.UUID,
    organization_id: str | None,
    master_key: str,
    kind: str | None = None,
) -> OpenedSecret | None:
    """The decrypted secret for a worker acting for ``organization_id``.

    None when it is missing, belongs to another organization, is not of ``kind`` (when
    given: a row of another kind is never decrypted), or cannot be opened (the reason is
    logged, never the value).
    """
    secret = await secret_in_org(session, secret_id, organization_id, kind=kind)
    if secret is None:
        return None
    try:
        value = unseal(secret, master_key)
    except VaultError as exc:
        log.warning("secret %s could not be opened: %s", secret_id, exc)
        return None
    return OpenedSecret(id=secret.id, kind=secret.kind, provider=secret.provider, value=value)


async def rewrap_all(session: AsyncSession, *, old_master_key: str, new_master_key: str) -> int:
    """Re-wrap every row still wrapped with ``old_master_key``; the number re-wrapped.

    Rows already under the new key are skipped, so an interrupted run can be repeated.
    A row that opens under neither key raises ``VaultError`` and nothing is committed.
    """
    done = 0
    rows = (await session.execute(select(Secret).with_for_update())).scalars().all()
    for secret in rows:
        if rewrap(secret, old_master_key=old_master_key, new_master_key=new_master_key):
            done += 1
    await session.flush()
    return done


def main() -> None:
    """``python -m docproc_common.vault rewrap``: rotate the master key (docs/embeddings.md).

    Reads ``VAULT__MASTER_KEY`` (the current key), ``VAULT__NEW_MASTER_KEY`` and
    ``DATABASE__URL`` from the environment, never from arguments (which ``ps`` shows).
    """
    import asyncio
    import sys

    from docproc_common.db.engine import create_engine, create_sessionmaker
    from docproc_common.settings import MissingKeyError, Settings

    if sys.argv[1:] != ["rewrap"]:
        sys.exit("usage: python -m docproc_common.vault rewrap")
    new = os.environ.get("VAULT__NEW_MASTER_KEY", "")
    settings = Settings()
    if not settings.database.url:
        sys.exit("DATABASE__URL is not set")
    try:
        old = settings.vault.key()
    except MissingKeyError as exc:
        sys.exit(str(exc))
    _master(new)  # refuse a malformed new key before touching anything

    async def run() -> int:
        engine = create_engine(settings.database)
        try:
            async with create_sessionmaker(engine)() as session, session.begin():
                return await rewrap_all(session, old_master_key=old, new_master_key=new)
        finally:
            await engine.dispose()

    count = asyncio.run(run())
    sys.stdout.write(f"re-wrapped {count} secret(s); now deploy VAULT__NEW_MASTER_KEY\n")


if __name__ == "__main__":
    main()
