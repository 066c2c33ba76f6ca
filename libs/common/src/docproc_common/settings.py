"""Settings shared by every docproc service.

Environment variables nest with ``__``: ``DATABASE__URL``,
``KAFKA__BOOTSTRAP_SERVERS``, ``STORAGE__BACKEND``, ``EMBEDDER__BATCH_SIZE``.
Nothing is read at import time: ``get_settings()`` is called by a service's
entry point and the result is passed to the factories that need it.
"""

from __future__ import annotations

import os
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEV_JWT_SECRET = "docproc-dev-only-secret-change-me-0123456789"  # noqa: S105 - refused outside dev
DEV_VAULT_KEY = "ZG9jcHJvYy1kZXYtb25seS12YXVsdC1rZXktMDEyMzQ1Njc4OWFi"  # noqa: S105


def docproc_home() -> Path:
    """Where the embedded default keeps its data: ``DOCPROC_HOME`` or ``~/.local/share/docproc``."""
    env = os.environ.get("DOCPROC_HOME")
    return Path(env) if env else Path.home() / ".local" / "share" / "docproc"


class BusMode(StrEnum):
    KAFKA = "kafka"
    EMBEDDED = "embedded"


class StorageBackend(StrEnum):
    LOCAL = "local"
    S3 = "s3"


class DatabaseSettings(BaseModel):
    url: str = ""  # empty: the embedded Postgres under DOCPROC_HOME
    pool_size: int = 10
    max_overflow: int = 10
    echo: bool = False


class KafkaSettings(BaseModel):
    bootstrap_servers: str = "127.0.0.1:9092"
    client_id: str = "docproc"
    max_in_place_retries: int = 3
    retry_backoff_s: float = 0.5
    retry_delay_s: float = 5.0
    max_attempts: int = 5
    dlq_max_ratio: float = 0.5
    dlq_window: int = 20
    poll_timeout_ms: int = 500
    max_records: int = 10
    topic_partitions: int = 3
    topic_replication: int = 1


class BusSettings(BaseModel):
    mode: BusMode = BusMode.KAFKA
    relay_enabled: bool = True  # off when the relay runs as its own deployment
    relay_interval_s: float = 0.2
    relay_batch: int = 100


class StorageSettings(BaseModel):
    backend: StorageBackend = StorageBackend.LOCAL
    media_dir: Path = Field(default_factory=lambda: docproc_home() / "media")
    s3_bucket: str = ""
    s3_prefix: str = ""
    s3_endpoint_url: str | None = None
    s3_region: str = "us-east-1"
    s3_sse: Literal["AES256", "aws:kms"] = "AES256"
    s3_kms_key_id: str | None = None
    connect_timeout_s: float = 5.0
    read_timeout_s: float = 30.0
    max_attempts: int = 5


class AuthSettings(BaseModel):
    jwt_secret: SecretStr = SecretStr(DEV_JWT_SECRET)
    jwt_algorithm: Literal["HS256", "HS384", "HS512"] = "HS256"
    jwt_audience: str | None = None
    jwt_issuer: str | None = None


class VaultSettings(BaseModel):
    master_key: SecretStr = SecretStr(DEV_VAULT_KEY)


class LimitSettings(BaseModel):
    max_upload_size_mb: int = 50
    chat_max_upload_size_mb: int = 10
    multipart_margin_bytes: int = 1 << 20
    file_io_max_workers: int = 4

    @property
    def max_request_bytes(self) -> int:
        largest = max(self.max_upload_size_mb, self.chat_max_upload_size_mb)
        return largest * 1024 * 1024 + self.multipart_margin_bytes


class EmbedderSettings(BaseModel):
    batch_size: int = 32
    threads: int | None = None
    model_cache_dir: Path = Field(default_factory=lambda: docproc_home() / "models")
    insert_batch_rows: int = 500


class OtelSettings(BaseModel):
    exporter_otlp_endpoint: str | None = None
    service_namespace: str = "docproc"


class HttpSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = 8000


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_nested_delimiter="__", env_ignore_empty=True, extra="ignore"
    )

    env: Literal["dev", "test", "prod"] = "dev"
    database: DatabaseSettings = DatabaseSettings()
    kafka: KafkaSettings = KafkaSettings()
    bus: BusSettings = BusSettings()
    storage: StorageSettings = StorageSettings()
    auth: AuthSettings = AuthSettings()
    vault: VaultSettings = VaultSettings()
    limits: LimitSettings = LimitSettings()
    embedder: EmbedderSettings = EmbedderSettings()
    otel: OtelSettings = OtelSettings()
    http: HttpSettings = HttpSettings()
    stuck_after_minutes: int = 30

    @model_validator(mode="after")
    def _no_dev_secrets_in_prod(self) -> Settings:
        if self.env == "prod":
            if self.auth.jwt_secret.get_secret_value() == DEV_JWT_SECRET:
                raise ValueError("AUTH__JWT_SECRET must be set outside dev")
            if self.vault.master_key.get_secret_value() == DEV_VAULT_KEY:
                raise ValueError("VAULT__MASTER_KEY must be set outside dev")
        return self


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
