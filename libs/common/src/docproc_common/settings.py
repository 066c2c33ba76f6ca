"""The settings of every docproc process: one ``Settings``, whose sections are the shared ones
(``database``, ``kafka``, ``storage``, ...) and each service's own (``parser``, ``embedder``,
``sync``), read as ``runtime.settings.<section>``.

Environment variables nest with ``__``: ``DATABASE__URL``,
``KAFKA__BOOTSTRAP_SERVERS``, ``STORAGE__BACKEND``, and a service's own section under its
name: ``PARSER__MEMORY_LIMIT_MB``, ``EMBEDDER__BATCH_TOKENS``, ``SYNC__CONCURRENCY``.
The seed's flat names (``ENV_ALIASES``: ``CHAT_MAX_UPLOAD_SIZE_MB``, ...) are accepted
too; when both spellings of one setting are set they must agree.
Nothing is read at import time: ``get_settings()`` is called by a service's
entry point and the result is passed to the factories that need it.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import os
from collections.abc import Iterable
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

#: The development keys, published in this source: ``ENV=dev`` (``docproc dev``, the tests)
#: uses them when no key is set; any other ``ENV`` refuses them (docs/security.md).
DEV_JWT_SECRET = "docproc-dev-only-secret-change-me-0123456789"  # noqa: S105 - refused outside dev
DEV_VAULT_KEY = "ZG9jcHJvYy1kZXYtdmF1bHQta2V5LW5vdC1zZWNyZXQ="  # noqa: S105 - 32 bytes, dev only
#: The shortest HMAC key accepted outside dev, in bytes (RFC 7518 3.2: at least the hash's
#: output, 32 bytes for HS256).
MIN_JWT_SECRET_BYTES = 32


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
    max_poll_interval_ms: int = (
        900_000  # longer than the slowest handler (a parse deadline, a sync slice)
    )
    #: How long records of revoked partitions may still finish (the group's rebalance waits
    #: for them) before they are cancelled and left to the partitions' next owner.
    revoke_grace_s: float = 30.0
    #: How long a producer's send waits for the broker (its metadata, then the ack) before
    #: it fails (aiokafka's ``request_timeout_ms``).
    producer_timeout_ms: int = 40_000
    topic_partitions: int = 3
    topic_replication: int = 1
    # Prefix of every topic and consumer group on the broker ("<namespace>.<name>"), so that
    # several installations (or test runs) share one cluster; empty: the documented names.
    namespace: str = Field("", pattern=r"^[A-Za-z0-9_-]{0,64}$")

    def on_broker(self, name: str) -> str:
        """The broker's name for a topic or consumer group called ``name`` in the code."""
        return f"{self.namespace}.{name}" if self.namespace else name


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


#: The keys a process may need: ``auth`` signs and verifies tokens, ``vault`` seals secrets.
Key = Literal["auth", "vault"]


class MissingKeyError(RuntimeError):
    """A process needs a key that is not set (outside ``ENV=dev`` there is no default one)."""

    def __init__(self, setting: str, use: str) -> None:
        super().__init__(
            f"{setting} is not set: {use}. Set it (docs/operations.md#secrets); only ENV=dev "
            "falls back to the development key published in docproc's source"
        )
        self.setting = setting


class AuthSettings(BaseModel):
    #: The HMAC key of bearer tokens, at least ``MIN_JWT_SECRET_BYTES`` bytes outside dev
    #: (``openssl rand -base64 48``). Unset outside dev: nothing verifies or signs a token.
    jwt_secret: SecretStr | None = None
    jwt_algorithm: Literal["HS256", "HS384", "HS512"] = "HS256"
    jwt_audience: str | None = None
    jwt_issuer: str | None = None
    #: Seconds of clock skew allowed between the gateway that signs and the API that
    #: verifies, on ``exp``, ``nbf`` and ``iat``.
    leeway_s: float = Field(default=30.0, ge=0, le=300)

    def secret(self) -> str:
        """The signing key, or ``MissingKeyError`` naming ``AUTH__JWT_SECRET``."""
        if self.jwt_secret is None:
            raise MissingKeyError("AUTH__JWT_SECRET", "bearer tokens are signed with it")
        return self.jwt_secret.get_secret_value()


class VaultSettings(BaseModel):
    #: base64 (standard or urlsafe) of 32 random bytes, e.g. ``openssl rand -base64 32``; it
    #: wraps every secret's data key (``docproc_common.vault``, docs/embeddings.md). Unset
    #: outside dev: no stored secret can be opened or sealed.
    master_key: SecretStr | None = None

    @field_validator("master_key")
    @classmethod
    def _thirty_two_bytes(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None:
            decode_master_key(v.get_secret_value())
        return v

    def key(self) -> str:
        """The master key, or ``MissingKeyError`` naming ``VAULT__MASTER_KEY``."""
        if self.master_key is None:
            raise MissingKeyError("VAULT__MASTER_KEY", "stored secrets are sealed with it")
        return self.master_key.get_secret_value()


def decode_master_key(value: str) -> bytes:
    """The 32 bytes of a vault master key given as base64 (standard or urlsafe, padding optional)."""
    raw = value.strip().replace("-", "+").replace("_", "/")
    try:
        decoded = base64.b64decode(raw + "=" * (-len(raw) % 4), validate=True)
    except (binascii.Error, ValueError):
        decoded = b""
    if len(decoded) != 32:
        raise ValueError("VAULT__MASTER_KEY must be the base64 of exactly 32 bytes")
    return decoded


class FormatSettings(BaseModel):
    """What the parser service can read: the parser's fact, not a probe of the machine that
    asks (docs/decisions/0006-parser-capabilities.md). The chart renders one value into every
    service (``FORMATS__LITEPARSE``, ``FORMATS__OFFICE``), so the upload API and sync refuse
    by it, and the parser is not ready while its own machine disagrees. Unset, a part is
    probed where it is read: right only where the parser runs too (``docproc dev``, the CLI)."""

    #: Whether the parser has LiteParse.
    liteparse: bool | None = None
    #: The LibreOffice components the parser has (JSON list); ``[]``: no LibreOffice.
    office: frozenset[Literal["writer", "calc", "impress"]] | None = None


class LimitSettings(BaseModel):
    max_upload_size_mb: int = 50
    chat_max_upload_size_mb: int = 10
    multipart_margin_bytes: int = 1 << 20
    #: The largest JSON body the API reads (an upload's multipart is capped by the sizes
    #: above): the body of a search, a knowledge base or a secret is a few kilobytes.
    max_json_body_bytes: int = Field(default=1 << 20, ge=1024)
    file_io_max_workers: int = 4
    # Chat attachments (docs/chat-uploads.md). Extracted text stops at this many characters.
    chat_parsed_text_max_chars: int = 500_000
    #: TIFF pages shown to a model as PNG images, per file.
    chat_tiff_max_inline_pages: int = 5
    #: Text pasted into one turn for an agent without a workspace, over all its attachments.
    chat_inline_turn_max_chars: int = 1_000_000
    #: Binary formats (PDF, office, mail, archives) are parsed in child processes: at most
    #: this many at once, this many more waiting (then 503), each with a deadline and an
    #: address-space ceiling.
    chat_parse_workers: int = 2
    chat_parse_max_queue: int = 32
    chat_parse_timeout_s: float = 120.0
    chat_parse_memory_mb: int = 2048
    #: An image up to this size is shown to the model *and* written to the workspace.
    sandbox_inline_image_max_bytes: int = 5 * 2**20
    #: Archive (and office container) ceilings, measured while reading.
    workspace_archive_max_entries: int = 5000
    workspace_archive_max_bytes: int = 200 * 2**20
    workspace_archive_max_ratio: int = 100
    workspace_archive_max_member_bytes: int = 50 * 2**20
    #: Bytes attachments may write into one workspace before it counts as full.
    workspace_max_bytes: int = 1 << 30
    #: Seconds a render's links to the workspace's files (and an archive's listing) stay
    #: valid: long enough for the chat runner to copy them into its sandbox.
    workspace_link_ttl_s: int = Field(default=900, ge=1, le=86400)
    #: Knowledge-base intake answers 503 with ``Retry-After: intake_retry_after_s`` while
    #: this many documents wait to be parsed, or to be embedded, or this many outbox events
    #: to be published (0: no bound); the counts are sampled at most every
    #: ``intake_sample_s`` per upload process (docs/operations.md).
    intake_max_parse_queue: int = Field(default=2000, ge=0)
    intake_max_embed_queue: int = Field(default=2000, ge=0)
    intake_max_outbox_backlog: int = Field(default=10_000, ge=0)
    intake_retry_after_s: int = Field(default=10, ge=1)
    intake_sample_s: float = Field(default=1.0, ge=0)

    @property
    def max_request_bytes(self) -> int:
        largest = max(self.max_upload_size_mb, self.chat_max_upload_size_mb)
        return largest * 1024 * 1024 + self.multipart_margin_bytes


class EmbedderSettings(BaseModel):
    #: Padded tokens per local-model call (rows x width); 8192 is 32 full 256-token windows.
    batch_tokens: int = Field(default=8192, ge=1)
    #: Documents one embedder consumer handles at once (over its Kafka partitions, or one
    #: claimed batch on the embedded bus); the local model fuses their chunks' windows.
    concurrency: int = Field(default=4, ge=1)
    threads: int | None = None
    model_cache_dir: Path = Field(default_factory=lambda: docproc_home() / "models")
    #: A JSON file in the shape of the packaged catalog whose models are added to it (e.g.
    #: the models an OpenAI-compatible gateway serves); see docs/embeddings.md.
    catalog_path: Path | None = None
    #: A directory of mounted embedding models, one per sub-directory (``model.onnx``,
    #: ``tokenizer.json``, ``docproc-model.json``), offered on provider ``local`` under
    #: their cards' names (docproc_common.embedding.mounted, docs/embeddings.md). Read by
    #: upload (choosing, search queries) and the embedder (chunks); checked at start-up.
    models_dir: Path | None = None
    #: Origins (``scheme://host[:port][/path]``) a collection's ``embedding_base_url`` may
    #: name besides each provider's own hosts in the catalog (``EMBEDDER__ALLOWED_BASE_URLS``
    #: as a JSON list). A base URL receives the collection's key, so it is never free-form.
    allowed_base_urls: list[str] = Field(default_factory=list)
    #: Let an organization's registered endpoints (scope ``org``) reach loopback, private and
    #: link-local addresses: an on-premises model server, or tests. Off (the default), their
    #: address must be public, at registration and again, resolved and pinned, at every
    #: request (``docproc_common.egress``). Read by upload (registration, search) and the
    #: embedder. The app admin's deployment-wide endpoints are never checked.
    allow_private_endpoints: bool = False
    request_timeout_s: float = 60.0
    #: How long asking an endpoint which models it serves may take before it is "unconfirmed".
    probe_timeout_s: float = 5.0
    #: A cross-encoder directory the deployment mounts (``model.onnx``, ``tokenizer.json``,
    #: optional ``card.json``; ``docproc_common.rerank.cross_encoder``): what a collection
    #: reranking with the ``local`` provider scores with, in upload's process, and what the
    #: embedder's ``/v1/rerank`` serves. None: no local reranker on this deployment.
    rerank_model_dir: Path | None = None
    #: onnxruntime threads of the cross-encoder (None: up to 4, the machine's cores).
    rerank_threads: int | None = Field(default=None, ge=1)
    #: Serve the local model as an OpenAI-compatible ``/v1/embeddings`` on the embedder's port.
    serve_openai_api: bool = False
    #: The bearer token that ``/v1/embeddings`` requires, when set.
    openai_api_token: SecretStr | None = None
    #: Bulk mode (docs/decisions/0005-bulk-load.md): a collection enters it when at least
    #: this many of its documents wait to be indexed, and at least ``bulk_enter_ratio`` x
    #: the documents it has indexed; 0 turns the automatic entry off.
    bulk_enter_backlog: int = Field(default=100, ge=0)
    bulk_enter_ratio: float = Field(default=1.0, ge=0)
    #: It leaves (the fold: index build, merge) once its backlog is at most this many.
    bulk_leave_backlog: int = Field(default=0, ge=0)
    #: How often the embedder looks at a collection's backlog (entry, and the fold).
    bulk_check_interval_s: float = Field(default=10.0, gt=0)
    #: ``maintenance_work_mem`` and ``max_parallel_maintenance_workers`` of a fold's index
    #: builds (the HNSW graph is built in memory; past it the build slows down).
    index_build_maintenance_work_mem: str = Field(default="1GB", pattern=r"^[0-9]+(kB|MB|GB)$")
    index_build_parallel_workers: int = Field(default=2, ge=0, le=64)


#: Where LlamaParse is reached unless ``PARSER__LLAMAPARSE_BASE_URL`` says otherwise (the NA
#: region; the EU one is https://api.cloud.eu.llamaindex.ai).
LLAMAPARSE_BASE_URL = "https://api.cloud.llamaindex.ai"


class ParserSettings(BaseModel):
    """The parser service's own section (``PARSER__*``)."""

    #: Address-space cap of each parse child (RLIMIT_AS), in MiB. LibreOffice runs under it too.
    memory_limit_mb: int = Field(default=2048, ge=256)
    #: The largest file a parse child may write (RLIMIT_FSIZE), in MiB, LibreOffice's too: a
    #: document that would write more fails as on a full disk instead of filling the host's.
    max_temp_file_mb: int = Field(default=4096, ge=1)
    #: Documents parsed at once by one process (each in its own child).
    max_concurrent: int = Field(default=2, ge=1, le=64)
    llamaparse_base_url: str = LLAMAPARSE_BASE_URL
    llamaparse_tier: str = "cost_effective"
    #: Address prefixes a collection's vision profile may name besides the known providers'
    #: hosts, e.g. an in-cluster model server (JSON list in the environment).
    vision_allowed_base_urls: list[str] = Field(default_factory=list)
    #: Timeouts of the HTTP client used for LlamaParse and vision endpoints, in seconds.
    http_connect_timeout_s: float = 10.0
    http_read_timeout_s: float = 120.0


class SyncSettings(BaseModel):
    """The sync service's own section (``SYNC__*``), read by the API too where it accepts
    sources (``docproc_common.connectors.base.ConnectorOptions.of``)."""

    #: How often due sources are looked for (a source's own schedule is ``schedule_seconds``).
    scheduler_interval_s: float = Field(default=30.0, gt=0)
    #: How often finished replacements are promoted and the documents they replaced retired.
    reconcile_interval_s: float = Field(default=5.0, gt=0)
    #: A run longer than this continues in another slice (a new event resuming after the last
    #: file done), so one message never holds a consumer longer than a poll interval allows.
    run_slice_s: float = Field(default=120.0, gt=0)
    #: Files of one run fetched and dispatched at once.
    concurrency: int = Field(default=4, ge=1, le=64)
    #: Let sources reach loopback/private addresses (an on-premises store, tests). Off by default.
    allow_private_networks: bool = False
    #: Accept http:// (not https) for web and git sources and S3 endpoints. Off by default.
    allow_plain_http: bool = False
    #: Per-request timeout of a connector, seconds.
    timeout_s: float = Field(default=30.0, gt=0)
    #: Where per-source caches (git clones) and run scratch directories live.
    state_dir: Path = Field(default_factory=lambda: docproc_home() / "sync")
    #: The shortest schedule a source may ask for, seconds.
    min_schedule_seconds: int = Field(default=300, ge=1)
    #: A connector's API root in place of the public one, by connector name, as JSON
    #: (``{"google_drive": "https://drive.internal/"}``): a private endpoint or a stand-in.
    api_endpoints: dict[str, str] = Field(default_factory=dict)
    #: The directories of this machine a ``local`` source may name, as JSON
    #: (``["/srv/docs"]``); empty, any the app admin names (docs/sync.md). Never, either way,
    #: ``/proc``, ``/sys``, ``/dev`` or docproc's own home (``specs.local.NEVER_SYNCED``).
    local_roots: list[Path] = Field(default_factory=list)


class EvaluationSettings(BaseModel):
    """The upload service's scheduled runs of every knowledge base's evaluation sets
    (``EVALUATIONS__*``; docs/search.md, "Evaluations"), which export
    ``docproc_retrieval_ndcg_at_10``."""

    #: Seconds between two scheduled runs of one evaluation set (86400: daily); 0 (the
    #: default) schedules none and exports no gauge. Each run searches every query of the
    #: set once per mode with the base's embedding model, which a keyed provider bills.
    schedule_interval_s: float = Field(default=0.0, ge=0)
    #: How often each upload replica looks for the sets that are due and refreshes the gauge.
    check_interval_s: float = Field(default=60.0, gt=0)


class OtelSettings(BaseModel):
    exporter_otlp_endpoint: str | None = None
    service_namespace: str = "docproc"


class HttpSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = 8000
    #: ``docproc dev``'s console mints tokens (``POST /console/dev-token``); off, it takes a
    #: token signed elsewhere, and docproc dev may listen beyond loopback.
    dev_sign_in: bool = True
    #: Where ``/metrics`` is served instead of ``port`` (the chart sets it): the public API
    #: port then has no ``/metrics``, and only the scraper the network policy admits reads
    #: the counters. Unset, ``/metrics`` stays on ``port`` (``docproc dev``, one process).
    metrics_port: int | None = Field(default=None, ge=1, le=65535)

    @model_validator(mode="after")
    def _metrics_apart(self) -> HttpSettings:
        if self.metrics_port == self.port:
            raise ValueError("HTTP__METRICS_PORT must differ from HTTP__PORT")
        return self


#: The specification's environment names and the nested setting each one spells (every
#: name it gives; ``GOOGLE_DRIVE_CREDENTIALS_FILE`` is the operator command's option).
ENV_ALIASES: dict[str, tuple[str, str]] = {
    "CHAT_MAX_UPLOAD_SIZE_MB": ("limits", "chat_max_upload_size_mb"),
    "MAX_UPLOAD_SIZE_MB": ("limits", "max_upload_size_mb"),
    "FILE_STORAGE_BACKEND": ("storage", "backend"),
    "FILE_STORAGE_S3_PREFIX": ("storage", "s3_prefix"),
    "MEDIA_DIR": ("storage", "media_dir"),
    "FILE_IO_MAX_WORKERS": ("limits", "file_io_max_workers"),
    "CHAT_PARSED_TEXT_MAX_CHARS": ("limits", "chat_parsed_text_max_chars"),
    "CHAT_TIFF_MAX_INLINE_PAGES": ("limits", "chat_tiff_max_inline_pages"),
    "SANDBOX_INLINE_IMAGE_MAX_BYTES": ("limits", "sandbox_inline_image_max_bytes"),
    "WORKSPACE_ARCHIVE_MAX_ENTRIES": ("limits", "workspace_archive_max_entries"),
    "WORKSPACE_ARCHIVE_MAX_BYTES": ("limits", "workspace_archive_max_bytes"),
    "WORKSPACE_ARCHIVE_MAX_RATIO": ("limits", "workspace_archive_max_ratio"),
    "WORKSPACE_ARCHIVE_MAX_MEMBER_BYTES": ("limits", "workspace_archive_max_member_bytes"),
    "DB_POOL_SIZE": ("database", "pool_size"),
    "DB_MAX_OVERFLOW": ("database", "max_overflow"),
}
#: Names the specification retired: set, they would be silently ignored.
RETIRED_ENV = {"CHAT_PDF_PARSER": "the chat parser is chosen by file type; remove it"}
#: Nested names read outside ``Settings`` (``python -m docproc_common.vault rewrap``).
OTHER_NESTED_ENV = frozenset({"VAULT__NEW_MASTER_KEY"})
#: The flat ``DOCPROC_*`` names docproc reads (the CLI's, the tests' fault points). Only a
#: name close to one of them is refused: Kubernetes sets ``DOCPROC_UPLOAD_SERVICE_HOST`` and
#: the like in every pod of a namespace where a Service is called ``docproc-upload``.
DOCPROC_ENV = frozenset(
    {"DOCPROC_HOME", "DOCPROC_URL", "DOCPROC_TEST_FAULT_POINT", "DOCPROC_TEST_FAULT_CONTROL"}
)


class FlatEnvAliases(PydanticBaseSettingsSource):
    """``ENV_ALIASES`` read from the environment (case-insensitively, like the nested names).

    Set both spellings of one setting to two values and the settings are refused,
    naming both: the chat frontend reads ``CHAT_MAX_UPLOAD_SIZE_MB`` itself, so letting
    either spelling win silently would let the browser and the API disagree on the limit.
    """

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:  # noqa: ARG002
        return None, field_name, False  # __call__ reads the aliases as a whole

    def __call__(self) -> dict[str, Any]:
        env = {k.upper(): v.strip() for k, v in os.environ.items()}
        refuse_unknown_names(env, self.settings_cls.model_fields)
        out: dict[str, dict[str, str]] = {}
        for flat, (group, name) in ENV_ALIASES.items():
            value = env.get(flat, "")
            if not value:
                continue
            nested_name = f"{group}__{name}".upper()
            nested = env.get(nested_name, "")
            if nested and nested.lower() != value.lower():
                raise SettingsError(
                    f"{flat}={value} and {nested_name}={nested} spell one setting with two "
                    "values; set one of them"
                )
            out.setdefault(group, {})[name] = value
        return out


def refuse_unknown_names(env: dict[str, str], sections: dict[str, FieldInfo]) -> None:
    """A ``SettingsError`` naming an environment name that spells a setting that does not
    exist: a field no section has (``STORAGE__S3_PREFX``), a section close to a real one
    (``STORGE__BACKEND``), a name close to one of ``ENV_ALIASES`` (``MAX_UPLOAD_SIZE_MD``),
    or a retired one; a service's own section alike (``SYNC__CONCURENCY``), in every process,
    and a ``DOCPROC_*`` name close to one docproc reads (``DOCPROC_HOM``). Left unread, each
    would leave its setting at the default without a word (objects written at the bucket's
    root)."""
    nested = {
        name: set(info.annotation.model_fields)
        for name, info in sections.items()
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)
    }
    for key, value in env.items():
        if not value or key in OTHER_NESTED_ENV or key in DOCPROC_ENV:
            continue
        if key in RETIRED_ENV:
            raise SettingsError(f"{key} is no longer read: {RETIRED_ENV[key]}")
        if key.startswith("DOCPROC_"):
            if difflib.get_close_matches(key, DOCPROC_ENV, n=1, cutoff=0.85):
                raise SettingsError(_unknown(key, list(DOCPROC_ENV)))
            continue
        section, sep, rest = key.lower().partition("__")
        if sep and section in nested:
            field = rest.partition("__")[0]
            if field not in nested[section]:
                raise SettingsError(_unknown(key, [f"{section}__{f}" for f in nested[section]]))
        elif sep and section and difflib.get_close_matches(section, nested, n=1, cutoff=0.8):
            raise SettingsError(_unknown(key, [f"{s}__{rest}" for s in nested]))
        elif not sep and key not in ENV_ALIASES:
            if difflib.get_close_matches(key, ENV_ALIASES, n=1, cutoff=0.9):
                raise SettingsError(_unknown(key, list(ENV_ALIASES)))


def _unknown(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key.lower(), [k.lower() for k in known], n=1, cutoff=0.6)
    hint = f"; did you mean {close[0].upper()}?" if close else ""
    return f"{key} is not a docproc setting{hint} (docs/operations.md lists them)"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_nested_delimiter="__",
        env_ignore_empty=True,
        extra="ignore",
        hide_input_in_errors=True,  # a refused setting may be a key or a DSN with a password
    )

    #: ``prod`` unless a process asks for ``dev`` (``docproc dev``, the tests): only ``dev``
    #: falls back to the published development keys, and any other value refuses them.
    env: Literal["dev", "test", "prod"] = "prod"
    database: DatabaseSettings = DatabaseSettings()
    kafka: KafkaSettings = KafkaSettings()
    bus: BusSettings = BusSettings()
    storage: StorageSettings = StorageSettings()
    auth: AuthSettings = AuthSettings()
    vault: VaultSettings = VaultSettings()
    limits: LimitSettings = LimitSettings()
    formats: FormatSettings = FormatSettings()
    # each service's own section
    parser: ParserSettings = ParserSettings()
    embedder: EmbedderSettings = EmbedderSettings()
    #: Built as ``Settings`` is read, not at import: its ``state_dir`` follows ``DOCPROC_HOME``.
    sync: SyncSettings = Field(default_factory=SyncSettings)
    evaluations: EvaluationSettings = EvaluationSettings()
    otel: OtelSettings = OtelSettings()
    http: HttpSettings = HttpSettings()
    stuck_after_minutes: int = 30

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (
            init_settings,
            env_settings,
            FlatEnvAliases(settings_cls),
            dotenv_settings,
            file_secret_settings,
        )

    @model_validator(mode="after")
    def _keys(self) -> Settings:
        """Under ``ENV=dev`` an unset key is the development one; elsewhere a development
        key, or an HMAC key shorter than ``MIN_JWT_SECRET_BYTES``, refuses the settings
        (anyone can sign a token with a key printed in the source, or guess a short one)."""
        if self.env == "dev":
            if self.auth.jwt_secret is None:
                self.auth = self.auth.model_copy(update={"jwt_secret": SecretStr(DEV_JWT_SECRET)})
            if self.vault.master_key is None:
                self.vault = self.vault.model_copy(update={"master_key": SecretStr(DEV_VAULT_KEY)})
            return self
        jwt_secret = self.auth.jwt_secret
        if jwt_secret is not None:
            if jwt_secret.get_secret_value() == DEV_JWT_SECRET:
                raise ValueError(_published("AUTH__JWT_SECRET", self.env))
            if len(jwt_secret.get_secret_value().encode()) < MIN_JWT_SECRET_BYTES:
                raise ValueError(
                    f"AUTH__JWT_SECRET is shorter than {MIN_JWT_SECRET_BYTES} bytes; a short "
                    "HMAC key can be guessed from one token (openssl rand -base64 48 makes one)"
                )
        master_key = self.vault.master_key
        if master_key is not None and master_key.get_secret_value() == DEV_VAULT_KEY:
            raise ValueError(_published("VAULT__MASTER_KEY", self.env))
        return self

    def require_keys(self, keys: Iterable[Key]) -> None:
        """Refuse to start (``MissingKeyError``) a process that needs a key not set."""
        for key in keys:
            if key == "auth":
                self.auth.secret()
            else:
                self.vault.key()


def _published(setting: str, env: str) -> str:
    return (
        f"{setting} is the development key published in docproc's source, refused with "
        f"ENV={env}: set a key of your own (only ENV=dev, as docproc dev and the tests "
        "run, accepts it)"
    )


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
