"""Which keys a document's parse may open: those its row's configuration binds (``Lent``),
from the vault of the row's organization."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from docproc_common import vault
from docproc_common.db.models import RagDocument, VisionModelProfile
from docproc_common.ingestion import IngestionConfig, VisionProfile
from docproc_common.runtime import Runtime
from pydantic import ValidationError

from docproc_parser.engine.processor import SecretOpener

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Lent:
    """What a document's row lends its parse: the organization whose vault is opened, and
    the (secret, kind) pairs its stored configuration binds.

    The row's configuration is the one the API checked the bindings of, in the transaction
    that queued the attempt (the event carries a copy): a secret it does not bind, for the
    use it binds it to, is never opened, whatever an event names. The parser cannot ask
    again whether the binder may see the key (their permissions are their token's); it
    can hold the key to that binding, to the document's organization and to its kind.
    """

    organization_id: str | None
    secrets: frozenset[tuple[uuid.UUID, str]]
    #: The vision model profile the row's configuration selects, resolved when the parse
    #: read its row: (profile id, the profile) - None when it selects none or it is gone.
    vision: tuple[uuid.UUID, VisionProfile] | None = None

    @staticmethod
    def selected(row: RagDocument) -> uuid.UUID | None:
        """The vision model profile the row's configuration selects."""
        try:
            return IngestionConfig.model_validate(row.ingestion_config).vision_profile_id
        except ValidationError:
            return None

    @classmethod
    def by(cls, row: RagDocument, profile: VisionModelProfile | None = None) -> Lent:
        """What ``row`` lends; ``profile``: the one its configuration selects, read by the
        parse (the API checked that its key was the selector's to lend when it was selected,
        and a profile never changes, so its key is lent for the profile's address)."""
        try:
            bindings = IngestionConfig.model_validate(row.ingestion_config).secret_bindings()
        except ValidationError:
            bindings = frozenset()
        secrets = {(b.secret_id, str(b.kind)) for b in bindings}
        vision = None
        if profile is not None and profile.id == cls.selected(row):
            vision = (
                profile.id,
                VisionProfile(
                    base_url=profile.base_url, model=profile.model, secret_id=profile.secret_id
                ),
            )
            if profile.secret_id is not None:
                secrets.add((profile.secret_id, "api_key"))
        return cls(row.organization_id, frozenset(secrets), vision)


def vault_keys(runtime: Runtime) -> Callable[[Lent], SecretOpener]:
    """Per parse, the opener of the keys ``Lent`` binds (the parser's ``keys``)."""

    def opener(lent: Lent) -> SecretOpener:
        """Opens a key only as the row's configuration binds it (``Lent``)."""

        async def open_key(secret_id: uuid.UUID, kind: str) -> str | None:
            if (secret_id, kind) not in lent.secrets:
                log.warning("secret %s (%s) is not bound by the document's row", secret_id, kind)
                return None
            async with runtime.sessionmaker() as session:
                opened = await vault.open_secret(
                    session,
                    secret_id=secret_id,
                    organization_id=lent.organization_id,
                    master_key=runtime.settings.vault.key(),
                    kind=kind,
                )
            if opened is None:
                return None
            key = opened.value.get("api_key")
            return str(key) if key else None

        return open_key

    return opener
