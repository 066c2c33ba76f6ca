"""The vault's envelope encryption: round trip, tampering, wrong keys, swapped rows, rotation."""

from __future__ import annotations

import base64
import os
import uuid
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from docproc_common.db.models import Secret
from docproc_common.errors import InvalidInput
from docproc_common.vault import (
    OpenedSecret,
    VaultError,
    rewrap,
    seal,
    unseal,
    validate_value,
)
from docproc_testing.service_accounts import service_account_key

MASTER = base64.b64encode(os.urandom(32)).decode()
OTHER = base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")
RSA_KEY = service_account_key("https://oauth2.googleapis.com/token")["private_key"]
AZURE_KEY = base64.b64encode(b"an azure storage account key").decode()
EC_KEY = (
    ec.generate_private_key(ec.SECP256R1())
    .private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    .decode()
)


def make_row(
    value: dict[str, Any],
    *,
    org: str | None = "acme",
    kind: str = "api_key",
    provider: str | None = "openai",
    master: str = MASTER,
) -> Secret:
    sid = uuid.uuid4()
    wrapped, ciphertext = seal(
        value, secret_id=sid, organization_id=org, kind=kind, provider=provider, master_key=master
    )
    return Secret(
        id=sid,
        organization_id=org,
        owner_id="alice",
        name="k",
        kind=kind,
        provider=provider,
        visibility="private",
        wrapped_key=wrapped,
        ciphertext=ciphertext,
    )


def flip(blob: bytes, at: int) -> bytes:
    out = bytearray(blob)
    out[at] ^= 0x01
    return bytes(out)


class TestSeal:
    def test_round_trip(self) -> None:
        row = make_row({"api_key": "sk-test-123"})
        assert unseal(row, MASTER) == {"api_key": "sk-test-123"}

    def test_value_is_not_stored_in_clear(self) -> None:
        row = make_row({"api_key": "sk-very-recognizable"})
        assert b"sk-very-recognizable" not in row.ciphertext
        assert b"sk-very-recognizable" not in row.wrapped_key

    def test_each_secret_has_its_own_data_key_and_nonce(self) -> None:
        a, b = make_row({"api_key": "same"}), make_row({"api_key": "same"})
        assert a.ciphertext != b.ciphertext
        assert a.wrapped_key[9:] != b.wrapped_key[9:]  # same key id, different wrapping

    def test_urlsafe_unpadded_master_key(self) -> None:
        row = make_row({"api_key": "x"}, master=OTHER)
        assert unseal(row, OTHER) == {"api_key": "x"}

    def test_short_master_key_is_refused(self) -> None:
        with pytest.raises(VaultError, match="32 bytes"):
            make_row({"api_key": "x"}, master=base64.b64encode(b"short").decode())

    def test_opened_secret_repr_hides_value(self) -> None:
        opened = OpenedSecret(uuid.uuid4(), "api_key", "openai", {"api_key": "sk-hidden"})
        assert "sk-hidden" not in repr(opened)


class TestTamper:
    @pytest.mark.parametrize(
        ("part", "at"),
        [
            *(("ciphertext", at) for at in (0, 1, 13, 20, -1)),
            *(("wrapped_key", at) for at in (0, 1, 9, 21, -1)),
        ],
    )
    def test_a_flipped_byte(self, part: str, at: int) -> None:
        row = make_row({"api_key": "sk"})
        setattr(row, part, flip(getattr(row, part), at))
        with pytest.raises(VaultError):
            unseal(row, MASTER)

    def test_truncated(self) -> None:
        row = make_row({"api_key": "sk"})
        row.ciphertext = row.ciphertext[:10]
        with pytest.raises(VaultError, match="format"):
            unseal(row, MASTER)

    def test_wrong_master_key(self) -> None:
        row = make_row({"api_key": "sk"})
        with pytest.raises(VaultError, match="another master key"):
            unseal(row, OTHER)

    def test_wrong_master_key_with_forged_key_id(self) -> None:
        row = make_row({"api_key": "sk"})
        other_row = make_row({"api_key": "sk"}, master=OTHER)
        row.wrapped_key = row.wrapped_key[:1] + other_row.wrapped_key[1:9] + row.wrapped_key[9:]
        with pytest.raises(VaultError, match="does not authenticate"):
            unseal(row, OTHER)


class TestSwappedRows:
    def test_ciphertext_and_key_moved_to_another_row(self) -> None:
        victim = make_row({"api_key": "sk-victim"}, org="acme")
        attacker = make_row({"api_key": "sk-attacker"}, org="evil")
        attacker.wrapped_key, attacker.ciphertext = victim.wrapped_key, victim.ciphertext
        with pytest.raises(VaultError, match="does not authenticate"):
            unseal(attacker, MASTER)

    def test_only_ciphertext_moved(self) -> None:
        a, b = make_row({"api_key": "a"}), make_row({"api_key": "b"})
        b.ciphertext = a.ciphertext
        with pytest.raises(VaultError):
            unseal(b, MASTER)

    def test_row_moved_to_another_organization(self) -> None:
        row = make_row({"api_key": "sk"}, org="acme")
        row.organization_id = "evil"
        with pytest.raises(VaultError):
            unseal(row, MASTER)

    def test_row_relabelled_as_another_kind_or_provider(self) -> None:
        row = make_row({"api_key": "sk"})
        row.provider = "openrouter"
        with pytest.raises(VaultError):
            unseal(row, MASTER)
        row.provider, row.kind = "openai", "llamaparse"
        with pytest.raises(VaultError):
            unseal(row, MASTER)

    def test_id_changed(self) -> None:
        row = make_row({"api_key": "sk"})
        row.id = uuid.uuid4()
        with pytest.raises(VaultError):
            unseal(row, MASTER)


class TestRewrap:
    def test_rotation_keeps_the_value(self) -> None:
        row = make_row({"api_key": "sk-rotate"})
        before = row.ciphertext
        assert rewrap(row, old_master_key=MASTER, new_master_key=OTHER) is True
        assert row.ciphertext == before  # only the 60-byte data key was re-wrapped
        assert unseal(row, OTHER) == {"api_key": "sk-rotate"}
        with pytest.raises(VaultError):
            unseal(row, MASTER)
        assert rewrap(row, old_master_key=MASTER, new_master_key=OTHER) is False


class TestValidateValue:
    def test_normalizes(self) -> None:
        assert validate_value("git_token", {"token": "t"}) == {"token": "t"}

    def test_unknown_kind(self) -> None:
        with pytest.raises(InvalidInput) as info:
            validate_value("password", {"x": 1})
        assert info.value.fields[0].field == "kind"

    def test_refusal_names_the_field_never_the_value(self) -> None:
        with pytest.raises(InvalidInput) as info:
            validate_value("api_key", {"api_key": "", "extra": "sk-leak-me"})
        envelope = str(info.value.envelope())
        assert "sk-leak-me" not in envelope
        assert {f.field for f in info.value.fields} == {"value.api_key", "value.extra"}

    def test_gcp_service_account(self) -> None:
        value = {
            "type": "service_account",
            "client_email": "a@b.iam.gserviceaccount.com",
            "private_key": RSA_KEY,
            "universe_domain": "googleapis.com",
        }
        assert validate_value("gcp_service_account", value)["universe_domain"] == "googleapis.com"
        with pytest.raises(InvalidInput):
            validate_value("gcp_service_account", {**value, "type": "authorized_user"})

    @pytest.mark.parametrize(
        ("broken", "field"),
        [
            ({"private_key": "-----BEGIN PRIVATE KEY-----\n...\n"}, "value.private_key"),
            ({"private_key": EC_KEY}, "value.private_key"),
            ({"client_email": ""}, "value.client_email"),
            ({"token_uri": "oauth2.googleapis.com/token"}, "value.token_uri"),
            ({"type": "authorized_user"}, "value.type"),
        ],
    )
    def test_a_malformed_service_account_names_its_field(
        self, broken: dict[str, str], field: str
    ) -> None:
        value = {
            "type": "service_account",
            "client_email": "a@b.iam.gserviceaccount.com",
            "private_key": RSA_KEY,
            **broken,
        }
        with pytest.raises(InvalidInput) as info:
            validate_value("gcp_service_account", value)
        assert [f.field for f in info.value.fields] == [field]
        assert "BEGIN" not in str(info.value.envelope())

    @pytest.mark.parametrize(
        "value",
        [
            {"account_name": "acme", "account_key": AZURE_KEY},
            {"sas_token": "sv=2025-01-05&sp=rl&sig=abc"},
            {"connection_string": f"AccountName=acme;AccountKey={AZURE_KEY};EndpointSuffix=x"},
            {"connection_string": "BlobEndpoint=https://a;SharedAccessSignature=sv=1&sig=abc"},
        ],
    )
    def test_azure_storage_forms(self, value: dict[str, str]) -> None:
        assert validate_value("azure_storage", value) == value

    @pytest.mark.parametrize(
        ("value", "field"),
        [
            ({}, "value"),
            ({"account_name": "acme", "account_key": AZURE_KEY, "sas_token": "sig=x"}, "value"),
            ({"account_name": "acme"}, "value"),
            ({"account_name": "acme", "account_key": "not base64!"}, "value.account_key"),
            ({"account_name": "ACME", "account_key": AZURE_KEY}, "value.account_name"),
            ({"sas_token": "sv=2025-01-05&sp=rl"}, "value.sas_token"),
            ({"connection_string": "AccountName=acme;EndpointSuffix=x"}, "value.connection_string"),
            ({"connection_string": "AccountName=a;AccountKey=!!"}, "value.connection_string"),
        ],
    )
    def test_azure_storage_refusals_name_the_field(self, value: dict[str, str], field: str) -> None:
        with pytest.raises(InvalidInput) as info:
            validate_value("azure_storage", value)
        assert [f.field for f in info.value.fields] == [field]
        assert AZURE_KEY not in str(info.value.envelope())
