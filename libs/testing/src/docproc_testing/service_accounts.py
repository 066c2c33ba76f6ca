"""Google service-account JSON keys as Google issues them, for the token servers tests run
(``docproc_testing.stores.TokenServer``, ``docproc_testing.drive_standin.DriveStandIn``)."""

from __future__ import annotations

import uuid

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa


def service_account_key(
    token_uri: str,
    project: str = "docproc-test",
    *,
    key: rsa.RSAPrivateKey | None = None,
    key_id: str | None = None,
    email: str | None = None,
) -> dict[str, str]:
    """A key file whose JWTs are exchanged at ``token_uri``: signed with ``key`` (a fresh RSA
    key when none) under ``key_id``, for ``email`` (a reader of ``project`` when none)."""
    key = key or rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    return {
        "type": "service_account",
        "project_id": project,
        "private_key_id": key_id or uuid.uuid4().hex,
        "private_key": pem,
        "client_email": email or f"docproc-reader@{project}.iam.gserviceaccount.com",
        "client_id": str(uuid.uuid4().int)[:21],
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": token_uri,
        "universe_domain": "googleapis.com",
    }
