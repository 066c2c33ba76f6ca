"""One document into a knowledge base, once its bytes are in hand: every check, then the
original stored, then its row and ``DocumentAccepted`` committed together.

The unit of work of every upload into a base: the multipart routes (``POST
/kb/{kb_id}/documents``, ``POST /rag/collections/{name}/ingest``) after they have read
the form, and the MCP ``upload_text`` tool (``docproc_upload.mcp_server``). Like a route,
it owns its transactions and holds none while the file is hashed or stored. The caller
admits the upload first (``IntakeGuard.admit``), before it reads the bytes.
"""

from __future__ import annotations

import logging
import uuid

from docproc_common.auth import Principal
from docproc_common.storage import new_storage_path
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.deps import Upload
from docproc_upload.rag_documents import service
from docproc_upload.rag_documents.schemas import RAGIngestResponse

log = logging.getLogger(__name__)


async def ingest_file(
    db: AsyncSession,
    upload: Upload,
    caller: Principal,
    kb_id: uuid.UUID,
    incoming: service.IncomingFile,
    *,
    ingestion: str | None = None,
    organizational_unit: str | None = None,
    document_date: str | None = None,
    replace: bool = False,
) -> RAGIngestResponse:
    """Check everything, store the original, then commit the row and its event together;
    no transaction is open while the file is hashed or stored."""
    runtime = upload.runtime
    async with db.begin():
        intake = await service.check_upload(
            db,
            caller,
            runtime.settings,
            kb_id,
            incoming,
            ingestion,
            organizational_unit,
            document_date,
        )
    digest = await runtime.pool.run(service.sha256_hex, incoming.data)
    storage_path = new_storage_path(f"rag/{intake.collection_name}", incoming.filename)
    await runtime.storage.put(storage_path, incoming.data, incoming.content_type)
    document_id = uuid.uuid4()
    try:
        async with db.begin():
            answer = await service.accept_upload(
                db,
                caller,
                intake,
                incoming,
                storage_path,
                document_id,
                content_hash=digest,
                replace=replace,
            )
    except Exception as exc:
        landed = await service.committed_anyway(runtime, document_id, exc)
        if landed is False:
            await runtime.storage.delete(storage_path)
        if not landed:
            raise
        log.warning("document %s: its commit was cut off but had landed; accepted", document_id)
        answer = service.ingest_answer(intake, incoming, document_id)
    except BaseException:
        await runtime.storage.delete(storage_path)
        raise
    service.accepted(incoming)
    return answer
