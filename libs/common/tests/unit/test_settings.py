import base64
from pathlib import Path
from typing import Any

import pytest
from docproc_common.settings import (
    DEV_JWT_SECRET,
    DEV_VAULT_KEY,
    ENV_ALIASES,
    BusMode,
    MissingKeyError,
    Settings,
    StorageBackend,
)
from pydantic import ValidationError
from pydantic_settings import SettingsError


class TestSettings:
    def test_nested_environment_variables(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("KAFKA__BOOTSTRAP_SERVERS", "broker:9092")
        monkeypatch.setenv("STORAGE__BACKEND", "s3")
        monkeypatch.setenv("STORAGE__S3_BUCKET", "b")
        monkeypatch.setenv("BUS__MODE", "embedded")
        monkeypatch.setenv("LIMITS__CHAT_MAX_UPLOAD_SIZE_MB", "12")
        s = Settings()
        assert s.kafka.bootstrap_servers == "broker:9092"
        assert s.storage.backend is StorageBackend.S3
        assert s.bus.mode is BusMode.EMBEDDED
        assert s.limits.chat_max_upload_size_mb == 12

    def test_request_cap_is_the_larger_limit_plus_the_multipart_margin(self) -> None:
        s = Settings(limits={"max_upload_size_mb": 50, "chat_max_upload_size_mb": 80})
        assert s.limits.max_request_bytes == 80 * 1024 * 1024 + s.limits.multipart_margin_bytes

    def test_dev_secrets_are_refused_in_prod(self) -> None:
        with pytest.raises(ValidationError, match="AUTH__JWT_SECRET is the development key"):
            Settings(env="prod", auth={"jwt_secret": DEV_JWT_SECRET})
        with pytest.raises(ValidationError, match="VAULT__MASTER_KEY is the development key"):
            Settings(env="test", vault={"master_key": DEV_VAULT_KEY})
        key = base64.b64encode(b"k" * 32).decode()
        Settings(env="prod", auth={"jwt_secret": "x" * 48}, vault={"master_key": key})


class TestSafeByDefault:
    """Unless a process asks for ``ENV=dev``, no key defaults to the published one."""

    def test_the_default_env_is_prod_with_no_key(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("ENV")
        s = Settings()
        assert s.env == "prod"
        assert s.auth.jwt_secret is None and s.vault.master_key is None
        with pytest.raises(MissingKeyError, match="AUTH__JWT_SECRET is not set"):
            s.require_keys(["auth"])
        with pytest.raises(MissingKeyError, match="VAULT__MASTER_KEY is not set"):
            s.require_keys(["vault"])

    def test_a_published_key_in_the_environment_is_refused(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.delenv("ENV")
        monkeypatch.setenv("AUTH__JWT_SECRET", DEV_JWT_SECRET)
        with pytest.raises(ValidationError, match="AUTH__JWT_SECRET is the development key"):
            Settings()

    def test_dev_falls_back_to_the_development_keys(self) -> None:
        s = Settings(env="dev")
        assert s.auth.secret() == DEV_JWT_SECRET
        assert s.vault.key() == DEV_VAULT_KEY
        s.require_keys(["auth", "vault"])
        mine = "m" * 40
        assert Settings(env="dev", auth={"jwt_secret": mine}).auth.secret() == mine

    @pytest.mark.parametrize("env", ["prod", "test"])
    def test_a_short_hmac_key_is_refused_outside_dev(self, env: str) -> None:
        with pytest.raises(ValidationError, match="shorter than 32 bytes"):
            Settings(env=env, auth={"jwt_secret": "x" * 31})
        # bytes, not characters: 16 two-byte characters are 32 bytes
        assert Settings(env=env, auth={"jwt_secret": "é" * 16}).auth.secret() == "é" * 16
        assert Settings(env="dev", auth={"jwt_secret": "short"}).auth.secret() == "short"


class TestSeedEnvironmentNames:
    """The seed's flat names are aliases of the nested settings; two values for one is refused."""

    @pytest.fixture(autouse=True)
    def _clean(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for flat, (group, name) in ENV_ALIASES.items():
            monkeypatch.delenv(flat, raising=False)
            monkeypatch.delenv(f"{group}__{name}".upper(), raising=False)

    @pytest.mark.parametrize(
        ("env", "expected"),
        [
            pytest.param(
                {
                    "CHAT_MAX_UPLOAD_SIZE_MB": "12",
                    "MAX_UPLOAD_SIZE_MB": "70",
                    "FILE_STORAGE_BACKEND": "s3",
                    "FILE_IO_MAX_WORKERS": "6",
                },
                {
                    "limits.chat_max_upload_size_mb": 12,
                    "limits.max_upload_size_mb": 70,
                    "storage.backend": StorageBackend.S3,
                    "limits.file_io_max_workers": 6,
                },
                id="the_flat_names_set_the_nested_settings",
            ),
            pytest.param(
                {"LIMITS__CHAT_MAX_UPLOAD_SIZE_MB": "14", "STORAGE__BACKEND": "s3"},
                {"limits.chat_max_upload_size_mb": 14, "storage.backend": StorageBackend.S3},
                id="the_nested_names_still_work",
            ),
            pytest.param(
                {
                    "CHAT_MAX_UPLOAD_SIZE_MB": "12",
                    "LIMITS__CHAT_MAX_UPLOAD_SIZE_MB": "12",
                    "FILE_STORAGE_BACKEND": "S3",
                    "storage__backend": "s3",
                },
                {"limits.chat_max_upload_size_mb": 12, "storage.backend": StorageBackend.S3},
                id="both_spellings_with_one_value_are_fine",
            ),
        ],
    )
    def test_either_spelling_sets_the_setting(
        self, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: dict[str, object]
    ) -> None:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        s = Settings()
        for path, value in expected.items():
            section, name = path.split(".")
            actual = getattr(getattr(s, section), name)
            assert actual == value and type(actual) is type(value), path

    @pytest.mark.parametrize(
        ("flat", "nested"),
        [(flat, f"{group}__{name}".upper()) for flat, (group, name) in ENV_ALIASES.items()],
    )
    def test_two_values_for_one_setting_are_refused_naming_both(
        self, monkeypatch: pytest.MonkeyPatch, flat: str, nested: str
    ) -> None:
        monkeypatch.setenv(flat, "local" if "BACKEND" in flat else "12")
        monkeypatch.setenv(nested, "s3" if "BACKEND" in flat else "13")
        with pytest.raises(SettingsError, match=f"{flat}=.* and {nested}=.*set one of them"):
            Settings()

    def test_every_name_the_specification_gives(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """FILE_STORAGE_S3_PREFIX and the rest were silently ignored: objects went to the
        bucket's root."""
        env = {
            "FILE_STORAGE_S3_PREFIX": "tenant-a/",
            "MEDIA_DIR": "/srv/media",
            "CHAT_TIFF_MAX_INLINE_PAGES": "3",
            "CHAT_PARSED_TEXT_MAX_CHARS": "1000",
            "SANDBOX_INLINE_IMAGE_MAX_BYTES": "4096",
            "WORKSPACE_ARCHIVE_MAX_ENTRIES": "10",
            "WORKSPACE_ARCHIVE_MAX_BYTES": "2048",
            "WORKSPACE_ARCHIVE_MAX_RATIO": "7",
            "WORKSPACE_ARCHIVE_MAX_MEMBER_BYTES": "1024",
            "DB_POOL_SIZE": "3",
            "DB_MAX_OVERFLOW": "2",
        }
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        s = Settings()
        assert s.storage.s3_prefix == "tenant-a/"
        assert str(s.storage.media_dir) == "/srv/media"
        assert (s.limits.chat_tiff_max_inline_pages, s.limits.chat_parsed_text_max_chars) == (
            3,
            1000,
        )
        assert s.limits.sandbox_inline_image_max_bytes == 4096
        assert (
            s.limits.workspace_archive_max_entries,
            s.limits.workspace_archive_max_bytes,
            s.limits.workspace_archive_max_ratio,
            s.limits.workspace_archive_max_member_bytes,
        ) == (10, 2048, 7, 1024)
        assert (s.database.pool_size, s.database.max_overflow) == (3, 2)

    @pytest.mark.parametrize(
        ("name", "says"),
        [
            ("STORAGE__S3_PREFX", "did you mean STORAGE__S3_PREFIX"),
            ("storage__s3_prefx", "did you mean STORAGE__S3_PREFIX"),
            ("STORGE__S3_PREFIX", "did you mean STORAGE__S3_PREFIX"),
            ("LIMITS__MAX_UPLOAD_SIZE", "did you mean LIMITS__MAX_UPLOAD_SIZE_MB"),
            ("MAX_UPLOAD_SIZE_MD", "did you mean MAX_UPLOAD_SIZE_MB"),
            ("CHAT_PDF_PARSER", "no longer read"),
            ("SYNC__CONCURENCY", "did you mean SYNC__CONCURRENCY"),  # a service's own section
            ("SYNCC__CONCURRENCY", "did you mean SYNC__CONCURRENCY"),
            ("DOCPROC_HOM", "did you mean DOCPROC_HOME"),
        ],
    )
    def test_a_misspelt_setting_is_refused_naming_it(
        self, monkeypatch: pytest.MonkeyPatch, name: str, says: str
    ) -> None:
        monkeypatch.setenv(name, "1")
        with pytest.raises(SettingsError, match=f"{name.upper()} .*{says}"):
            Settings()

    @pytest.mark.parametrize(
        "name",
        [
            "PATH",
            "KUBERNETES_SERVICE_HOST",
            "VAULT__NEW_MASTER_KEY",
            "DOCPROC_HOME",
            # Kubernetes' service links for a Service called docproc-upload
            "DOCPROC_UPLOAD_SERVICE_HOST",
            "DOCPROC_UPLOAD_PORT_8000_TCP_ADDR",
        ],
    )
    def test_other_names_are_left_alone(self, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
        monkeypatch.setenv(name, "x")
        Settings()

    @pytest.mark.parametrize(
        ("name", "value", "read"),
        [
            ("PARSER__MAX_CONCURRENT", "3", lambda s: s.parser.max_concurrent == 3),
            ("EMBEDDER__CONCURRENCY", "6", lambda s: s.embedder.concurrency == 6),
            ("SYNC__CONCURRENCY", "8", lambda s: s.sync.concurrency == 8),
            (
                "SYNC__API_ENDPOINTS",
                '{"google_drive": "http://drive.internal/"}',
                lambda s: s.sync.api_endpoints == {"google_drive": "http://drive.internal/"},
            ),
            (
                "SYNC__LOCAL_ROOTS",
                '["/srv/docs"]',
                lambda s: s.sync.local_roots == [Path("/srv/docs")],
            ),
        ],
    )
    def test_a_services_own_section_is_a_section_of_the_settings(
        self, monkeypatch: pytest.MonkeyPatch, name: str, value: str, read: Any
    ) -> None:
        """Every service's own settings are read, under its name, with the shared ones: in
        every process, so a typo or a bad value in any of them refuses to start."""
        monkeypatch.setenv(name, value)
        assert read(Settings())

    def test_a_bad_value_in_a_services_own_section_is_refused(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("SYNC__CONCURRENCY", "many")
        with pytest.raises(ValidationError, match=r"sync\.concurrency"):
            Settings()

    def test_the_sync_state_dir_follows_docproc_home_when_the_settings_are_read(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        monkeypatch.setenv("DOCPROC_HOME", str(tmp_path))
        assert Settings().sync.state_dir == tmp_path / "sync"

    def test_an_empty_alias_is_ignored(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("CHAT_MAX_UPLOAD_SIZE_MB", "")
        monkeypatch.setenv("LIMITS__CHAT_MAX_UPLOAD_SIZE_MB", "15")
        assert Settings().limits.chat_max_upload_size_mb == 15
