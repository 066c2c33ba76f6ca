"""``SyncRequested`` -> list, compare, stage and dispatch each changed file into the pipeline.

Each file gets its tracking row *before* it is indexed, in the same transaction
as its ``DocumentAccepted`` event. Re-running a sync is the retry: a file whose
stored hash matches a ``done`` document is skipped, so an interrupted run
re-sent finishes what is missing and ingests nothing twice.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

from docproc_common.bus.delivery import Delivery
from docproc_common.bus.outbox import enqueue
from docproc_common.db.models import DocumentStatus, RagDocument
from docproc_common.errors import InvalidInput
from docproc_common.events import DocumentAccepted, SyncRequested
from docproc_common.ingestion import merge_config
from docproc_common.processor import check_supported
from docproc_common.runtime import Runtime
from docproc_common.storage import new_storage_path

from docproc_sync import repository
from docproc_sync.connectors import list_local, read_local
from docproc_sync.metrics import FILES, RUNS

log = logging.getLogger(__name__)


class SyncHandler:
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    async def __call__(self, event: SyncRequested, delivery: Delivery) -> None:
        runtime = self._runtime
        if event.connector != "local" or event.knowledge_base_id is None:
            raise InvalidInput(f"The connector '{event.connector}' is not available")
        async with runtime.sessionmaker() as session:
            if await delivery.already_processed(session):
                return
            kb = await repository.kb(session, event.knowledge_base_id)
        if kb is None:
            async with runtime.sessionmaker() as session, session.begin():
                await repository.finish_log(session, event.sync_log_id, {}, "error")
            RUNS.labels("error").inc()
            return
        config = merge_config(kb.ingestion_config, None)
        listing = await runtime.pool.run(list_local, Path(str(event.config["path"])))
        async with runtime.sessionmaker() as session, session.begin():
            await repository.start_log(session, event.sync_log_id, len(listing.files))
        counts = {"ingested": 0, "updated": 0, "skipped": 0, "failed": 0}
        for remote in listing.files:
            try:
                ext = check_supported(remote.name, config.parser)
            except InvalidInput:
                counts["skipped"] += 1
                FILES.labels("unsupported").inc()
                continue
            data, digest = await runtime.pool.run(read_local, remote.address)
            async with runtime.sessionmaker() as session:
                existing = await repository.existing_document(session, kb.id, remote.address)
            if existing is not None:
                _, stored_hash, status = existing
                if event.sync_mode == "new_only" and (
                    repository.is_current(status, stored_hash, digest)
                    or status == DocumentStatus.PROCESSING
                ):
                    counts["skipped"] += 1
                    FILES.labels("skipped").inc()
                    continue
            elif event.sync_mode == "update_only":
                counts["skipped"] += 1
                continue
            staged = new_storage_path(f"rag/{kb.collection_name}/_staged", remote.name)
            await runtime.storage.put(staged, data)
            try:
                async with runtime.sessionmaker() as session, session.begin():
                    attempt = uuid.uuid4()
                    doc = RagDocument(
                        collection_name=kb.collection_name,
                        knowledge_base_id=kb.id,
                        organization_id=kb.organization_id,
                        filename=remote.name[:1024],
                        filesize=len(data),
                        filetype=ext,
                        status=DocumentStatus.PROCESSING,
                        storage_path=None,
                        source="local",
                        source_path=remote.address,
                        content_hash=digest,
                        organizational_unit=event.organizational_unit,
                        ingestion_config=config.model_dump(mode="json"),
                        attempt_id=attempt,
                    )
                    session.add(doc)
                    await session.flush()
                    await enqueue(
                        session,
                        DocumentAccepted(
                            document_id=doc.id,
                            attempt_id=attempt,
                            collection_name=kb.collection_name,
                            knowledge_base_id=kb.id,
                            storage_path=staged,
                            filename=doc.filename,
                            filetype=ext,
                            ingestion_config=doc.ingestion_config,
                            staged=True,
                        ),
                    )
            except BaseException:
                await runtime.storage.delete(staged)
                raise
            counts["updated" if existing is not None else "ingested"] += 1
            FILES.labels("dispatched").inc()
        async with runtime.sessionmaker() as session, session.begin():
            if not await delivery.claim(session):
                return
            await repository.finish_log(session, event.sync_log_id, counts, "done")
        RUNS.labels("ok").inc()
