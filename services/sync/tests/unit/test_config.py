"""A source's configuration is checked where it is submitted; refusals name the field, rooted."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httplib2
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from docproc_common.connectors import CONNECTORS
from docproc_common.connectors.base import ConfigRefusal, ConnectorOptions
from docproc_common.connectors.config import CREDENTIAL_REFUSAL, check_config, describe
from docproc_common.connectors.errors import ClientFailedError, ConnectorError
from docproc_common.connectors.specs.git import MAX_PATTERN_CHARS, MAX_PATTERNS
from docproc_common.connectors.specs.s3 import S3Spec
from docproc_common.settings import Settings
from docproc_sync.connectors.gdrive import (
    MAX_WAIT_S,
    GoogleDriveConfig,
    checked_drive_folder_id,
    http_failure,
    parents_query,
    retry_after,
)
from docproc_sync.connectors.git import GitConfig, git_failure, parse_tree
from docproc_sync.connectors.local import _walk
from docproc_sync.connectors.s3 import S3Config, failure_kind
from docproc_testing.connectors import LAX, SHIPPED, STRICT, config_refusal
from googleapiclient.errors import HttpError


class TestCredentialRefused:
    @pytest.mark.parametrize(
        ("connector", "config", "field"),
        [
            ("s3", {"bucket": "b", "aws_secret_access_key": "x"}, "config.aws_secret_access_key"),
            ("s3", {"bucket": "b", "access_key_id": "AKIA"}, "config.access_key_id"),
            ("s3", {"bucket": "b", "credentials": {"a": 1}}, "config.credentials"),
            ("git", {"repo_url": "https://h/r.git", "token": "ghp_x"}, "config.token"),
            ("git", {"repo_url": "https://h/r.git", "auth": {"password": "p"}}, "config.auth"),
            (
                "web",
                {"start_url": "https://h/", "headers": {"Authorization": "x"}},
                "config.headers.Authorization",
            ),
            ("git", {"repo_url": "https://user:ghp_x@github.com/o/r.git"}, "config.repo_url"),
            ("s3", {"bucket": "b", "service_account_json": "{}"}, "config.service_account_json"),
            (
                "google_drive",
                {"folder_id": "abc", "service_account_json": {"type": "service_account"}},
                "config.service_account_json",
            ),
            ("google_drive", {"folder_id": "abc", "private_key": "-----"}, "config.private_key"),
        ],
    )
    def test_named_and_refused(self, connector: str, config: dict[str, Any], field: str) -> None:
        error = config_refusal(connector, config)
        assert CREDENTIAL_REFUSAL in error["message"].lower()
        fields = error["details"]["fields"]
        assert fields[0]["field"] == field
        assert fields[0]["message"] == CREDENTIAL_REFUSAL


class TestFieldsRooted:
    def test_validate_config_names_its_field_under_config(self) -> None:
        error = config_refusal("s3", {"bucket": "Bad_Bucket'"})
        assert error["details"]["fields"] == [
            {
                "field": "config.bucket",
                "message": "A bucket name is 3-63 lowercase letters, digits, dots and hyphens",
            }
        ]

    def test_a_refusal_that_blames_no_input_names_no_field(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Naming a field is optional: a refusal about no single input (two values that do
        not belong together) reaches the form as a sentence, never a made-up field."""

        class Fieldless(S3Spec):
            @classmethod
            def validate_config(
                cls, config: object, options: ConnectorOptions
            ) -> ConfigRefusal | None:
                return ConfigRefusal("The bucket and the prefix belong to different accounts")

        monkeypatch.setitem(CONNECTORS, "fieldless", Fieldless)
        error = config_refusal("fieldless", {"bucket": "acme-docs", "prefix": "x/"})
        assert error["message"] == "The bucket and the prefix belong to different accounts"
        assert not error["details"].get("fields")

    def test_model_errors_are_rooted_too(self) -> None:
        error = config_refusal("web", {"start_url": "https://example.com/", "max_pages": 0})
        assert [f["field"] for f in error["details"]["fields"]] == ["config.max_pages"]

    def test_unknown_fields_are_refused(self) -> None:
        error = config_refusal("s3", {"bucket": "ok-bucket", "folder": "x"})
        assert [f["field"] for f in error["details"]["fields"]] == ["config.folder"]

    def test_unknown_connector_names_the_connector_field(self) -> None:
        error = config_refusal("gdrive", {})
        assert error["details"]["fields"][0]["field"] == "connector"

    def test_local_path_must_exist(self) -> None:
        error = config_refusal("local", {"path": "relative/dir"})
        assert error["details"]["fields"][0]["field"] == "config.path"


class TestLocalRoots:
    """``/proc`` and docproc's home are never synced; ``SYNC__LOCAL_ROOTS`` narrows the rest."""

    @pytest.mark.parametrize("path", ["/proc", "/proc/self", "/sys/kernel", "/dev"])
    def test_the_kernel_directories_are_refused(self, path: str) -> None:
        error = config_refusal("local", {"path": path})
        assert error["details"]["fields"][0]["field"] == "config.path"
        assert "never synced" in error["message"]

    def test_docproc_home_is_refused(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        (tmp_path / "home" / "pg").mkdir(parents=True)
        monkeypatch.setenv("DOCPROC_HOME", str(tmp_path / "home"))
        for path in (tmp_path / "home", tmp_path / "home" / "pg"):
            error = config_refusal("local", {"path": str(path)})
            assert error["details"]["fields"][0]["field"] == "config.path"
        check_config("local", {"path": str(tmp_path)}, STRICT)

    def test_outside_the_roots_is_refused(self, tmp_path: Path) -> None:
        (tmp_path / "docs" / "a").mkdir(parents=True)
        (tmp_path / "other").mkdir()
        roots = ConnectorOptions(local_roots=(tmp_path / "docs",))
        check_config("local", {"path": str(tmp_path / "docs" / "a")}, roots)
        error = config_refusal("local", {"path": str(tmp_path / "other")}, roots)
        assert error["details"]["fields"][0]["field"] == "config.path"
        # a link inside the roots to a folder outside them is judged by where it leads
        (tmp_path / "docs" / "out").symlink_to(tmp_path / "other")
        assert config_refusal("local", {"path": str(tmp_path / "docs" / "out")}, roots)

    def test_the_roots_come_from_the_setting(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("SYNC__LOCAL_ROOTS", '["/srv/docs"]')
        assert ConnectorOptions.of(Settings().sync).local_roots == (Path("/srv/docs"),)

    def test_a_walk_from_above_docproc_home_never_enters_it(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        (tmp_path / "home").mkdir()
        (tmp_path / "home" / "vault.key").write_text("k")
        (tmp_path / "notes.md").write_text("n")
        monkeypatch.setenv("DOCPROC_HOME", str(tmp_path / "home"))
        assert [f.name for f in _walk(tmp_path.resolve())] == ["notes.md"]


class TestNetworkScope:
    @pytest.mark.parametrize(
        ("connector", "config", "field"),
        [
            ("web", {"start_url": "https://127.0.0.1/"}, "config.start_url"),
            ("web", {"start_url": "https://169.254.169.254/latest/"}, "config.start_url"),
            ("web", {"start_url": "https://localhost:8080/"}, "config.start_url"),
            ("web", {"start_url": "http://example.com/"}, "config.start_url"),
            ("git", {"repo_url": "https://10.0.0.5/r.git"}, "config.repo_url"),
            ("git", {"repo_url": "file:///etc"}, "config.repo_url"),
            ("s3", {"bucket": "bkt", "endpoint_url": "http://[::1]:9000"}, "config.endpoint_url"),
            # an IPv6 form carrying an internal IPv4: NAT64, 6to4, compatible, mapped
            ("web", {"start_url": "https://[64:ff9b::a9fe:a9fe]/"}, "config.start_url"),
            ("git", {"repo_url": "https://[2002:7f00:1::]/r.git"}, "config.repo_url"),
            ("s3", {"bucket": "bkt", "endpoint_url": "https://[::a00:5]"}, "config.endpoint_url"),
            ("web", {"start_url": "https://[::ffff:10.0.0.1]/"}, "config.start_url"),
            # a query string or fragment (a token, a signature) is no address either
            ("git", {"repo_url": "https://h.com/r.git?private_token=x"}, "config.repo_url"),
            (
                "s3",
                {"bucket": "bkt", "endpoint_url": "https://s3.h.com/?sig=x"},
                "config.endpoint_url",
            ),
            ("s3", {"bucket": "bkt", "endpoint_url": "https://s3.h.com/#x"}, "config.endpoint_url"),
        ],
    )
    def test_internal_addresses_and_urls_with_a_query_are_refused_by_default(
        self, connector: str, config: dict[str, Any], field: str
    ) -> None:
        assert config_refusal(connector, config)["details"]["fields"][0]["field"] == field

    def test_a_deployment_may_allow_them(self) -> None:
        check_config("web", {"start_url": "http://127.0.0.1:8000/"}, LAX)
        check_config("s3", {"bucket": "bkt", "endpoint_url": "http://127.0.0.1:9000"}, LAX)


class TestUnreadableUrls:
    @pytest.mark.parametrize(
        ("connector", "config", "field"),
        [
            ("web", {"start_url": "https://h.com:99999/"}, "config.start_url"),
            ("git", {"repo_url": "https://[::1/r.git"}, "config.repo_url"),
            ("s3", {"bucket": "bkt", "endpoint_url": "https://h.com:99999"}, "config.endpoint_url"),
        ],
    )
    def test_a_url_that_cannot_be_taken_apart_is_a_400_naming_it(
        self, connector: str, config: dict[str, Any], field: str
    ) -> None:
        error = config_refusal(connector, config, LAX)
        assert error["details"]["fields"] == [{"field": field, "message": "not a readable URL"}]


class TestClientFailures:
    @pytest.mark.parametrize(
        ("stderr", "reason"),
        [
            (
                "fatal: could not read Username for 'https://h': terminal prompts disabled",
                "authentication refused",
            ),
            ("fatal: Authentication failed for 'https://h/r.git/'", "authentication refused"),
            ("fatal: repository 'https://h/r.git/' not found", "not found"),
            (
                "fatal: unable to access 'https://h/': Could not resolve host: h",
                "host not resolved",
            ),
            (
                "fatal: unable to access 'https://ssl.h/r.git/': Failed to connect to h port 443",
                "connection failed",
            ),
            ("fatal: something new", "exit 128"),
        ],
    )
    def test_git_failures_in_docprocs_words(self, stderr: str, reason: str) -> None:
        assert git_failure(stderr, 128) == reason

    def test_s3_kind_is_the_code_or_the_class_never_the_text(self) -> None:
        def client_error(code: str) -> ClientError:
            return ClientError({"Error": {"Code": code, "Message": "m"}}, "GetObject")

        assert failure_kind(client_error("AccessDenied")) == "AccessDenied"
        assert failure_kind(client_error("see https://x/?token=y")) == "ClientError"
        refused = EndpointConnectionError(endpoint_url="https://k:s@h/b?list-type=2")
        assert failure_kind(refused) == "EndpointConnectionError"

    def test_the_message_is_stage_kind_and_advice(self) -> None:
        error = ClientFailedError("AccessDenied", subject="source")
        assert error.message == (
            "The source could not be synced (AccessDenied) - check the source's configuration "
            "and credential, then run the sync again. The worker log has the full error."
        )


class TestGitConfig:
    @pytest.mark.parametrize("branch", ["-x", "a..b", "a//b", "x.lock", "a/", "a b", "$(id)"])
    def test_branch_names_are_checked(self, branch: str) -> None:
        error = config_refusal("git", {"repo_url": "https://example.com/r.git", "branch": branch})
        assert error["details"]["fields"][0]["field"] == "config.branch"

    @pytest.mark.parametrize("pattern", ["/etc/*", "../*.md", "docs/../../x"])
    def test_include_patterns_stay_relative(self, pattern: str) -> None:
        error = config_refusal(
            "git", {"repo_url": "https://example.com/r.git", "include": [pattern]}
        )
        assert error["details"]["fields"][0]["field"] == "config.include"

    @pytest.mark.parametrize("pattern", ["**.md", "docs/**x", "a/b**/c", "**a" * 10 + "**b"])
    def test_a_star_pair_inside_a_name_is_refused(self, pattern: str) -> None:
        """``**`` crossing folders inside one segment is what only a backtracking search
        follows (``'**a' * 10 + '**b'`` took hours against 80 ``a``): refused, naming it."""
        started = time.monotonic()
        error = config_refusal(
            "git", {"repo_url": "https://example.com/r.git", "include": [pattern]}
        )
        assert time.monotonic() - started < 1.0
        assert error["details"]["fields"][0]["field"] == "config.include"
        assert "whole folders" in error["message"]

    def test_patterns_are_capped_in_count_and_length(self) -> None:
        url = "https://example.com/r.git"
        many = config_refusal("git", {"repo_url": url, "include": ["*.md"] * (MAX_PATTERNS + 1)})
        assert many["details"]["fields"][0]["field"] == "config.include"
        long = "d/" * (MAX_PATTERN_CHARS // 2) + "*.md"
        too_long = config_refusal("git", {"repo_url": url, "include": ["*.md", long]})
        assert too_long["details"]["fields"][0]["field"] == "config.include.1"
        check_config("git", {"repo_url": url, "include": ["*.md"] * MAX_PATTERNS}, STRICT)

    def test_parse_tree_keeps_regular_files_only(self) -> None:
        raw = (
            b"100644 blob " + b"a" * 40 + b"     12\tdocs/a.md\0"
            b"120000 blob " + b"b" * 40 + b"      9\tdocs/link.md\0"
            b"160000 commit " + b"c" * 40 + b"       -\tvendor/sub\0"
            b"100755 blob " + b"d" * 40 + b"      3\trun.sh\0"
        )
        assert [(p, s) for _, _, s, p in parse_tree(raw)] == [("docs/a.md", 12), ("run.sh", 3)]

    def test_default_include(self) -> None:
        assert GitConfig(repo_url="https://e.com/r.git").include == ["**/*.md", "**/*.txt"]


class TestListing:
    def test_every_connector_publishes_its_schema_and_secret_kind(self) -> None:
        described = {name: describe(name) for name in CONNECTORS}
        assert set(described) == SHIPPED
        assert described["google_drive"]["secret_kind"] == "gcp_service_account"
        assert described["sharepoint"]["secret_kind"] == "ms_graph_app"
        assert described["s3"]["secret_kind"] == "aws_credentials"
        assert described["sharepoint"]["secret_kind"] == "ms_graph_app"
        assert described["git"]["secret_kind"] == "git_token"
        assert described["web"]["secret_kind"] is None
        assert described["local"]["admin_only"] is True
        assert described["s3"]["config_schema"] == S3Config.model_json_schema()
        assert "bucket" in described["s3"]["config_schema"]["properties"]
        for d in described.values():
            assert d["config_schema"]["type"] == "object"


class TestGoogleDrive:
    @pytest.mark.parametrize(
        "folder_id",
        ["x' in parents or name contains 'salary", "a b", "x'", "", "é", "a\\'b", "1/2"],
    )
    def test_a_folder_id_google_could_not_emit_is_refused_naming_it(self, folder_id: str) -> None:
        error = config_refusal("google_drive", {"folder_id": folder_id})
        assert [f["field"] for f in error["details"]["fields"]] == ["config.folder_id"]

    def test_the_query_is_built_only_from_a_checked_id(self) -> None:
        assert parents_query("1AbC_d-9") == "'1AbC_d-9' in parents and trashed = false"
        with pytest.raises(ConnectorError):
            parents_query("x' in parents or name contains 'salary")
        assert checked_drive_folder_id("0ABCdefUk9PVA") == "0ABCdefUk9PVA"

    def test_mime_filters_are_types(self) -> None:
        error = config_refusal(
            "google_drive", {"folder_id": "abc", "mime_types": ["text/plain", "pdf"]}
        )
        assert [f["field"] for f in error["details"]["fields"]] == ["config.mime_types"]
        config = check_config(
            "google_drive",
            {"folder_id": "abc", "mime_types": ["application/vnd.google-apps.document", "text/*"]},
            STRICT,
        )
        assert isinstance(config, GoogleDriveConfig) and config.recursive

    def test_a_failure_is_drives_reason_never_its_message(self) -> None:
        body = {
            "error": {
                "code": 403,
                "message": "Rate limit for https://internal.example/drive?key=SECRET",
                "errors": [{"reason": "userRateLimitExceeded"}],
                "status": "PERMISSION_DENIED",
            }
        }
        exc = HttpError(httplib2.Response({"status": 403}), json.dumps(body).encode())
        failure = http_failure(exc, "source")
        assert (failure.kind, failure.retryable, failure.status) == (
            "userRateLimitExceeded",
            True,
            403,
        )
        assert "SECRET" not in failure.message and "internal" not in failure.message
        odd = HttpError(httplib2.Response({"status": 404}), b"<html>not json</html>")
        assert (http_failure(odd, "document").kind, http_failure(odd, "x").retryable) == (  # type: ignore[arg-type]
            "HttpError 404",
            False,
        )

    def test_retry_after(self) -> None:
        assert retry_after({"retry-after": "3"}) == 3.0
        assert retry_after({"retry-after": "86400"}) == MAX_WAIT_S
        assert retry_after({}) is None
        assert retry_after({"retry-after": "soon"}) is None
        assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
