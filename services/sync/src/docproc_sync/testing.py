"""A test bed for sync runs against a real database: rows, secrets, runs, and a stand-in pipeline.

``finish_pipeline`` plays the parser and the embedder (a ``processing`` row
becomes ``done`` with a vector id, or ``error``), so a run's decisions can be
checked without the services; ``tests/e2e/test_sync.py`` runs the real ones.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from docproc_common.connectors.runs import queue_run
from docproc_common.db.models import (
    DocumentStatus,
    KnowledgeBase,
    OutboxEvent,
    RagDocument,
    RagDocumentClaim,
    SyncLog,
    SyncSource,
)
from docproc_common.runtime import Runtime
from docproc_common.settings import SyncSettings
from docproc_common.vault import create_secret
from sqlalchemy import func, select, update

from docproc_sync.service import reconcile_once, run_source


def plain_dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


class SyncBed:
    def __init__(self, runtime: Runtime, settings: SyncSettings) -> None:
        self.runtime = runtime
        self.settings = settings

    async def kb(
        self,
        *,
        scope: str = "org",
        organization_id: str | None = "acme",
        owner_id: str = "alice",
        ingestion_config: dict[str, Any] | None = None,
        collection_name: str | None = None,
    ) -> KnowledgeBase:
        name = collection_name or f"sync_{uuid.uuid4().hex[:10]}"
        async with self.runtime.sessionmaker() as s, s.begin():
            kb = KnowledgeBase(
                name=name,
                collection_name=name,
                scope=scope,
                owner_id=owner_id,
                organization_id=organization_id,
                embedding_provider="local",
                embedding_model="sentence-transformers/all-MiniLM-L6-v2",
                embedding_dim=384,
                ingestion_config=ingestion_config or {},
            )
            s.add(kb)
        return kb

    async def secret(
        self,
        kind: str,
        value: dict[str, Any],
        *,
        organization_id: str | None = "acme",
        owner_id: str = "alice",
        visibility: str = "org",
    ) -> uuid.UUID:
        async with self.runtime.sessionmaker() as s, s.begin():
            secret = await create_secret(
                s,
                owner_id=owner_id,
                organization_id=organization_id,
                name=f"{kind}-{uuid.uuid4().hex[:6]}",
                kind=kind,
                value=value,
                visibility=visibility if organization_id else "private",
                master_key=self.runtime.settings.vault.key(),
            )
            return secret.id

    async def source(
        self,
        kb: KnowledgeBase,
        connector: str,
        config: dict[str, Any],
        *,
        secret_id: uuid.UUID | None = None,
        sync_mode: str = "new_only",
        organizational_unit: str | None = None,
    ) -> SyncSource:
        async with self.runtime.sessionmaker() as s, s.begin():
            src = SyncSource(
                organization_id=kb.organization_id,
                collection_name=kb.collection_name,
                knowledge_base_id=kb.id,
                connector=connector,
                config=config,
                secret_id=secret_id,
                sync_mode=sync_mode,
                organizational_unit=organizational_unit,
                created_by="alice",
            )
            s.add(src)
        return src

    async def set_source(self, source_id: uuid.UUID, **values: Any) -> None:
        async with self.runtime.sessionmaker() as s, s.begin():
            await s.execute(update(SyncSource).where(SyncSource.id == source_id).values(**values))

    async def queue(self, source_id: uuid.UUID) -> uuid.UUID:
        async with self.runtime.sessionmaker() as s, s.begin():
            src = await s.get(SyncSource, source_id)
            assert src is not None
            return (await queue_run(s, src)).id

    async def run(self, source_id: uuid.UUID) -> SyncLog:
        """Queue a run and play it to the end, continuation slices included."""
        log_id = await self.queue(source_id)
        await self.drive(source_id, log_id)
        return await self.log(log_id)

    async def drive(self, source_id: uuid.UUID, log_id: uuid.UUID) -> list[str]:
        """Run ``log_id`` and every slice it continues in; the statuses of the slices."""
        statuses = [await run_source(self.runtime, self.settings, source_id, log_id)]
        while statuses[-1] == "continued":
            resume = await self.continuation(log_id)
            statuses.append(
                await run_source(
                    self.runtime, self.settings, source_id, log_id, resume_after=resume
                )
            )
        return statuses

    async def continuation(self, log_id: uuid.UUID) -> str | None:
        async with self.runtime.sessionmaker() as s:
            rows = await s.execute(
                select(OutboxEvent.payload)
                .where(
                    OutboxEvent.topic == "docproc.sync.requested.v1",
                    OutboxEvent.payload["sync_log_id"].astext == str(log_id),
                )
                .order_by(OutboxEvent.id.desc())
                .limit(1)
            )
            payload = rows.scalar_one()
            resume = payload.get("resume_after")
            return str(resume) if resume is not None else None

    async def log(self, log_id: uuid.UUID) -> SyncLog:
        async with self.runtime.sessionmaker() as s:
            log = await s.get(SyncLog, log_id)
            assert log is not None
            return log

    async def documents(self, kb_id: uuid.UUID) -> list[RagDocument]:
        async with self.runtime.sessionmaker() as s:
            rows = await s.execute(
                select(RagDocument)
                .where(RagDocument.knowledge_base_id == kb_id)
                .order_by(RagDocument.created_at, RagDocument.id)
            )
            return list(rows.scalars())

    async def claims(self, source_id: uuid.UUID) -> list[RagDocumentClaim]:
        async with self.runtime.sessionmaker() as s:
            rows = await s.execute(
                select(RagDocumentClaim).where(RagDocumentClaim.source_id == source_id)
            )
            return list(rows.scalars())

    async def events(self, topic: str, since_id: int = 0) -> list[dict[str, Any]]:
        async with self.runtime.sessionmaker() as s:
            rows = await s.execute(
                select(OutboxEvent.payload)
                .where(OutboxEvent.topic == topic, OutboxEvent.id > since_id)
                .order_by(OutboxEvent.id)
            )
            return list(rows.scalars())

    async def last_event_id(self) -> int:
        async with self.runtime.sessionmaker() as s:
            return int((await s.execute(select(func.max(OutboxEvent.id)))).scalar() or 0)

    async def finish_pipeline(
        self, kb_id: uuid.UUID, *, fail: Iterable[str] = (), reconcile: bool = True
    ) -> Sequence[RagDocument]:
        """Play parser + embedder: every ``processing`` row of the KB becomes ``done`` (or ``error``)."""
        failing = set(fail)
        async with self.runtime.sessionmaker() as s, s.begin():
            rows = await s.execute(
                select(RagDocument).where(
                    RagDocument.knowledge_base_id == kb_id,
                    RagDocument.status == DocumentStatus.PROCESSING,
                )
            )
            docs = list(rows.scalars())
            for doc in docs:
                if doc.filename in failing:
                    doc.status = DocumentStatus.ERROR
                    doc.error_message = "Parsing failed: stand-in"
                else:
                    doc.status = DocumentStatus.DONE
                    doc.vector_document_id = uuid.uuid5(doc.id, str(doc.attempt_id))
                    doc.chunk_count = 1
                doc.completed_at = func.now()
        if reconcile:
            await reconcile_once(self.runtime)
        return docs
