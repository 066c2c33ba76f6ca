import base64

import pytest
from docproc_common.settings import BusMode, Settings, StorageBackend
from pydantic import ValidationError


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
        with pytest.raises(ValidationError, match="AUTH__JWT_SECRET"):
            Settings(env="prod")
        key = base64.b64encode(b"k" * 32).decode()
        Settings(env="prod", auth={"jwt_secret": "x" * 48}, vault={"master_key": key})
