"""Operator commands run from the server shell: they talk to the database directly.

``rag-ingest`` writes *operator* chunks no knowledge base owns (``writer_kind =
operator``, no organization): an app-scoped knowledge base on the name reads
them, nothing else does. It holds the name's lock until it commits, so a create
on the name waits and then asks to retry, and a delete waits for it; a name reserved by a
pending deletion is refused before a file is parsed or embedded. Ingesting a file again
replaces its earlier ingest (matched by its absolute path): a file whose bytes, ingestion
settings and splitter version are all unchanged is skipped, any other is written (re-chunked
when only the settings or the splitter changed), then the earlier row and chunks go, in the
same transaction.
Operator chunks are embedded as the name's app-scoped base embeds (keyless: the built-in
model or a deployment-wide service), else with the deployment's own built-in local model,
never with an organization's provider or vault key: that key is billed to its organization.
A name whose bases embed any other way is refused before anything is read, naming them.
``rag-sync-gdrive`` does the same for a Drive folder, read with the deployment's
``GOOGLE_DRIVE_CREDENTIALS_FILE`` (its only user: no sync source falls back to it).
``rag-drop`` goes through the same teardown as the API, but empties a knowledge base
instead of deleting it, and drops the last table whatever it holds.
``rag-unfiled-provenance`` audits who wrote a name's unfiled content (aggregate counts,
never content) and, once the operator has confirmed it, marks the global content of
unknown origin as the operator's, so an app-scoped base adopts it.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docproc_common import bulkload
from docproc_common.auth import EDIT, VIEW, Principal
from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.config import check_config
from docproc_common.connectors.errors import ConnectorError
from docproc_common.connectors.remote_names import last_component
from docproc_common.connectors.specs.gdrive import GoogleDriveConfig
from docproc_common.db.models import (
    DocumentStatus,
    KnowledgeBase,
    RagDocument,
    Scope,
    WriterKind,
)
from docproc_common.db.vector_tables import (
    list_runtime_tables,
    validate_collection_name,
    vector_table_name,
)
from docproc_common.documents import CLI_SOURCE, reserve_teardown
from docproc_common.embedding.catalog import catalog
from docproc_common.embedding.client import EmbeddingClients, EmbeddingTarget
from docproc_common.errors import Conflict, FieldError, InvalidInput
from docproc_common.formats import Capabilities, check_supported, extension_of
from docproc_common.ingestion import IngestionConfig
from docproc_common.runtime import Runtime
from docproc_common.settings import SyncSettings
from docproc_common.splitters import SPLITTER_VERSION, split_text
from docproc_common.vectorstore import (
    DEFAULT_TEXT_SEARCH_CONFIG,
    DEFAULT_VECTOR_TYPE,
    ChunkStamp,
    add_keyword_index,
    delete_documents,
    ensure_table,
    lock_for_writing,
    table_exists,
    write_chunks,
)
from docproc_parser.citations import cite_document
from docproc_parser.engine.processor import extract_text
from docproc_sync.connectors.gdrive import GoogleDriveConnector
from docproc_upload.knowledge_bases import repository
from docproc_upload.knowledge_bases.service import tear_down
from sqlalchemy import delete, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

log = logging.getLogger(__name__)
OPERATOR = Principal(user_id="operator", permissions=frozenset({VIEW, EDIT}), app_admin=True)
LOCAL_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


@dataclass(frozen=True, slots=True)
class CollectionRow:
    name: str
    knowledge_bases: int
    documents: int
    has_table: bool


async def rag_collections(runtime: Runtime) -> list[CollectionRow]:
    async with runtime.sessionmaker() as session:
        tables = set(await list_runtime_tables(session))
        kb_counts = dict(
            (
                await session.execute(
                    select(KnowledgeBase.collection_name, func.count()).group_by(
                        KnowledgeBase.collection_name
                    )
                )
            ).all()
        )
        doc_counts = dict(
            (
                await session.execute(
                    select(RagDocument.collection_name, func.count()).group_by(
                        RagDocument.collection_name
                    )
                )
            ).all()
        )
    names = sorted(tables | set(kb_counts) | set(doc_counts))
    return [CollectionRow(n, kb_counts.get(n, 0), doc_counts.get(n, 0), n in tables) for n in names]


@dataclass(frozen=True, slots=True)
class OperatorFile:
    """A file to ingest as operator content: where its bytes are, its name and its address."""

    path: Path
    name: str
    source_path: str  # an absolute path, gdrive://<id>: what a later ingest replaces by
    source: str = CLI_SOURCE

    @classmethod
    def local(cls, path: Path) -> OperatorFile:
        return cls(path, path.name, str(path.resolve()))


@dataclass(frozen=True, slots=True)
class Totals:
    """What an operator ingest did: files written (those only re-chunked among them), and
    files that failed."""

    ingested: int = 0
    rechunked: int = 0
    failed: int = 0

    def __add__(self, other: Totals) -> Totals:
        return Totals(
            self.ingested + other.ingested,
            self.rechunked + other.rechunked,
            self.failed + other.failed,
        )


async def rag_ingest(
    runtime: Runtime,
    clients: EmbeddingClients,
    paths: list[Path],
    collection: str,
    progress: Callable[[Path, str], None],
) -> Totals:
    """Ingest local files as operator chunks."""
    return await ingest_operator_files(
        runtime,
        clients,
        [OperatorFile.local(p) for p in paths],
        collection,
        lambda f, outcome: progress(f.path, outcome),
    )


async def ingest_operator_files(
    runtime: Runtime,
    clients: EmbeddingClients,
    files: list[OperatorFile],
    collection: str,
    progress: Callable[[OperatorFile, str], None],
) -> Totals:
    """Ingest files as operator chunks, each replacing its address's earlier ingest.

    A file is skipped only when an earlier ingest of it holds chunks cut from the same bytes
    with the same effective settings (the ingestion configuration and the splitter version);
    one whose bytes are the same but whose settings are not is re-chunked. The name's
    reservation is checked before each file is parsed, so a pending deletion costs no parse
    and no embedding; it is checked again under the name's lock before the write."""
    validate_collection_name(collection)
    async with runtime.sessionmaker() as session:
        kbs = await repository.kbs_named(session, collection)
        target = _operator_target(collection, kbs)
    text_search_config = _text_search_config(kbs)
    vector_type = kbs[0].vector_type if kbs else DEFAULT_VECTOR_TYPE
    config = IngestionConfig()
    settings = config.model_dump(mode="json")
    capabilities = Capabilities.declared(runtime.settings.formats)
    totals = Totals()
    for file in files:
        path = file.path
        try:
            check_supported(file.name, config.parser, capabilities)
        except InvalidInput:
            progress(file, "skipped: unsupported type")
            continue
        data = await runtime.pool.run(path.read_bytes)
        source_path, content_hash = file.source_path, hashlib.sha256(data).hexdigest()
        async with runtime.sessionmaker() as session:
            if await repository.is_reserved(session, collection):
                raise _reserved(collection)
            previous = [
                p
                for p in await _operator_rows(session, collection, source_path)
                if p.content_hash == content_hash and p.chunk_count
            ]
        if any(
            p.ingestion_config == settings and p.splitter_version == SPLITTER_VERSION
            for p in previous
        ):
            progress(file, "skipped: unchanged since it was ingested")
            continue
        try:
            doc = await runtime.pool.run(extract_text, data, file.name, config.parser)
        except InvalidInput as exc:
            progress(file, f"failed: {exc.message}")
            totals += Totals(failed=1)
            continue
        pieces = split_text(
            doc.text,
            chunk_size=config.chunk_size,
            chunk_overlap=config.chunk_overlap,
            strategy=config.chunking_strategy,
        )
        chunks = [c.text for c in pieces]
        citations = cite_document(doc, pieces, config.chunking_strategy)
        async with runtime.sessionmaker() as session:
            client = await clients.for_collection(target, session)
        embeddings = await client.embed(chunks)
        async with runtime.sessionmaker() as session, session.begin():
            await repository.lock_name(session, collection)
            if await repository.is_reserved(session, collection):
                raise _reserved(collection)
            vdid = uuid.uuid4()
            row = RagDocument(
                collection_name=collection,
                filename=file.name[:1024],
                filesize=len(data),
                filetype=extension_of(file.name),
                status=DocumentStatus.DONE,
                source=file.source,
                source_path=source_path,
                content_hash=content_hash,
                writer_kind=WriterKind.OPERATOR,
                ingestion_config=settings,
                splitter_version=SPLITTER_VERSION,
                vector_document_id=vdid,
                chunk_count=len(chunks),
                document_date=doc.document_date,
                completed_at=func.now(),
            )
            session.add(row)
            await session.flush()
            await ensure_table(
                session, collection, target.dimensions, text_search_config, vector_type
            )
            stamp = ChunkStamp(
                knowledge_base_id=None,
                organization_id=None,
                tracking_id=row.id,
                source=file.source,
                document_type=row.filetype,
                organizational_unit=None,
                document_date=doc.document_date,
                source_path=row.source_path,
                filename=row.filename,
                content_hash=row.content_hash,
                writer_kind=WriterKind.OPERATOR,
            )
            await write_chunks(session, collection, vdid, chunks, embeddings, stamp, citations)
            replaced = await _retire(session, collection, source_path, keep=row.id)
        if previous:
            totals += Totals(ingested=1, rechunked=1)
            progress(file, f"re-chunked (new settings or splitter): {len(chunks)} chunks")
        else:
            totals += Totals(ingested=1)
            progress(
                file, f"{len(chunks)} chunks" + (f", replacing {replaced}" if replaced else "")
            )
    return totals


def _reserved(collection: str) -> Conflict:
    return Conflict(f"The collection name '{collection}' is reserved by a pending deletion")


async def rag_sync_gdrive(
    runtime: Runtime,
    clients: EmbeddingClients,
    settings: SyncSettings,
    credentials: dict[str, Any],
    config: dict[str, Any],
    collection: str,
    progress: Callable[[str, str], None],
) -> Totals:
    """A Drive folder as operator content, read with the deployment's own service account.

    The one user of ``GOOGLE_DRIVE_CREDENTIALS_FILE``: an operator runs it from their own
    shell; no sync source ever falls back to that file. The listing and the downloads are
    the ``google_drive`` connector's (its refusals, its landing rule); each file is then
    ingested like ``rag-ingest`` does, addressed ``gdrive://<id>``, so a run again skips an
    unchanged file (its bytes and settings), re-chunks one whose settings changed and
    replaces a changed one. Nothing is deleted.
    """
    options = ConnectorOptions.of(settings, pool=runtime.pool)
    checked = check_config(GoogleDriveConnector.NAME, config, options, root="")
    assert isinstance(checked, GoogleDriveConfig)
    connector = GoogleDriveConnector(checked, credentials, options)
    totals = Totals()
    parser = IngestionConfig().parser
    capabilities = Capabilities.declared(runtime.settings.formats)
    try:
        listing = await connector.list_files()
        if not listing.complete:
            progress(checked.folder_id, f"listing incomplete: {listing.note}")
        with tempfile.TemporaryDirectory(prefix="docproc-gdrive-") as tmp:
            for n, remote in enumerate(sorted(listing.files, key=lambda f: f.address)):
                try:
                    name = last_component(remote.name)
                    check_supported(name, parser, capabilities)
                except (ConnectorError, InvalidInput) as exc:
                    reason = exc.message if isinstance(exc, ConnectorError) else "unsupported type"
                    progress(remote.address, f"skipped: {reason}")
                    continue
                landing = Path(tmp) / f"f{n}"
                landing.mkdir()
                try:
                    path = await connector.fetch(remote, landing)
                except ConnectorError as exc:
                    progress(remote.address, f"failed: {exc.message}")
                    totals += Totals(failed=1)
                    continue
                file = OperatorFile(path, name, remote.address, GoogleDriveConnector.NAME)
                totals += await ingest_operator_files(
                    runtime,
                    clients,
                    [file],
                    collection,
                    lambda f, outcome: progress(f"{f.source_path} ({f.name})", outcome),
                )
                await runtime.pool.run(shutil.rmtree, landing, True)
    finally:
        await connector.aclose()
    return totals


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
        kbs = await repository.kbs_named(session, collection)
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
        configs = {n: _text_search_config(await repository.kbs_named(session, n)) for n in names}
    changed = 0
    for name in names:
        if await add_keyword_index(runtime.engine, name, configs[name]):
            changed += 1
            progress(name, f"keyword index added ({configs[name]})")
        else:
            progress(name, "already has its keyword index (or has no table)")
    return changed


def _operator_target(collection: str, kbs: list[KnowledgeBase]) -> EmbeddingTarget:
    """What operator ingestion embeds with, as the seed resolves a name for a writer of no
    organization: the name's app-scoped base (keyless, on the built-in model or a
    deployment-wide service), else the deployment's keyless built-in model.

    Without an app-scoped base, the bases on the name must embed with that built-in model,
    so the table stays one space; a base on any other provider is refused, since
    embedding with it would spend its organization's key."""
    app = next((kb for kb in kbs if kb.scope == Scope.APP), None)
    if app is not None:
        return EmbeddingTarget.of(app)
    others = [
        kb for kb in kbs if (kb.embedding_provider, kb.embedding_model) != ("local", LOCAL_MODEL)
    ]
    if others:
        named = ", ".join(
            f"{kb.id} ({kb.embedding_provider}/{kb.embedding_model})" for kb in others
        )
        raise InvalidInput(
            f"Operator ingestion embeds as an app-scoped base on the name does, else with "
            f"the deployment's built-in model ({LOCAL_MODEL}); '{collection}' has no "
            f"app-scoped base and is held by knowledge bases that embed otherwise: {named}. "
            "Upload through those knowledge bases instead",
            fields=[FieldError("collection", "held by knowledge bases on another provider")],
        )
    return EmbeddingTarget(
        collection_name=collection,
        organization_id=None,
        provider="local",
        model=LOCAL_MODEL,
        dimensions=catalog()["local"].models[LOCAL_MODEL].dimensions,
    )


async def _operator_rows(
    session: AsyncSession, collection: str, source_path: str
) -> list[RagDocument]:
    """The operator's earlier ingests of this file (by its address) into this name."""
    return list(
        (
            await session.execute(
                select(RagDocument).where(
                    RagDocument.collection_name == collection,
                    RagDocument.source_path == source_path,
                    RagDocument.knowledge_base_id.is_(None),
                    RagDocument.organization_id.is_(None),
                    RagDocument.writer_kind == WriterKind.OPERATOR,
                )
            )
        ).scalars()
    )


async def _retire(session: AsyncSession, collection: str, source_path: str, keep: uuid.UUID) -> int:
    """After the new chunk set is written (same transaction): the earlier ingests of the file
    and their chunks go. A failed delete of the old chunks is logged, not a failed ingest:
    the new document is in, and a duplicate someone can see and delete is no failure."""
    old = [r for r in await _operator_rows(session, collection, source_path) if r.id != keep]
    if not old:
        return 0
    try:
        async with session.begin_nested():
            await delete_documents(
                session, collection, [r.vector_document_id for r in old if r.vector_document_id]
            )
            await session.execute(
                delete(RagDocument).where(RagDocument.id.in_([r.id for r in old]))
            )
    except Exception:  # noqa: BLE001 - see the docstring
        log.exception("the earlier ingest of %s in %s was not removed", source_path, collection)
        return 0
    return len(old)


async def rag_drop(runtime: Runtime, collection: str, knowledge_base_id: uuid.UUID | None) -> str:
    """Empty the one base on the name (``--knowledge-base`` picks one of several), or remove a
    name no base holds. The base's row stays; its documents, and the unfiled ones it takes, go.
    The last base's table is dropped whatever it holds: the operator asked, and the content a
    console delete would respect is the operator's own. A base left on the name keeps it."""
    validate_collection_name(collection)
    async with runtime.sessionmaker() as session, session.begin():
        await repository.lock_name(session, collection)
        kbs = await repository.kbs_named(session, collection)
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
        out = await tear_down(session, OPERATOR, collection, kbs, by_operator=True)
        return (
            f"emptied knowledge base {kbs[0].id} ({out.documents_deleted} documents); "
            f"table dropped: {out.table_dropped}"
        )


async def _drop_unowned(session: AsyncSession, collection: str) -> str:
    """A name no knowledge base holds (filled by rag-ingest): its rows and its table."""
    rows = list(
        (
            await session.execute(
                select(RagDocument).where(RagDocument.collection_name == collection)
            )
        ).scalars()
    )
    await session.execute(delete(RagDocument).where(RagDocument.collection_name == collection))
    await reserve_teardown(session, collection, rows, drop_table=True)
    return f"removed {len(rows)} document rows; the table is dropped by the teardown service"


# -- unfiled provenance -------------------------------------------------------------------

UNKNOWN = "unknown"
KNOWN_KINDS = (WriterKind.DOCUMENT.value, WriterKind.OPERATOR.value)
# A chunk's origin: its own writer_kind when known, else its tracking row's when that is a
# document (a known document origin is never re-labelled), else unknown.
_CHUNK_KIND = (
    "CASE WHEN c.writer_kind IN ('document', 'operator') THEN c.writer_kind "
    "WHEN d.writer_kind = 'document' THEN 'document' ELSE 'unknown' END"
)


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
        kbs = await repository.kbs_named(session, collection)
        global_rows: dict[str, int] = {}
        org_rows = 0
        rows = await session.execute(
            select(RagDocument.organization_id.is_(None), RagDocument.writer_kind, func.count())
            .where(
                RagDocument.collection_name == collection,
                RagDocument.knowledge_base_id.is_(None),
            )
            .group_by(RagDocument.organization_id.is_(None), RagDocument.writer_kind)
        )
        for is_global, kind, n in rows.all():
            if is_global:
                global_rows[_kind(kind)] = global_rows.get(_kind(kind), 0) + n
            else:
                org_rows += n
        has_table = await table_exists(session, collection)
        global_chunks: dict[str, int] = {}
        org_chunks = 0
        if has_table:
            chunks = await session.execute(
                text(
                    f"SELECT c.organization_id IS NULL, {_CHUNK_KIND}, count(*) "
                    f"FROM {vector_table_name(collection)} c "
                    "LEFT JOIN rag_documents d ON d.id = c.tracking_id "
                    "WHERE c.knowledge_base_id IS NULL GROUP BY 1, 2"
                )
            )
            for is_global, kind, n in chunks.all():
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
        await repository.lock_name(session, collection)
        if await repository.is_reserved(session, collection):
            raise Conflict(f"The collection name '{collection}' is reserved by a pending deletion")
        chunks = 0
        if await table_exists(session, collection):
            table = vector_table_name(collection)
            await lock_for_writing(session, collection)  # no fold moves a row meanwhile
            result = await session.execute(
                text(
                    f"UPDATE {table} SET writer_kind = 'operator' WHERE id IN ("
                    f"SELECT c.id FROM {table} c LEFT JOIN rag_documents d ON d.id = c.tracking_id "
                    "WHERE c.knowledge_base_id IS NULL AND c.organization_id IS NULL "
                    f"AND {_CHUNK_KIND} = 'unknown')"
                )
            )
            chunks = int(getattr(result, "rowcount", 0) or 0)
        result = await session.execute(
            update(RagDocument)
            .where(
                RagDocument.collection_name == collection,
                RagDocument.knowledge_base_id.is_(None),
                RagDocument.organization_id.is_(None),
                RagDocument.writer_kind.not_in(KNOWN_KINDS),
            )
            .values(writer_kind=WriterKind.OPERATOR)
        )
        rows = int(getattr(result, "rowcount", 0) or 0)
    log.info("rag-unfiled-provenance %s: %d chunks and %d rows confirmed", collection, chunks, rows)
    return chunks, rows
