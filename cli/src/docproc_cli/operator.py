"""Operator commands run from the server shell, on the deployment's database.

``rag-ingest`` ingests files as *operator* content no knowledge base owns (``writer_kind
operator``, no organization): an app-scoped knowledge base on the name reads it, nothing
else does. It goes through the product's one pipeline (``docproc_common.operator_content``):
each original is stored as an upload's is, its row accepted with its ``DocumentAccepted``,
parsed by the parser in its isolated child and embedded by the embedder, which writes the
chunks under the name's lock and retires the file's earlier ingest (matched by its absolute
path); the command waits for the rows to settle and prints the totals. So it needs a running
deployment (``docproc dev``, or the services of a distributed one). A file whose bytes,
ingestion settings and splitter version are all unchanged is skipped; one whose bytes are
unchanged is counted as re-chunked. A name reserved by a pending deletion, or whose bases
embed any other way than the operator may (``operator_content.operator_target``), is
refused before a file is read.
``rag-sync-gdrive`` is the sync service's own command (``docproc-sync rag-sync-gdrive``):
its Drive connector lists and fetches the folder, and each file is ingested the same way.
``rag-drop`` goes through the same teardown reservation as the API
(``documents.Release``), but empties a knowledge base instead of deleting it, and drops the
last table whatever it holds.
``rag-unfiled-provenance`` audits who wrote a name's unfiled content (aggregate counts,
never content) and, once the operator has confirmed it, marks the global content of
unknown origin as the operator's, so an app-scoped base adopts it.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from docproc_common import bulkload
from docproc_common.db.models import AuditLog, KnowledgeBase
from docproc_common.db.vector_tables import list_runtime_tables, validate_collection_name
from docproc_common.documents import Release, reserve_teardown
from docproc_common.errors import Conflict, InvalidInput
from docproc_common.names import is_reserved, kbs_named, lock_name
from docproc_common.operator_content import OperatorFile, OperatorIngest, Totals
from docproc_common.runtime import Runtime
from docproc_common.vectorstore import (
    DEFAULT_TEXT_SEARCH_CONFIG,
    add_keyword_index,
    lock_for_writing,
    table_exists,
)
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_cli import repository
from docproc_cli.repository import KNOWN_KINDS

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CollectionRow:
    name: str
    knowledge_bases: int
    documents: int
    has_table: bool


async def rag_collections(runtime: Runtime) -> list[CollectionRow]:
    async with runtime.sessionmaker() as session:
        tables = set(await list_runtime_tables(session))
        kb_counts = await repository.bases_by_name(session)
        doc_counts = await repository.documents_by_name(session)
    names = sorted(tables | set(kb_counts) | set(doc_counts))
    return [CollectionRow(n, kb_counts.get(n, 0), doc_counts.get(n, 0), n in tables) for n in names]


async def rag_ingest(
    runtime: Runtime, paths: list[Path], collection: str, progress: Callable[[Path, str], None]
) -> Totals:
    """Ingest local files as operator content, then wait until each is indexed or failed."""
    ingest = OperatorIngest(runtime, collection, lambda f, outcome: progress(f.path, outcome))
    await ingest.check()
    for path in paths:
        await ingest.queue(OperatorFile.local(path))
    return await ingest.settle()


def _text_search_config(kbs: list[KnowledgeBase]) -> str:
    """What a name's table reads its keyword index with: its bases' (they share one)."""
    return kbs[0].text_search_config if kbs else DEFAULT_TEXT_SEARCH_CONFIG


async def rag_bulk(runtime: Runtime, collection: str, finish: bool) -> str:
    """Put a collection in bulk mode before a large load (a reindex, a first sync), or with
    ``finish`` fold it now (``docproc_common.bulkload``; docs/decisions/0005-bulk-load.md)."""
    validate_collection_name(collection, field="collection")
    if finish:
        build = bulkload.IndexBuild.of(runtime.settings.embedder)
        return await bulkload.fold(runtime.engine, collection, build)
    async with runtime.sessionmaker() as session, session.begin():
        kbs = await kbs_named(session, collection)
        if not kbs:
            raise InvalidInput(f"No knowledge base holds '{collection}'")
        kb = kbs[0]
        entered = await bulkload.enter(
            session, collection, kb.embedding_dim, kb.text_search_config, kb.vector_type
        )
    return "entered" if entered else "already in bulk mode"


async def rag_keyword_index(
    runtime: Runtime, collections: list[str], progress: Callable[[str, str], None]
) -> int:
    """Give the runtime tables created before hybrid search their keyword column and GIN
    index (``vectorstore.add_keyword_index``); all of them when ``collections`` is empty.
    Returns how many tables changed."""
    for name in collections:
        validate_collection_name(name, field="collection")
    async with runtime.sessionmaker() as session:
        names = collections or sorted(await list_runtime_tables(session))
        configs = {n: _text_search_config(await kbs_named(session, n)) for n in names}
    changed = 0
    for name in names:
        if await add_keyword_index(runtime.engine, name, configs[name]):
            changed += 1
            progress(name, f"keyword index added ({configs[name]})")
        else:
            progress(name, "already has its keyword index (or has no table)")
    return changed


async def rag_drop(runtime: Runtime, collection: str, knowledge_base_id: uuid.UUID | None) -> str:
    """Empty the one base on the name (``--knowledge-base`` picks one of several), or remove a
    name no base holds. The base's row stays; its documents, and the unfiled ones it takes, go
    (``documents.Release``, the API's teardown). The last base's table is dropped whatever it
    holds: the operator asked, and the content a console delete would respect is the
    operator's own. A base left on the name keeps it."""
    validate_collection_name(collection)
    async with runtime.sessionmaker() as session, session.begin():
        await lock_name(session, collection)
        kbs = await kbs_named(session, collection)
        if knowledge_base_id is not None:
            kbs = [kb for kb in kbs if kb.id == knowledge_base_id]
            if not kbs:
                raise InvalidInput(f"No knowledge base {knowledge_base_id} holds '{collection}'")
        elif len(kbs) > 1:
            ids = ", ".join(str(kb.id) for kb in kbs)
            raise InvalidInput(
                f"Several knowledge bases hold '{collection}': {ids}; choose one with --knowledge-base"
            )
        if not kbs:
            return await _drop_unowned(session, collection)
        (kb,) = kbs
        release = await Release.plan(session, collection, kbs)
        dropped = not release.siblings
        await release.reserve(session, drop_table=dropped, emptied={kb.id})
        session.add(
            AuditLog(
                actor="operator",
                action="knowledge_base.emptied",
                organization_id=kb.organization_id,
                target=str(kb.id),
                details={"collection_name": collection, "documents": len(release.own)},
            )
        )
        return (
            f"emptied knowledge base {kb.id} ({len(release.docs)} documents); "
            f"table dropped: {dropped}"
        )


async def _drop_unowned(session: AsyncSession, collection: str) -> str:
    """A name no knowledge base holds (filled by rag-ingest): its rows and its table."""
    rows = await repository.remove_rows_named(session, collection)
    await reserve_teardown(session, collection, rows, drop_table=True)
    return f"removed {len(rows)} document rows; the table is dropped by the teardown service"


# -- unfiled provenance -------------------------------------------------------------------

UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Provenance:
    """Who wrote a name's unfiled content (filed under no knowledge base): counts only."""

    collection: str
    knowledge_bases: int
    app_bases: int
    has_table: bool
    #: Chunks with no base and no organization, by origin (document, operator, unknown).
    global_chunks: dict[str, int]
    #: Tracking rows with no base and no organization, by origin.
    global_rows: dict[str, int]
    #: Unfiled chunks and rows of an organization: read by their tenant, never adopted.
    org_chunks: int
    org_rows: int


def _kind(value: str | None) -> str:
    return value if value in KNOWN_KINDS else UNKNOWN


async def unfiled_provenance(runtime: Runtime, collection: str) -> Provenance:
    validate_collection_name(collection)
    async with runtime.sessionmaker() as session:
        kbs = await kbs_named(session, collection)
        global_rows: dict[str, int] = {}
        org_rows = 0
        for is_global, kind, n in await repository.unfiled_rows_by_kind(session, collection):
            if is_global:
                global_rows[_kind(kind)] = global_rows.get(_kind(kind), 0) + n
            else:
                org_rows += n
        has_table = await table_exists(session, collection)
        global_chunks: dict[str, int] = {}
        org_chunks = 0
        if has_table:
            for is_global, kind, n in await repository.unfiled_chunks_by_kind(session, collection):
                if is_global:
                    global_chunks[kind] = n
                else:
                    org_chunks += n
    return Provenance(
        collection=collection,
        knowledge_bases=len(kbs),
        app_bases=sum(kb.scope == "app" for kb in kbs),
        has_table=has_table,
        global_chunks=global_chunks,
        global_rows=global_rows,
        org_chunks=org_chunks,
        org_rows=org_rows,
    )


async def confirm_operator(runtime: Runtime, collection: str) -> tuple[int, int]:
    """Mark the global unfiled chunks and rows of unknown origin as the operator's.

    One transaction under the name's lock; content with a known document origin is
    skipped, so running it again changes nothing. Returns (chunks, rows) changed.
    """
    validate_collection_name(collection)
    async with runtime.sessionmaker() as session, session.begin():
        await lock_name(session, collection)
        if await is_reserved(session, collection):
            raise Conflict(f"The collection name '{collection}' is reserved by a pending deletion")
        chunks = 0
        if await table_exists(session, collection):
            await lock_for_writing(session, collection)  # no fold moves a row meanwhile
            chunks = await repository.confirm_operator_chunks(session, collection)
        rows = await repository.confirm_operator_rows(session, collection)
    log.info("rag-unfiled-provenance %s: %d chunks and %d rows confirmed", collection, chunks, rows)
    return chunks, rows
