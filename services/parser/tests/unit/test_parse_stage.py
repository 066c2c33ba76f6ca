"""The parse stage's decisions on the in-memory unit (``docproc_testing.memory``): what is
written, what is recorded, what is cleaned up, with no database and no parse child."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import date
from typing import Any, cast

import pytest
from docproc_common.blocking import BlockingPool
from docproc_common.bus.delivery import Delivery
from docproc_common.bus.stage import Outcome, give_up, run
from docproc_common.db.models import DocumentStatus, RagDocument
from docproc_common.events import DocumentAccepted, DocumentFailed, DocumentParsed
from docproc_parser.engine.errors import ParserCrashed
from docproc_parser.engine.processor import DocumentProcessor, ExtractedDocument, SecretOpener
from docproc_parser.handler import ParseStage, chunks_key, parsed_key
from docproc_parser.keys import Lent
from docproc_testing.memory import Memory, MemoryStorage, memory_storage
from docproc_testing.rows import tracking_row

TEXT = "Capybaras are the largest rodents. They live near water and swim well."


class Extracts:
    """The parse child's answer, without the child: ``TEXT``, dated 2020-05-01."""

    def __init__(self) -> None:
        self.calls = 0

    async def extract(self, data: bytes, filename: str, *_: Any, **__: Any) -> ExtractedDocument:
        self.calls += 1
        return ExtractedDocument(TEXT, 1, False, document_date=date(2020, 5, 1))


def no_keys(_lent: Lent) -> SecretOpener:
    async def opener(_secret: uuid.UUID, _kind: str) -> str | None:
        return None

    return opener


@pytest.fixture(scope="module")
def pool() -> Iterator[BlockingPool]:
    pool = BlockingPool(1, name="test-parse-stage")
    yield pool
    pool.shutdown()


class Setup:
    def __init__(self, pool: BlockingPool, storage: Any, store: MemoryStorage) -> None:
        self.memory = Memory()
        self.store = store
        self.processor = Extracts()
        self.stage = ParseStage(storage, pool, cast(DocumentProcessor, self.processor), no_keys)

    def row(self, **columns: Any) -> RagDocument:
        return self.memory.add(tracking_row("c", uuid.uuid4(), "notes.txt", **columns))

    def accepted(
        self, row: RagDocument, *, staged: bool = False, **config: Any
    ) -> DocumentAccepted:
        path = f"rag/c/{row.id}/notes.txt"
        self.store.put(path, TEXT.encode())
        assert row.attempt_id is not None
        return DocumentAccepted(
            document_id=row.id,
            attempt_id=row.attempt_id,
            collection_name="c",
            knowledge_base_id=row.knowledge_base_id,
            storage_path=path,
            filename="notes.txt",
            filetype="txt",
            ingestion_config=config,
            staged=staged,
        )

    async def run(self, event: DocumentAccepted, delivery: Delivery) -> Outcome:
        return await run(self.memory.unit(delivery), self.stage, event)


@pytest.fixture
def setup(pool: BlockingPool) -> Iterator[Setup]:
    with memory_storage() as (storage, store):
        yield Setup(pool, storage, store)


def delivery(event_id: uuid.UUID | None = None, attempt: int = 1) -> Delivery:
    return Delivery("parser", DocumentAccepted.TOPIC, event_id or uuid.uuid4(), attempt)


async def test_a_parse_records_the_row_and_sends_document_parsed_with_the_claim(
    setup: Setup,
) -> None:
    row = setup.row(document_date=date(2019, 1, 1))
    event = setup.accepted(row, staged=True)
    d = delivery()
    assert await setup.run(event, d) is Outcome.WRITTEN
    (parsed,) = setup.memory.sent(DocumentParsed)
    assert isinstance(parsed, DocumentParsed)
    assert (parsed.chunks_path, parsed.parsed_path, parsed.chunk_count) == (
        chunks_key(event),
        parsed_key(event),
        1,
    )
    assert row.parsed_path == parsed_key(event)
    assert row.document_date == date(2019, 1, 1)  # the uploader's date wins over the file's
    assert setup.store.get(parsed_key(event)) == TEXT.encode()
    assert ("parser", d.event_id) in setup.memory.processed
    assert not setup.store.exists(event.storage_path)  # the staged copy is spent


async def test_a_redelivery_after_the_commit_parses_and_writes_nothing(setup: Setup) -> None:
    row = setup.row()
    event = setup.accepted(row)
    d = delivery()
    assert await setup.run(event, d) is Outcome.WRITTEN
    assert row.document_date == date(2020, 5, 1)  # none on the row: the file's
    assert await setup.run(event, delivery(d.event_id, attempt=2)) is Outcome.PROCESSED
    assert setup.processor.calls == 1
    assert len(setup.memory.outbox) == 1


async def test_a_stale_attempt_is_not_parsed_and_its_staged_copy_goes(setup: Setup) -> None:
    row = setup.row()
    event = setup.accepted(row, staged=True)
    row.attempt_id = uuid.uuid4()  # retried meanwhile
    assert await setup.run(event, delivery()) is Outcome.SUPERSEDED
    assert setup.processor.calls == 0
    assert setup.memory.outbox == [] and setup.memory.processed == set()
    assert not setup.store.exists(event.storage_path)


async def test_an_attempt_superseded_during_its_parse_leaves_no_chunk_set(setup: Setup) -> None:
    """Retried (or deleted) while the parse ran: only the claim commits, and the chunk set
    stored under the attempt's key goes (the sweeper would otherwise find it an hour later)."""
    row = setup.row()
    event = setup.accepted(row, staged=True)
    extract = setup.processor.extract

    async def retried_meanwhile(*args: Any, **kwargs: Any) -> ExtractedDocument:
        row.attempt_id = uuid.uuid4()
        return await extract(*args, **kwargs)

    setup.processor.extract = retried_meanwhile  # type: ignore[method-assign]
    d = delivery()
    assert await setup.run(event, d) is Outcome.ABANDONED
    assert setup.memory.outbox == [] and setup.memory.processed == {("parser", d.event_id)}
    assert row.parsed_path is None
    assert not setup.store.exists(chunks_key(event))
    assert not setup.store.exists(event.storage_path)  # the staged copy is spent too


async def test_a_deleted_row_is_not_parsed(setup: Setup) -> None:
    row = setup.row()
    event = setup.accepted(row)
    del setup.memory.rows[row.id]
    assert await setup.run(event, delivery()) is Outcome.SUPERSEDED
    assert setup.processor.calls == 0 and setup.memory.outbox == []
    assert setup.store.exists(event.storage_path)  # an original is the row's, not the parse's


async def test_a_file_gone_from_storage_fails_the_document_once(setup: Setup) -> None:
    row = setup.row()
    event = setup.accepted(row)
    setup.store.delete(event.storage_path)
    d = delivery()
    assert await setup.run(event, d) is Outcome.FAILED
    assert row.status == DocumentStatus.ERROR
    assert row.error_message == (
        "The document could not be parsed (FileNotFound) - the stored copy of the file is "
        "gone; upload the file again."
    )
    (failed,) = setup.memory.sent(DocumentFailed)
    assert isinstance(failed, DocumentFailed) and failed.stage == "parsed"
    # the bus giving up on the same event afterwards records nothing more
    unit = setup.memory.unit(d)
    assert await give_up(unit, setup.stage, event, ConnectionError(), 5) is Outcome.OVERTAKEN
    assert len(setup.memory.sent(DocumentFailed)) == 1


async def test_a_configuration_that_no_longer_validates_fails_the_document(setup: Setup) -> None:
    row = setup.row()
    event = setup.accepted(row, chunk_size=0)
    assert await setup.run(event, delivery()) is Outcome.FAILED
    assert row.status == DocumentStatus.ERROR
    assert "(ValidationError)" in (row.error_message or "")


async def test_giving_up_says_what_a_crashed_parse_child_means(setup: Setup) -> None:
    row = setup.row()
    event = setup.accepted(row, staged=True)
    crashed = ParserCrashed(-9, 512)
    assert await give_up(setup.memory.unit(delivery()), setup.stage, event, crashed, 5) is (
        Outcome.FAILED
    )
    assert row.error_message == crashed.final.message
    assert not setup.store.exists(event.storage_path)


async def test_giving_up_on_something_transient_says_how_often_it_failed(setup: Setup) -> None:
    row = setup.row()
    event = setup.accepted(row)
    unit = setup.memory.unit(delivery(attempt=5))
    assert await give_up(unit, setup.stage, event, ConnectionError("db"), 5) is Outcome.FAILED
    assert row.error_message is not None
    assert row.error_message.startswith(
        "The document could not be parsed (ConnectionError) - it failed 5 times on something "
        "other than the file"
    )


async def test_a_transient_error_is_the_bus_to_retry_and_records_nothing(setup: Setup) -> None:
    row = setup.row()
    event = setup.accepted(row)

    async def store_down(*_: Any, **__: Any) -> ExtractedDocument:
        raise ConnectionError("the cloud parser did not answer")

    setup.processor.extract = store_down  # type: ignore[method-assign]
    with pytest.raises(ConnectionError):
        await setup.run(event, delivery())
    assert row.status == DocumentStatus.PROCESSING
    assert setup.memory.outbox == [] and setup.memory.processed == set()
