"""Azure Blob and GCS: configurations and credentials refused where they are submitted, each
naming its field; the credentials built from the vault's value and nothing else."""

from __future__ import annotations

from typing import Any

import pytest
from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from docproc_common.connectors.config import CREDENTIAL_REFUSAL, check_config, describe
from docproc_common.connectors.errors import ConnectorError, NetworkRefusedError
from docproc_sync.connectors.azure_blob import AzureBlobConfig, AzureBlobConnector, credential_of
from docproc_sync.connectors.gcs import READ_ONLY, GcsConfig, GcsConnector
from docproc_testing.connectors import LAX, STRICT, refused_fields
from docproc_testing.service_accounts import service_account_key
from google.oauth2 import service_account

AZURE = {"account_url": "https://acme.blob.core.windows.net", "container": "handbook"}
KEY = "Zm9yIHRlc3RzIG9ubHksIG5vdCBhIHJlYWwga2V5"
SAS = "sv=2025-01-05&sr=c&sp=rl&se=2030-01-01T00%3A00%3A00Z&sig=abc%3D"


@pytest.fixture(scope="module")
def service_json() -> dict[str, str]:
    return service_account_key("https://oauth2.googleapis.com/token")


class TestCredentialRefused:
    @pytest.mark.parametrize(
        ("connector", "config", "field"),
        [
            ("azure_blob", {**AZURE, "account_key": KEY}, "config.account_key"),
            ("azure_blob", {**AZURE, "connection_string": "x"}, "config.connection_string"),
            ("azure_blob", {**AZURE, "sas_token": SAS}, "config.sas_token"),
            ("azure_blob", {**AZURE, "sas": SAS}, "config.sas"),
            (
                "azure_blob",
                {**AZURE, "account_url": f"https://acme.blob.core.windows.net/?{SAS}"},
                "config.account_url",
            ),
            ("gcs", {"bucket": "b-1", "service_account_json": "{}"}, "config.service_account_json"),
            ("gcs", {"bucket": "b-1", "private_key": "-----BEGIN"}, "config.private_key"),
            ("gcs", {"bucket": "b-1", "credentials": {"type": "x"}}, "config.credentials"),
        ],
    )
    def test_named_and_refused(self, connector: str, config: dict[str, Any], field: str) -> None:
        assert refused_fields(connector, config) == [
            {"field": field, "message": CREDENTIAL_REFUSAL}
        ]


class TestConfigRefusals:
    @pytest.mark.parametrize(
        ("connector", "config", "field"),
        [
            ("azure_blob", {**AZURE, "container": "Hand_Book"}, "config.container"),
            ("azure_blob", {**AZURE, "container": "a--b"}, "config.container"),
            ("azure_blob", {**AZURE, "account_url": "http://acme.example"}, "config.account_url"),
            ("azure_blob", {**AZURE, "account_url": "https://10.0.0.4"}, "config.account_url"),
            (
                "azure_blob",
                {**AZURE, "account_url": "https://169.254.169.254/"},
                "config.account_url",
            ),
            ("azure_blob", {"container": "handbook"}, "config.account_url"),
            ("gcs", {"bucket": "Bad Bucket"}, "config.bucket"),
            ("gcs", {"bucket": "goog-docs"}, "config.bucket"),
            (
                "gcs",
                {"bucket": "docs", "endpoint_url": "https://localhost:4443"},
                "config.endpoint_url",
            ),
            ("gcs", {"bucket": "docs", "endpoint_url": "ftp://example.com"}, "config.endpoint_url"),
            ("gcs", {"bucket": "docs", "folder": "x"}, "config.folder"),
        ],
    )
    def test_each_refusal_names_its_field(
        self, connector: str, config: dict[str, Any], field: str
    ) -> None:
        assert [f["field"] for f in refused_fields(connector, config)] == [field]

    def test_a_deployment_may_allow_loopback_endpoints(self) -> None:
        check_config("azure_blob", {**AZURE, "account_url": "http://127.0.0.1:10000/dev"}, LAX)
        check_config("gcs", {"bucket": "docs", "endpoint_url": "http://127.0.0.1:4443"}, LAX)

    def test_both_are_listed_with_their_container_and_secret_kind(self) -> None:
        azure, gcs = describe("azure_blob"), describe("gcs")
        assert (azure["secret_kind"], azure["change_signal"]) == ("azure_storage", "ETag")
        assert gcs["secret_kind"] == "gcp_service_account"
        assert "md5Hash" in gcs["change_signal"]
        assert {"account_url", "container", "prefix"} <= set(azure["config_schema"]["properties"])
        assert {"bucket", "prefix"} <= set(gcs["config_schema"]["properties"])
        assert azure["secret_required"] and gcs["secret_required"]


class TestAzureCredential:
    def test_each_form_of_the_secret(self) -> None:
        named = credential_of({"account_name": "acme", "account_key": KEY})
        assert isinstance(named, AzureNamedKeyCredential)
        assert (named.named_key.name, named.named_key.key) == ("acme", KEY)
        sas = credential_of({"sas_token": f"?{SAS}"})
        assert isinstance(sas, AzureSasCredential) and sas.signature == SAS
        # a connection string's endpoints are not where docproc connects: account_url is
        conn = "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={};BlobEndpoint=http://10.0.0.1"
        from_string = credential_of({"connection_string": conn.format(KEY)})
        assert isinstance(from_string, AzureNamedKeyCredential)
        assert from_string.named_key.key == KEY
        client = AzureBlobConnector(
            AzureBlobConfig(**AZURE), {"connection_string": conn.format(KEY)}, STRICT
        ).client
        assert client.url.startswith("https://acme.blob.core.windows.net/handbook")

    def test_no_secret_no_run(self) -> None:
        with pytest.raises(ConnectorError, match="azure_storage secret"):
            AzureBlobConnector(AzureBlobConfig(**AZURE), None, STRICT)
        with pytest.raises(ConnectorError, match="neither a connection string"):
            AzureBlobConnector(AzureBlobConfig(**AZURE), {"account_name": "acme"}, STRICT)

    async def test_an_internal_account_url_is_refused_when_the_worker_connects(self) -> None:
        config = AzureBlobConfig(account_url="https://169.254.169.254", container="handbook")
        connector = AzureBlobConnector(config, {"sas_token": SAS}, STRICT)
        with pytest.raises(NetworkRefusedError):
            await connector.list_files()
        await connector.aclose()


class TestGcsCredential:
    def test_the_service_account_signs_read_only(
        self, service_json: dict[str, str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # the deployment's environment is never the tenant's: no emulator, no ADC
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", "http://127.0.0.1:1")
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent.json")
        connector = GcsConnector(GcsConfig(bucket="docs"), service_json, STRICT)
        assert isinstance(connector.credentials, service_account.Credentials)
        assert connector.credentials.service_account_email == service_json["client_email"]
        assert connector.credentials.scopes == [READ_ONLY]
        assert connector.client._connection.API_BASE_URL == "https://storage.googleapis.com"
        assert connector.client.project == "docproc-test"

    @pytest.mark.parametrize(
        "broken",
        [
            {"private_key": "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n"},
            {"type": "authorized_user"},
            {"client_email": None},
        ],
    )
    def test_a_malformed_service_account_does_not_run(
        self, service_json: dict[str, str], broken: dict[str, Any]
    ) -> None:
        secret = {k: v for k, v in {**service_json, **broken}.items() if v is not None}
        with pytest.raises(ConnectorError, match="not a usable service-account key"):
            GcsConnector(GcsConfig(bucket="docs"), secret, STRICT)

    def test_the_token_uri_is_https(self, service_json: dict[str, str]) -> None:
        secret = {**service_json, "token_uri": "http://tokens.example/token"}
        with pytest.raises(ConnectorError, match="token_uri"):
            GcsConnector(GcsConfig(bucket="docs"), secret, STRICT)

    async def test_an_internal_token_uri_is_refused_when_the_worker_connects(
        self, service_json: dict[str, str]
    ) -> None:
        secret = {**service_json, "token_uri": "https://169.254.169.254/token"}
        connector = GcsConnector(GcsConfig(bucket="docs"), secret, STRICT)
        with pytest.raises(NetworkRefusedError):
            await connector.list_files()
        await connector.aclose()
