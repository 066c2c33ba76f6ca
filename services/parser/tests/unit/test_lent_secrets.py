"""The parser opens a key only as the document's stored configuration binds it
(``docproc_parser.keys.Lent``): the row is what the API checked; an event naming
another secret, or the same secret for another use, opens nothing."""

from __future__ import annotations

import uuid
from typing import Any, cast

from docproc_common.db.models import RagDocument
from docproc_common.runtime import Runtime
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
