"""The embedder's reservation barrier (``still_wanted``, the seed's name for it): a name
reserved by a pending teardown takes no chunk set, even when its knowledge base's row is
still there, as a default base's is while it is emptied (#1382).

The real ``EmbedderHandler`` with the local model on a fresh database of the test Postgres.
"""

from __future__ import annotations

import uuid

import pytest
from docproc_common.db.models import CollectionTeardown, DocumentStatus, RagDocument
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.events import DocumentIndexed
from docproc_common.runtime import Runtime
from docproc_common.vectorstore import table_exists
from docproc_embedder.handler import EmbedderHandler

from .conftest import delivery, one, parsed_document

pytestmark = pytest.mark.integration


async def test_a_reserved_name_takes_no_chunks_and_the_document_fails(
    runtime: Runtime, clients: EmbeddingClients
) -> None:
    event = await parsed_document(runtime)  # its base's row stays, as an emptied default's
    async with runtime.sessionmaker() as s, s.begin():
        s.add(CollectionTeardown(collection_name=event.collection_name, drop_table=False))
    await EmbedderHandler(runtime, clients)(event, delivery(uuid.uuid4()))
    async with runtime.sessionmaker() as s:
        doc = await s.get(RagDocument, event.document_id)
        assert not await table_exists(s, event.collection_name)
    assert doc is not None
    assert (doc.status, doc.chunk_count, doc.vector_document_id) == (DocumentStatus.ERROR, 0, None)
    assert doc.error_message == (
        "The collection is being deleted; upload the document again once it is recreated"
    )
    (indexed,) = await one(
        runtime.sessionmaker,
        "SELECT count(*) FROM outbox WHERE topic = :t AND payload->>'document_id' = :d",
        t=DocumentIndexed.TOPIC,
        d=str(event.document_id),
    )
    assert indexed == 0
