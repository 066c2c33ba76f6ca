"""What the API knows of a connector without running it (``ConnectorSpec``: its name, its
pydantic ``CONFIG_MODEL``, its ``SECRET_KIND``, ``validate_config``), and what the
deployment decides for every source (``ConnectorOptions``).

The connectors that run subclass their spec through ``docproc_sync.connectors.base``
(``BaseSyncConnector``: ``list_files`` + ``_fetch``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel

from docproc_common.blocking import BlockingPool
from docproc_common.settings import SyncSettings


@dataclass(frozen=True, slots=True)
class ConfigRefusal:
    """``validate_config``'s answer: a sentence, and the ``CONFIG_MODEL`` field it is about.

    Naming a field is optional on purpose: a refusal that blames no single input
    (two values that contradict each other) leaves ``field`` None rather than send
    someone to edit a value that was fine.
    """

    message: str
    field: str | None = None


@dataclass(frozen=True, slots=True)
class ConnectorOptions:
    """What the deployment decides for every source (never the tenant's config)."""

    allow_private_networks: bool = False
    allow_plain_http: bool = False
    timeout_s: float = 30.0
    work_dir: Path | None = None  # private scratch of one run
    cache_dir: Path | None = None  # kept between runs of one source (a git clone)
    pool: BlockingPool | None = None
    #: A connector's API root in place of the public one, by connector name (a stand-in, a
    #: private endpoint); the deployment's decision, never a source's.
    api_endpoints: Mapping[str, str] = field(default_factory=dict)
    #: The run replaces everything (``sync_mode`` full): list the source whole, not its changes.
    full_listing: bool = False
    #: The directories a ``local`` source may name (``SYNC__LOCAL_ROOTS``); empty: any.
    local_roots: tuple[Path, ...] = ()

    @classmethod
    def of(
        cls,
        settings: SyncSettings,
        *,
        work_dir: Path | None = None,
        cache_dir: Path | None = None,
        pool: BlockingPool | None = None,
        full_listing: bool = False,
    ) -> ConnectorOptions:
        """The deployment's choices (``SYNC__*``) for a run in ``work_dir``, or for checking a
        source's configuration where none is given."""
        return cls(
            allow_private_networks=settings.allow_private_networks,
            allow_plain_http=settings.allow_plain_http,
            timeout_s=settings.timeout_s,
            work_dir=work_dir,
            cache_dir=cache_dir,
            pool=pool,
            api_endpoints=dict(settings.api_endpoints),
            full_listing=full_listing,
            local_roots=tuple(settings.local_roots),
        )


class ConnectorSpec:
    """What the API knows of a connector without running it: its name and description, its
    ``CONFIG_MODEL``, the secret it authenticates with, and the checks beyond the model's types
    (``validate_config``). The implementation (``docproc_sync.connectors``) subclasses it."""

    NAME: ClassVar[str]
    TITLE: ClassVar[str]
    DESCRIPTION: ClassVar[str] = ""
    CONFIG_MODEL: ClassVar[type[BaseModel]]
    SECRET_KIND: ClassVar[str | None] = None
    SECRET_REQUIRED: ClassVar[bool] = True
    ADMIN_ONLY: ClassVar[bool] = False
    CHANGE_SIGNAL: ClassVar[str] = "content_hash"
    #: What "whatever it has been granted" reaches for this connector, said in the audience
    #: sentence (None: the sentence says no more).
    REACH: ClassVar[str | None] = None
    #: The ``CONFIG_MODEL`` fields that say where the credential is sent (a host, an
    #: endpoint, a bucket that names its host) or which tenant site or drive it opens.
    #: Changing one while a secret is bound lends that secret again, so it needs what
    #: binding it needs. No default: every connector names its own, or the registry's
    #: test fails (a connector without a secret names them too, for the day it takes one).
    DESTINATION_FIELDS: ClassVar[frozenset[str]]

    @classmethod
    def validate_config(cls, config: BaseModel, options: ConnectorOptions) -> ConfigRefusal | None:  # noqa: ARG003
        """Checks beyond the model's types, asked where the config is accepted. None: acceptable."""
        return None
