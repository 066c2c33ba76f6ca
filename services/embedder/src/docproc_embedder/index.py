"""The embedder's ``Index`` on the database: the knowledge base (or the bases on the name),
the name's lock and teardown reservation, bulk entry, the collection's vector table and
the tracking row, in the unit's session."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from docproc_common.citations import Citation
from docproc_common.db.models import KnowledgeBase, RagDocument
from docproc_common.documents import retire_failed_attempts
from docproc_common.names import is_reserved, kbs_named, lock_name
from docproc_common.unfiled import is_operator_row
from docproc_common.vectorstore import (
    ChunkStamp,
    delete_documents,
    ensure_table,
    table_exists,
    write_chunks,
)
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_embedder import repository
from docproc_embedder.bulk import BulkMode

if TYPE_CHECKING:
    from docproc_embedder.handler import Destination


class SqlIndex:
    def __init__(self, bulk: BulkMode) -> None:
        self._bulk = bulk

    async def base(self, session: AsyncSession, kb_id: uuid.UUID) -> KnowledgeBase | None:
        return await repository.kb_of(session, kb_id)

    async def bases_named(self, session: AsyncSession, collection: str) -> list[KnowledgeBase]:
        return await kbs_named(session, collection)

    async def lock_name(self, session: AsyncSession, collection: str) -> None:
        await lock_name(session, collection)

    async def lock_base(self, session: AsyncSession, kb_id: uuid.UUID) -> KnowledgeBase | None:
        return await repository.share_lock_kb(session, kb_id)

    async def reserved(self, session: AsyncSession, collection: str) -> bool:
        return await is_reserved(session, collection)

    async def enter_bulk(self, session: AsyncSession, collection: str, kb: KnowledgeBase) -> None:
        await self._bulk.maybe_enter(session, collection, kb)

    async def put(
        self,
        session: AsyncSession,
        collection: str,
        destination: Destination,
        vector_document_id: uuid.UUID,
        chunks: list[str],
        embeddings: npt.NDArray[np.float32],
        stamp: ChunkStamp,
        citations: list[Citation] | None,
    ) -> int:
        if not await table_exists(session, collection):
            await ensure_table(
                session,
                collection,
                destination.target.dimensions,
                destination.text_search_config,
                destination.vector_type,
            )
        return await write_chunks(
            session, collection, vector_document_id, chunks, embeddings, stamp, citations
        )

    async def drop(
        self, session: AsyncSession, collection: str, vector_document_ids: Sequence[uuid.UUID]
    ) -> None:
        await delete_documents(session, collection, vector_document_ids)

    async def complete(
        self,
        session: AsyncSession,
        row: RagDocument,
        vector_document_id: uuid.UUID,
        written: int,
    ) -> None:
        await repository.complete(session, row.id, vector_document_id, written)
        await retire_failed_attempts(session, row.id)
        await repository.retire_replaced(session, row)
        if is_operator_row(row):
            await repository.retire_earlier_ingests(session, row)

    def wrote(self) -> None:
        self._bulk.wrote()
