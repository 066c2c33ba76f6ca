"""The index stage's decisions on the in-memory unit (``docproc_testing.memory``) and an
in-memory ``Index``: what is written, replaced, refused and cleaned up, with no database
and no model."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from docproc_common.bus.delivery import Delivery, Subscription
from docproc_common.bus.policy import Outcome as Handling
from docproc_common.bus.policy import RetryPolicy, handle_with_retries
from docproc_common.bus.stage import Outcome, give_up, run
from docproc_common.citations import Citation, citations_key, dump_citations
from docproc_common.db.models import DocumentStatus, KnowledgeBase, RagDocument, Scope, WriterKind
from docproc_common.embedding.client import (
    CredentialSource,
    EmbeddingClient,
    EmbeddingCredentialRejectedError,
    EmbeddingProviderUnavailable,
    EmbeddingTarget,
    RefusingClient,
    ResolvedEmbedding,
)
from docproc_common.errors import InvalidInput
from docproc_common.events import DocumentFailed, DocumentIndexed, DocumentParsed
from docproc_common.operator_content import LOCAL_MODEL
from docproc_common.storage import AsyncStorage
from docproc_common.vectorstore import ChunkStamp
from docproc_embedder.handler import Destination, IndexStage, vector_document_id
from docproc_testing.memory import Memory, MemoryStorage, memory_storage
from docproc_testing.rows import knowledge_base, tracking_row

CHUNKS = ["capybaras swim", "capybaras graze"]


@dataclass
class MemoryIndex:
    """``handler.Index`` in dicts: bases, reserved names, chunk sets by (collection, id), and
    what the writes were told: their stamps, the table shape, the names they locked."""

    bases: dict[uuid.UUID, KnowledgeBase] = field(default_factory=dict)
    reserved_names: set[str] = field(default_factory=set)
    sets: dict[tuple[str, uuid.UUID], list[str]] = field(default_factory=dict)
    citations: dict[tuple[str, uuid.UUID], list[Citation] | None] = field(default_factory=dict)
    stamps: list[ChunkStamp] = field(default_factory=list)
    shapes: list[tuple[int, str, str]] = field(default_factory=list)
    locked_names: list[str] = field(default_factory=list)
    bulk_checks: list[str] = field(default_factory=list)
    committed: int = 0

    async def base(self, _session: Memory, kb_id: uuid.UUID) -> KnowledgeBase | None:
        return self.bases.get(kb_id)

    async def bases_named(self, _session: Memory, collection: str) -> list[KnowledgeBase]:
        return [kb for kb in self.bases.values() if kb.collection_name == collection]

    async def lock_name(self, _session: Memory, collection: str) -> None:
        self.locked_names.append(collection)

    async def lock_base(self, _session: Memory, kb_id: uuid.UUID) -> KnowledgeBase | None:
        return self.bases.get(kb_id)

    async def reserved(self, _session: Memory, collection: str) -> bool:
        return collection in self.reserved_names

    async def enter_bulk(self, _session: Memory, collection: str, _kb: KnowledgeBase) -> None:
        self.bulk_checks.append(collection)

    async def put(
        self,
        _session: Memory,
        collection: str,
        destination: Destination,
        vector_document_id: uuid.UUID,
        chunks: list[str],
        _embeddings: npt.NDArray[np.float32],
        stamp: ChunkStamp,
        citations: list[Citation] | None,
    ) -> int:
        self.sets[collection, vector_document_id] = list(chunks)
        self.citations[collection, vector_document_id] = citations
        self.stamps.append(stamp)
        self.shapes.append(
            (destination.target.dimensions, destination.text_search_config, destination.vector_type)
        )
        return len(chunks)

    async def drop(
        self, _session: Memory, collection: str, vector_document_ids: Sequence[uuid.UUID]
    ) -> None:
        for vdid in vector_document_ids:
            self.sets.pop((collection, vdid), None)

    async def complete(
        self, _session: Memory, row: RagDocument, vector_document_id: uuid.UUID, written: int
    ) -> None:
        row.status = DocumentStatus.DONE
        row.vector_document_id = vector_document_id
        row.chunk_count = written
        row.error_message = None

    def wrote(self) -> None:
        self.committed += 1


class Client:
    dimensions = 4

    def __init__(self) -> None:
        self.calls = 0
        self.refusal: Exception | None = None

    async def embed(
        self,
        texts: list[str],
        kind: str = "passage",  # noqa: ARG002
    ) -> npt.NDArray[np.float32]:
        self.calls += 1
        if self.refusal is not None:
            raise self.refusal
        return np.ones((len(texts), self.dimensions), dtype=np.float32)

    def count_tokens(self, texts: list[str]) -> int:
        return sum(len(t) // 4 for t in texts)


class Setup:
    def __init__(self, storage: AsyncStorage, store: MemoryStorage) -> None:
        self.memory = Memory()
        self.index = MemoryIndex()
        self.client = Client()
        self.store = store
        self.kb = KnowledgeBase(
            id=uuid.uuid4(), organization_id="acme", embedding_provider="local", embedding_dim=4
        )
        self.index.bases[self.kb.id] = self.kb
        self.targets: list[EmbeddingTarget] = []
        #: what the vault's resolution hands out instead, when it refuses the collection
        self.refused: RefusingClient | None = None

        async def client_for(target: EmbeddingTarget) -> EmbeddingClient:
            self.targets.append(target)
            return self.refused or self.client

        self.stage = IndexStage(storage, client_for, self.index)

    def parsed(self, **columns: Any) -> tuple[RagDocument, DocumentParsed]:
        row = self.memory.add(tracking_row("c", self.kb.id, "notes.txt", **columns))
        return row, self.event_of(row)

    def operator_content(self) -> tuple[RagDocument, DocumentParsed]:
        """A row ``rag-ingest`` accepted on "c": no base, no organization."""
        row = self.memory.add(
            tracking_row(
                "c", None, "runbook.md", organization_id=None, writer_kind=WriterKind.OPERATOR
            )
        )
        return row, self.event_of(row)

    def event_of(self, row: RagDocument) -> DocumentParsed:
        assert row.attempt_id is not None
        event = DocumentParsed(
            document_id=row.id,
            attempt_id=row.attempt_id,
            collection_name="c",
            knowledge_base_id=row.knowledge_base_id,
            chunks_path=f"rag/c/chunks/{row.id}/{row.attempt_id}.json",
            parsed_path=f"rag/c/parsed/{row.id}.txt",
            chunk_count=len(CHUNKS),
        )
        self.store.put(event.chunks_path, json.dumps(CHUNKS).encode())
        return event

    async def run(self, event: DocumentParsed, delivery: Delivery) -> Outcome:
        return await run(self.memory.unit(delivery), self.stage, event)


@pytest.fixture
def setup() -> Iterator[Setup]:
    with memory_storage() as (storage, store):
        yield Setup(storage, store)


def delivery(event_id: uuid.UUID | None = None, attempt: int = 1) -> Delivery:
    return Delivery("embedder", DocumentParsed.TOPIC, event_id or uuid.uuid4(), attempt)


async def test_an_index_writes_the_set_and_the_row_done_with_the_claim(setup: Setup) -> None:
    row, event = setup.parsed()
    d = delivery()
    assert await setup.run(event, d) is Outcome.WRITTEN
    vdid = vector_document_id(event)
    assert setup.index.sets == {("c", vdid): CHUNKS}
    assert (row.status, row.vector_document_id, row.chunk_count) == (DocumentStatus.DONE, vdid, 2)
    (indexed,) = setup.memory.sent(DocumentIndexed)
    assert isinstance(indexed, DocumentIndexed) and indexed.chunk_count == 2
    assert ("embedder", d.event_id) in setup.memory.processed
    assert setup.index.bulk_checks == ["c"] and setup.index.committed == 1
    assert not setup.store.exists(event.chunks_path)  # the spent chunk set goes
    assert setup.index.locked_names == []  # a base's write takes no name lock
    assert setup.index.stamps[0].knowledge_base_id == setup.kb.id


CITED = [Citation(1, 1, 0, 14, ("Capybaras",)), Citation(1, 2, 16, 40, ("Capybaras",))]


async def test_the_citations_recorded_next_to_the_set_are_written_with_it(setup: Setup) -> None:
    _, event = setup.parsed()
    setup.store.put(citations_key(event.chunks_path), dump_citations(CITED))
    assert await setup.run(event, delivery()) is Outcome.WRITTEN
    assert setup.index.citations == {("c", vector_document_id(event)): CITED}
    assert not setup.store.exists(citations_key(event.chunks_path))  # spent with the set


async def test_a_set_from_before_citations_is_written_without_them(setup: Setup) -> None:
    """A chunk set an older parser wrote (no citations next to it), redelivered after an
    upgrade: embedded as before, its chunks without citations."""
    _, event = setup.parsed()
    assert await setup.run(event, delivery()) is Outcome.WRITTEN
    assert setup.index.sets == {("c", vector_document_id(event)): CHUNKS}
    assert setup.index.citations == {("c", vector_document_id(event)): None}


async def test_a_redelivery_after_the_commit_embeds_nothing_and_removes_the_chunk_set(
    setup: Setup,
) -> None:
    _, event = setup.parsed()
    d = delivery()
    assert await setup.run(event, d) is Outcome.WRITTEN
    setup.store.put(event.chunks_path, json.dumps(CHUNKS).encode())  # a crash before its delete
    assert await setup.run(event, delivery(d.event_id, attempt=2)) is Outcome.PROCESSED
    assert setup.client.calls == 1 and len(setup.memory.outbox) == 1
    assert not setup.store.exists(event.chunks_path)


async def test_a_reindex_replaces_the_earlier_set(setup: Setup) -> None:
    earlier = uuid.uuid4()
    setup.index.sets["c", earlier] = ["old"]
    row, event = setup.parsed(vector_document_id=earlier)
    assert await setup.run(event, delivery()) is Outcome.WRITTEN
    assert setup.index.sets == {("c", vector_document_id(event)): CHUNKS}
    assert row.vector_document_id == vector_document_id(event)


async def test_a_name_a_teardown_reserved_gets_no_chunks_and_the_row_says_why(
    setup: Setup,
) -> None:
    setup.index.reserved_names.add("c")
    row, event = setup.parsed()
    d = delivery()
    assert await setup.run(event, d) is Outcome.FAILED
    assert setup.index.sets == {} and setup.index.bulk_checks == []
    assert row.status == DocumentStatus.ERROR
    assert row.error_message == (
        "The collection is being deleted; upload the document again once it is recreated"
    )
    (failed,) = setup.memory.sent(DocumentFailed)
    assert isinstance(failed, DocumentFailed) and failed.stage == "indexed"
    assert setup.memory.sent(DocumentIndexed) == []
    assert ("embedder", d.event_id) in setup.memory.processed
    assert not setup.store.exists(event.chunks_path)


async def test_a_base_deleted_before_the_read_or_while_embedding_fails_the_row(
    setup: Setup,
) -> None:
    gone = "The knowledge base was deleted while the document was being indexed"
    row, event = setup.parsed()
    del setup.index.bases[setup.kb.id]
    assert await setup.run(event, delivery()) is Outcome.FAILED
    assert (row.error_message, setup.client.calls) == (gone, 0)

    setup.index.bases[setup.kb.id] = setup.kb
    row, event = setup.parsed()
    embed = setup.client.embed

    async def deleted_meanwhile(texts: list[str], kind: str = "passage") -> npt.NDArray[np.float32]:
        del setup.index.bases[setup.kb.id]
        return await embed(texts, kind)

    setup.client.embed = deleted_meanwhile  # type: ignore[method-assign]
    assert await setup.run(event, delivery()) is Outcome.FAILED
    assert row.error_message == gone and setup.index.sets == {}


async def test_a_stale_attempt_embeds_nothing_and_removes_its_chunk_set(setup: Setup) -> None:
    row, event = setup.parsed()
    row.attempt_id = uuid.uuid4()
    assert await setup.run(event, delivery()) is Outcome.SUPERSEDED
    assert setup.client.calls == 0 and setup.memory.outbox == []
    assert setup.memory.processed == set()
    assert not setup.store.exists(event.chunks_path)


async def test_a_retry_started_while_embedding_writes_nothing(setup: Setup) -> None:
    row, event = setup.parsed()
    embed = setup.client.embed

    async def retried_meanwhile(texts: list[str], kind: str = "passage") -> npt.NDArray[np.float32]:
        row.attempt_id = uuid.uuid4()
        return await embed(texts, kind)

    setup.client.embed = retried_meanwhile  # type: ignore[method-assign]
    d = delivery()
    assert await setup.run(event, d) is Outcome.ABANDONED
    assert setup.index.sets == {} and setup.memory.outbox == []
    assert setup.memory.processed == {("embedder", d.event_id)}  # only the claim commits
    assert not setup.store.exists(event.chunks_path)  # the retry's parse writes its own


async def test_a_provider_refusal_fails_the_row_and_an_outage_is_retried(setup: Setup) -> None:
    row, event = setup.parsed()
    setup.client.refusal = ConnectionError("provider down")
    with pytest.raises(ConnectionError):
        await setup.run(event, delivery())
    assert row.status == DocumentStatus.PROCESSING and setup.memory.processed == set()

    setup.client.refusal = InvalidInput("The embedding credential was refused")
    assert await setup.run(event, delivery()) is Outcome.FAILED
    assert row.error_message == "The embedding credential was refused"


async def test_giving_up_says_how_often_the_index_failed(setup: Setup) -> None:
    row, event = setup.parsed()
    unit = setup.memory.unit(delivery(attempt=5))
    assert await give_up(unit, setup.stage, event, TimeoutError(), 5) is Outcome.FAILED
    assert row.error_message is not None
    assert row.error_message.startswith(
        "The document could not be indexed (TimeoutError) - it failed 5 times"
    )
    assert not setup.store.exists(event.chunks_path)


async def test_a_rejected_credential_fails_the_row_with_the_providers_message(
    setup: Setup,
) -> None:
    """The provider answers 401 (``HttpEmbeddingClient`` raises what
    ``libs/common/tests/unit/test_embedding_client.py::test_rejected_credential`` pins): the row
    ends ``error`` with that message, once, and no chunk is written."""
    rejected = (
        "The embedding provider 'openai' rejected the credential of collection 'c' (HTTP 401) - "
        "replace the key in the vault or bind another one to the collection"
    )
    setup.client.refusal = EmbeddingCredentialRejectedError(rejected)
    row, event = setup.parsed(chunk_count=0)  # as the database's default leaves it
    d = delivery()
    assert await setup.run(event, d) is Outcome.FAILED
    assert (row.status, row.error_message, row.chunk_count) == (DocumentStatus.ERROR, rejected, 0)
    assert setup.index.sets == {} and setup.client.calls == 1
    (failed,) = setup.memory.sent(DocumentFailed)
    assert isinstance(failed, DocumentFailed) and failed.error_message == rejected
    assert setup.memory.sent(DocumentIndexed) == []
    assert setup.memory.processed == {("embedder", d.event_id)}


async def test_a_key_deleted_from_the_vault_is_named_in_the_failure(setup: Setup) -> None:
    """The collection's key was deleted: the resolution hands out a ``RefusingClient`` (the
    source ``secret_deleted``, ``test_vault_embeddings.py::TestResolution``), and the row says
    so in the vault's words, with no chunk written."""
    resolved = ResolvedEmbedding(
        collection_name="c",
        provider="openai",
        model="text-embedding-3-small",
        dims=4,
        base_url=None,
        api_key=None,
        source=CredentialSource.SECRET_DELETED,
    )
    setup.refused = RefusingClient(resolved.refusal(), 4)
    row, event = setup.parsed()
    assert await setup.run(event, delivery()) is Outcome.FAILED
    assert row.status == DocumentStatus.ERROR
    assert row.error_message == (
        "No embedding credential is configured for this collection 'c' (openai): "
        "the secret was deleted"
    )
    assert setup.index.sets == {} and setup.memory.sent(DocumentIndexed) == []


async def test_a_provider_that_never_answers_ends_the_row_error_once_the_bus_gives_up(
    setup: Setup, caplog: pytest.LogCaptureFixture
) -> None:
    """503 on every attempt (``EmbeddingProviderUnavailable``, a retryable error): each of the
    bus's attempts asks the provider again and records nothing; past the last, ``give_up``
    turns the row ``error`` saying how often it failed, naming no endpoint, and the event is
    dead-lettered (the bus's retry policy as the Kafka runner applies it)."""
    setup.client.refusal = EmbeddingProviderUnavailable(
        "The embedding provider 'openai' is unavailable (HTTP 503)"
    )
    row, event = setup.parsed(chunk_count=0)

    async def handler(e: DocumentParsed, d: Delivery) -> None:
        await run(setup.memory.unit(d), setup.stage, e)

    async def gave_up(e: DocumentParsed, d: Delivery, exc: BaseException) -> None:
        await give_up(setup.memory.unit(d), setup.stage, e, exc, d.attempt)

    subscription = Subscription(DocumentParsed.TOPIC, handler, give_up=gave_up)
    policy = RetryPolicy(in_place_retries=0, backoff_s=0, delay_s=0, max_attempts=5)
    event_id, payload = uuid.uuid4(), event.model_dump(mode="json")
    for attempt in range(1, 5):
        result = await handle_with_retries(
            subscription, payload, delivery(event_id, attempt), policy
        )
        assert result.outcome is Handling.RETRY
        assert row.status == DocumentStatus.PROCESSING and setup.memory.processed == set()
    result = await handle_with_retries(subscription, payload, delivery(event_id, 5), policy)
    assert result.outcome is Handling.DLQ
    assert setup.client.calls == 5  # every attempt asked the provider
    assert (row.status, row.chunk_count) == (DocumentStatus.ERROR, 0)
    assert row.error_message == (
        "The document could not be indexed (EmbeddingProviderUnavailable) - it failed 5 times "
        "on something other than the file (the embedding provider not answering, storage or "
        "the database); retry the upload later. The worker log has the full error."
    )
    assert setup.index.sets == {} and setup.memory.sent(DocumentIndexed) == []
    assert "dead-lettering" in caplog.text and "EmbeddingProviderUnavailable" in caplog.text


def kb_on_c(scope: Scope, provider: str, model: str, dims: int, **columns: Any) -> KnowledgeBase:
    return knowledge_base(
        "c",
        id=uuid.uuid4(),
        scope=scope,
        embedding_provider=provider,
        embedding_model=model,
        embedding_dim=dims,
        **columns,
    )


async def test_operator_content_embeds_as_the_names_app_base_under_the_names_lock(
    setup: Setup,
) -> None:
    """A row no base owns (``rag-ingest``) embeds as the name's app-scoped base does, into its
    table's shape; its write holds the name's lock and stamps no base and no organization."""
    del setup.index.bases[setup.kb.id]
    app = kb_on_c(
        Scope.APP, "ollama", "all-minilm", 384, organization_id=None, text_search_config="english"
    )
    setup.index.bases[app.id] = app
    row, event = setup.operator_content()
    assert await setup.run(event, delivery()) is Outcome.WRITTEN
    assert [(t.provider, t.model) for t in setup.targets] == [("ollama", "all-minilm")]
    assert setup.index.locked_names == ["c"]
    assert setup.index.shapes[0][:2] == (384, "english")
    (stamp,) = setup.index.stamps
    assert (stamp.knowledge_base_id, stamp.organization_id, stamp.writer_kind) == (
        None,
        None,
        WriterKind.OPERATOR,
    )
    assert row.status == DocumentStatus.DONE
    assert setup.index.bulk_checks == []  # only a base's load enters bulk mode


async def test_operator_content_without_an_app_base_embeds_with_the_builtin_model(
    setup: Setup,
) -> None:
    del setup.index.bases[setup.kb.id]
    local = kb_on_c(Scope.ORG, "local", LOCAL_MODEL, 384)
    setup.index.bases[local.id] = local
    _, event = setup.operator_content()
    assert await setup.run(event, delivery()) is Outcome.WRITTEN
    assert [(t.provider, t.model, t.organization_id) for t in setup.targets] == [
        ("local", LOCAL_MODEL, None)
    ]


async def test_operator_content_never_embeds_with_an_organizations_key(setup: Setup) -> None:
    """A name held by a base on a keyed provider (and no app-scoped one) refuses operator
    content: the row says which base, and nothing is embedded or written."""
    del setup.index.bases[setup.kb.id]
    keyed = kb_on_c(Scope.ORG, "openai", "text-embedding-3-small", 1536)
    setup.index.bases[keyed.id] = keyed
    row, event = setup.operator_content()
    assert await setup.run(event, delivery()) is Outcome.FAILED
    assert row.error_message is not None and str(keyed.id) in row.error_message
    assert setup.client.calls == 0 and setup.index.sets == {}


async def test_operator_content_on_a_reserved_name_gets_no_chunks(setup: Setup) -> None:
    setup.index.reserved_names.add("c")
    row, event = setup.operator_content()
    assert await setup.run(event, delivery()) is Outcome.FAILED
    assert setup.index.sets == {} and setup.index.locked_names == ["c"]
    assert row.error_message == (
        "The collection is being deleted; upload the document again once it is recreated"
    )
