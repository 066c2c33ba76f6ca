"""The parser opens a key only as the document's stored configuration binds it
(``docproc_parser.keys.Lent``): the row is what the API checked; an event naming
another secret, or the same secret for another use, opens nothing."""

from __future__ import annotations

import uuid
from typing import Any, cast

import pytest
from docproc_common.db.models import RagDocument, VisionModelProfile
from docproc_common.ingestion import IngestionConfig, VisionProfile
from docproc_common.runtime import Runtime
from docproc_parser.engine.errors import DocumentUnreadable
from docproc_parser.handler import resolved
from docproc_parser.keys import Lent, vault_keys

LLAMA, VISION = uuid.uuid4(), uuid.uuid4()


def row(config: dict[str, Any]) -> RagDocument:
    return RagDocument(organization_id="acme", ingestion_config=config)


def test_the_row_lends_each_key_for_its_use() -> None:
    profile = {"base_url": "https://vl.example/v1", "model": "m", "secret_id": str(VISION)}
    lent = Lent.by(
        row({"parser": "llamaparse", "llamaparse_secret_id": str(LLAMA), "vision_profile": profile})
    )
    assert lent == Lent("acme", frozenset({(LLAMA, "llamaparse"), (VISION, "api_key")}))
    assert Lent.by(row({})).secrets == frozenset()
    assert Lent.by(row({"chunk_size": 0})).secrets == frozenset()  # no longer valid: lends none


async def test_a_secret_the_row_does_not_bind_is_never_looked_up() -> None:
    class NoVault:
        @property
        def sessionmaker(self) -> Any:
            raise AssertionError("the vault was asked")

    opener = vault_keys(cast(Runtime, NoVault()))(Lent("acme", frozenset({(LLAMA, "llamaparse")})))
    assert await opener(uuid.uuid4(), "llamaparse") is None  # another secret
    assert await opener(LLAMA, "api_key") is None  # the same one, for another use


PROFILE_ID = uuid.uuid4()


def profile(profile_id: uuid.UUID = PROFILE_ID) -> VisionModelProfile:
    return VisionModelProfile(
        id=profile_id,
        organization_id="acme",
        name="p",
        provider="openai",
        model="gpt-4o-mini",
        base_url="https://api.openai.com/v1",
        secret_id=VISION,
        created_by="u",
    )


class TestSelectedProfile:
    """A row that selects a vision model profile lends the profile's key, resolved when the
    parse reads the row; the event's copy of the configuration is resolved against it."""

    SELECTS = {"image_description": True, "vision_profile_id": str(PROFILE_ID)}

    def test_the_selected_profile_lends_its_key_for_its_address(self) -> None:
        lent = Lent.by(row(self.SELECTS), profile())
        assert lent.secrets == frozenset({(VISION, "api_key")})
        assert lent.vision is not None and lent.vision[0] == PROFILE_ID
        config = resolved(IngestionConfig.model_validate(self.SELECTS), lent)
        assert config.vision_profile == VisionProfile(
            base_url="https://api.openai.com/v1", model="gpt-4o-mini", secret_id=VISION
        )

    def test_a_profile_the_row_does_not_select_lends_nothing(self) -> None:
        lent = Lent.by(row(self.SELECTS), profile(uuid.uuid4()))
        assert (lent.secrets, lent.vision) == (frozenset(), None)
        assert Lent.by(row({}), profile()).secrets == frozenset()

    def test_a_gone_profile_fails_a_document_that_describes_images(self) -> None:
        gone = Lent.by(row(self.SELECTS))
        with pytest.raises(DocumentUnreadable, match="VisionProfileNotFound"):
            resolved(IngestionConfig.model_validate(self.SELECTS), gone)
        quiet = {"vision_profile_id": str(PROFILE_ID)}
        assert resolved(IngestionConfig.model_validate(quiet), gone).vision_profile_id is None
