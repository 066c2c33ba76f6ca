"""The teardown's claim stages on the in-memory unit (``docproc_testing.memory``) and
in-memory reservations: a deletion is carried out once, a redelivery is absorbed by the
claim, a reservation someone else holds is left to them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import pytest
from docproc_common.bus.delivery import Delivery
from docproc_common.bus.stage import Outcome, run_claimed
from docproc_common.events import CollectionDeleted, DocumentDeleted
from docproc_common.storage import AsyncStorage
from docproc_teardown.handler import CollectionTeardownStage, DocumentTeardownStage
from docproc_teardown.service import Plan
from docproc_testing.memory import Memory, MemoryStorage, memory_storage


@dataclass
class MemoryReservations:
    """``handler.Reservations`` in dicts: reservations by id, chunk sets by collection."""

    plans: dict[uuid.UUID, Plan] = field(default_factory=dict)
    held: set[uuid.UUID] = field(default_factory=set)  # locked by another worker
    dropped: list[uuid.UUID] = field(default_factory=list)
    chunks: dict[str, set[uuid.UUID]] = field(default_factory=dict)
    deletes: int = 0
    down: bool = False  # the database went away

    async def plan(self, _session: Memory, teardown_id: uuid.UUID) -> Plan | None:
        return None if teardown_id in self.held else self.plans.get(teardown_id)

    async def drop(self, _session: Memory, teardown_id: uuid.UUID) -> bool:
        if teardown_id in self.held or self.plans.pop(teardown_id, None) is None:
            return False
        self.dropped.append(teardown_id)
        return True

    async def delete_chunks(
        self, _session: Memory, collection: str, vector_document_ids: Sequence[uuid.UUID]
    ) -> None:
        if self.down:
            raise ConnectionError("the database went away")
        self.deletes += 1
        self.chunks.get(collection, set()).difference_update(vector_document_ids)


class Setup:
    def __init__(self, storage: AsyncStorage, store: MemoryStorage) -> None:
        self.memory = Memory()
        self.store = store
        self.reservations = MemoryReservations()
        self.collections = CollectionTeardownStage(storage, self.reservations)
        self.documents = DocumentTeardownStage(storage, self.reservations)

    def files(self, *keys: str) -> None:
        for key in keys:
            self.store.put(key, b"x")


@pytest.fixture
def setup() -> Iterator[Setup]:
    with memory_storage() as (storage, store):
        yield Setup(storage, store)


def delivery(topic: str, event_id: uuid.UUID | None = None, attempt: int = 1) -> Delivery:
    return Delivery("teardown", topic, event_id or uuid.uuid4(), attempt)


async def test_the_teardown_of_a_reserved_name_takes_its_files_then_drops_once(
    setup: Setup,
) -> None:
    teardown = uuid.uuid4()
    setup.files("uploads/a.pdf", "rag/gone/parsed/1.txt", "rag/gone2/parsed/2.txt")
    setup.reservations.plans[teardown] = Plan(["uploads/a.pdf"], "rag/gone")
    event = CollectionDeleted(collection_name="gone", teardown_id=teardown)
    d = delivery(CollectionDeleted.TOPIC)
    assert await run_claimed(setup.memory.unit(d), setup.collections, event) is Outcome.WRITTEN
    assert set(setup.store.objects) == {"rag/gone2/parsed/2.txt"}
    assert setup.reservations.dropped == [teardown] and setup.reservations.plans == {}
    assert setup.memory.processed == {("teardown", d.event_id)}


async def test_a_redelivered_deletion_is_absorbed_by_the_claim(setup: Setup) -> None:
    teardown = uuid.uuid4()
    setup.reservations.plans[teardown] = Plan(["uploads/a.pdf"], None)
    event = CollectionDeleted(collection_name="gone", teardown_id=teardown)
    d = delivery(CollectionDeleted.TOPIC)
    assert await run_claimed(setup.memory.unit(d), setup.collections, event) is Outcome.WRITTEN
    # the name is taken again and a new reservation reuses the path: the redelivery of the
    # finished deletion touches neither
    setup.files("uploads/a.pdf")
    setup.reservations.plans[teardown] = Plan(["uploads/a.pdf"], None)
    again = delivery(CollectionDeleted.TOPIC, d.event_id, attempt=2)
    assert await run_claimed(setup.memory.unit(again), setup.collections, event) is (
        Outcome.PROCESSED
    )
    assert setup.store.exists("uploads/a.pdf") and setup.reservations.dropped == [teardown]


async def test_a_reservation_another_worker_holds_is_left_to_it(setup: Setup) -> None:
    teardown = uuid.uuid4()
    setup.files("uploads/a.pdf")
    setup.reservations.plans[teardown] = Plan(["uploads/a.pdf"], None)
    setup.reservations.held.add(teardown)
    event = CollectionDeleted(collection_name="gone", teardown_id=teardown)
    d = delivery(CollectionDeleted.TOPIC)
    assert await run_claimed(setup.memory.unit(d), setup.collections, event) is Outcome.WRITTEN
    assert setup.store.exists("uploads/a.pdf") and setup.reservations.dropped == []
    assert setup.memory.processed == {("teardown", d.event_id)}  # only the claim


async def test_a_deleted_documents_files_and_chunks_go_once(setup: Setup) -> None:
    kept, gone = uuid.uuid4(), uuid.uuid4()
    setup.files("rag/c/a.txt", "rag/c/b.txt")
    setup.reservations.chunks["c"] = {kept, gone}
    event = DocumentDeleted(
        collection_name="c", vector_document_ids=[gone], storage_paths=["rag/c/a.txt"]
    )
    d = delivery(DocumentDeleted.TOPIC)
    assert await run_claimed(setup.memory.unit(d), setup.documents, event) is Outcome.WRITTEN
    assert set(setup.store.objects) == {"rag/c/b.txt"}
    assert setup.reservations.chunks["c"] == {kept}
    again = delivery(DocumentDeleted.TOPIC, d.event_id, attempt=2)
    assert await run_claimed(setup.memory.unit(again), setup.documents, event) is (
        Outcome.PROCESSED
    )
    assert setup.reservations.deletes == 1


async def test_a_failed_chunk_delete_commits_no_claim(setup: Setup) -> None:
    setup.reservations.down = True
    event = DocumentDeleted(
        collection_name="c", vector_document_ids=[uuid.uuid4()], storage_paths=[]
    )
    with pytest.raises(ConnectionError):
        await run_claimed(
            setup.memory.unit(delivery(DocumentDeleted.TOPIC)), setup.documents, event
        )
    assert setup.memory.processed == set()  # the retry does it all again
