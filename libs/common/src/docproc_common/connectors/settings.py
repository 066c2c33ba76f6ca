"""Sync settings (``SYNC__*``): read by the sync worker and by the API routes that accept sources."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from docproc_common.blocking import BlockingPool
from docproc_common.connectors.base import ConnectorOptions
from docproc_common.settings import SectionSettings, docproc_home


class SyncSettings(SectionSettings):
    model_config = SettingsConfigDict(env_prefix="SYNC__", env_ignore_empty=True, extra="ignore")

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

    def connector_options(
        self,
        *,
        work_dir: Path | None = None,
        cache_dir: Path | None = None,
        pool: BlockingPool | None = None,
        full_listing: bool = False,
    ) -> ConnectorOptions:
        return ConnectorOptions(
            allow_private_networks=self.allow_private_networks,
            allow_plain_http=self.allow_plain_http,
            timeout_s=self.timeout_s,
            work_dir=work_dir,
            cache_dir=cache_dir,
            pool=pool,
            api_endpoints=dict(self.api_endpoints),
            full_listing=full_listing,
            local_roots=tuple(self.local_roots),
        )


@lru_cache(maxsize=1)
def get_sync_settings() -> SyncSettings:
    return SyncSettings()
