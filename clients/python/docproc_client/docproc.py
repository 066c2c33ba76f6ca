"""``Docproc``: the generated client (``docproc_client.generated``) with the bearer token
set once, answers unwrapped (a refusal raises ``DocprocError``), the document listing
followed page by page, and uploads that wait out a busy intake."""

from __future__ import annotations

import json
import mimetypes
import os
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar

import httpx

from docproc_client.errors import DocprocError
from docproc_client.generated import AuthenticatedClient
from docproc_client.generated.api.documents import (
    download_document,
    get_chunk_context,
    get_document,
    get_parsed,
    list_documents,
)
from docproc_client.generated.api.kb import create_kb, get_kb, kb_ingestion, list_kbs
from docproc_client.generated.api.search import search
from docproc_client.generated.models import (
    ChunkContext,
    DocumentOut,
    DocumentPage,
    ErrorEnvelope,
    IngestionStatus,
    KnowledgeBaseCreate,
    KnowledgeBaseOut,
    ParsedDocument,
    ParsedPages,
    RAGIngestResponse,
    SearchFiltersIn,
    SearchHit,
    SearchRequest,
    SearchRequestMode,
    SearchResponse,
)
from docproc_client.generated.types import Response

T = TypeVar("T")
#: A file to upload: a path, its bytes, or an open binary file.
Upload = str | os.PathLike[str] | bytes | IO[bytes]
#: A knowledge base named by its id (a UUID) or by its name or collection name.
BaseRef = str | uuid.UUID

DEFAULT_URL = "http://127.0.0.1:8000"


class Docproc:
    """docproc's API at ``base_url`` (the deployment's root, behind its gateway), every
    request with ``Authorization: Bearer <token>``.

    ``api`` is the generated ``AuthenticatedClient``: every operation of the OpenAPI is a
    module of ``docproc_client.generated.api`` called with ``client=docproc.api``; the
    methods here are the ones an application or an agent uses most.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        token: str | None = None,
        *,
        timeout: float = 60.0,
        httpx_args: Mapping[str, Any] | None = None,
    ) -> None:
        token = token if token is not None else os.environ.get("DOCPROC_TOKEN")
        if not token:
            raise ValueError("a bearer token is required (token= or DOCPROC_TOKEN)")
        self.base_url = base_url.rstrip("/")
        self.api = AuthenticatedClient(
            base_url=self.base_url,
            token=token,
            timeout=httpx.Timeout(timeout),
            httpx_args=dict(httpx_args or {}),
        )

    @classmethod
    def from_env(cls, **kwargs: Any) -> Docproc:
        """``DOCPROC_URL`` (default ``http://127.0.0.1:8000``) and ``DOCPROC_TOKEN``, the
        variables ``docproc mcp`` reads."""
        return cls(
            os.environ.get("DOCPROC_URL", DEFAULT_URL), os.environ.get("DOCPROC_TOKEN"), **kwargs
        )

    def close(self) -> None:
        self.api.get_httpx_client().close()

    def __enter__(self) -> Docproc:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- knowledge bases ---------------------------------------------------------------

    def knowledge_bases(self) -> list[KnowledgeBaseOut]:
        """Every knowledge base the caller can read."""
        answer = list_kbs.sync_detailed(client=self.api)
        if isinstance(answer.parsed, list) and answer.status_code == 200:
            return answer.parsed
        raise _refusal(answer)

    def knowledge_base(self, ref: BaseRef) -> KnowledgeBaseOut:
        """A knowledge base by its id, or by its name or collection name among those the
        caller reads (``Collection not found`` otherwise, as the API says it)."""
        as_id = _as_uuid(ref)
        if as_id is not None:
            return _ok(get_kb.sync_detailed(as_id, client=self.api), KnowledgeBaseOut)
        found = [kb for kb in self.knowledge_bases() if ref in (kb.name, kb.collection_name)]
        if not found:
            raise DocprocError(404, "NOT_FOUND", "Collection not found")
        return found[0]

    def create_knowledge_base(self, name: str, **fields: Any) -> KnowledgeBaseOut:
        """``POST /kb``: ``fields`` are the body's other fields (``collection_name``,
        ``scope``, ``embedding_provider``, ``embedding_model``, ``ingestion_config``, ...)
        as JSON values."""
        body = KnowledgeBaseCreate.from_dict({"name": name, **fields})
        return _ok(create_kb.sync_detailed(client=self.api, body=body), KnowledgeBaseOut)

    def ingestion(self, kb: BaseRef) -> IngestionStatus:
        """The base's ingestion status: documents processing, indexed, failed."""
        return _ok(kb_ingestion.sync_detailed(self._kb_id(kb), client=self.api), IngestionStatus)

    def wait_indexed(
        self, kb: BaseRef, *, timeout: float = 300.0, interval: float = 0.5
    ) -> IngestionStatus:
        """Poll the base's ingestion until nothing is processing; its status then (see
        ``failed_count``). ``TimeoutError`` after ``timeout`` seconds."""
        kb_id = self._kb_id(kb)
        deadline = time.monotonic() + timeout
        while True:
            status = self.ingestion(kb_id)
            if status.processing_count == 0 and status.indexing_status.value == "complete":
                return status
            if time.monotonic() > deadline:
                raise TimeoutError(f"knowledge base {kb_id} still indexing after {timeout} s")
            time.sleep(interval)

    # -- documents ---------------------------------------------------------------------

    def documents(self, kb: BaseRef, *, page_size: int = 50) -> Iterator[DocumentOut]:
        """Every document of the base, newest first, fetched ``page_size`` at a time
        (the listing's ``next_cursor``)."""
        kb_id = self._kb_id(kb)

        def page(cursor: str | None) -> DocumentPage:
            answer = list_documents.sync_detailed(
                kb_id, client=self.api, limit=page_size, cursor=cursor
            )
            return _ok(answer, DocumentPage)

        return paginate(page, lambda p: (p.items, p.next_cursor))

    def upload(
        self,
        kb: BaseRef,
        file: Upload,
        *,
        filename: str | None = None,
        ingestion: Mapping[str, Any] | None = None,
        organizational_unit: str | None = None,
        document_date: str | None = None,
        replace: bool = False,
        busy_timeout: float = 120.0,
    ) -> RAGIngestResponse:
        """``POST /kb/{id}/documents``: the 202 answer (``tracking_id`` is the document's id;
        ``wait_indexed`` or ``document`` follow it). ``ingestion`` holds only the settings
        that change for this file (``{"chunk_size": 500}``). A busy intake's 503 is waited
        out (its ``Retry-After``) for up to ``busy_timeout`` seconds."""
        kb_id = self._kb_id(kb)
        if filename is None:
            named = file if isinstance(file, str | os.PathLike) else getattr(file, "name", None)
            if not isinstance(named, str | os.PathLike):
                raise ValueError("filename= is required to upload bytes or an unnamed file")
            filename = Path(named).name
        form: dict[str, str] = {}
        if ingestion:
            form["ingestion"] = json.dumps(dict(ingestion))
        if organizational_unit is not None:
            form["organizational_unit"] = organizational_unit
        if document_date is not None:
            form["document_date"] = document_date
        content_type = mimetypes.guess_type(filename)[0] or "application/octet-stream"
        deadline = time.monotonic() + busy_timeout
        http = self.api.get_httpx_client()
        while True:
            with _opened(file) as payload:
                # httpx picks a random multipart boundary here; the generated
                # upload_document sends a fixed one ("+++"), which a file's bytes may hold
                answer = http.post(
                    f"/api/v1/kb/{kb_id}/documents",
                    params={"replace": "true" if replace else "false"},
                    data=form,
                    files={"file": (filename, payload, content_type)},
                )
            if answer.status_code == 202:
                return RAGIngestResponse.from_dict(answer.json())
            error = DocprocError.from_response(answer.status_code, answer.content, answer.headers)
            wait = error.retry_after
            if error.status_code != 503 or wait is None or time.monotonic() + wait > deadline:
                raise error
            time.sleep(wait)

    def upload_text(
        self, kb: BaseRef, text: str, filename: str = "note.md", **kwargs: Any
    ) -> RAGIngestResponse:
        """A text (a note, an answer) as a ``.md`` or ``.txt`` document of the base."""
        return self.upload(kb, text.encode(), filename=filename, **kwargs)

    def document(
        self, document_id: str | uuid.UUID, *, offset: int = 0, limit: int = 100_000
    ) -> ParsedDocument:
        """A document's row (``status``: processing, done, error) and a window of its
        parsed text (``content``, from ``offset``, at most ``limit`` characters)."""
        answer = get_document.sync_detailed(
            uuid.UUID(str(document_id)), client=self.api, offset=offset, limit=limit
        )
        return _ok(answer, ParsedDocument)

    def parsed(self, kb: BaseRef, document_id: str | uuid.UUID) -> ParsedPages:
        """The document's chunks page by page (the parsed view a hit's ``parsed`` link
        names)."""
        answer = get_parsed.sync_detailed(
            self._kb_id(kb), uuid.UUID(str(document_id)), client=self.api
        )
        return _ok(answer, ParsedPages)

    def download(self, kb: BaseRef, document_id: str | uuid.UUID) -> bytes:
        """The original file of an uploaded document."""
        answer = download_document.sync_detailed(
            self._kb_id(kb), uuid.UUID(str(document_id)), client=self.api
        )
        if answer.status_code == 200:
            return answer.content
        raise _refusal(answer)

    def chunk_context(
        self, document_id: str | uuid.UUID, chunk_no: int, *, before: int = 2, after: int = 2
    ) -> ChunkContext:
        """A hit's chunk and up to ``before``/``after`` chunks around it, in order."""
        answer = get_chunk_context.sync_detailed(
            uuid.UUID(str(document_id)),
            client=self.api,
            chunk_no=chunk_no,
            before=before,
            after=after,
        )
        return _ok(answer, ChunkContext)

    # -- search ------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        knowledge_bases: Sequence[BaseRef] | None = None,
        collections: Sequence[str] | None = None,
        top_k: int = 5,
        mode: str | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> list[SearchHit]:
        """``POST /rag/search``: the best ``top_k`` chunks of the bases named (by id, name
        or collection name), or of every base on the ``collections`` named; each hit
        with its citation (``docproc_client.cite``). ``mode``: ``hybrid``, ``vector`` or
        ``keyword``; none, the server's default (hybrid)."""
        body = SearchRequest(query=query, top_k=top_k)
        if mode is not None:
            body.mode = SearchRequestMode(mode)
        if knowledge_bases is not None:
            body.knowledge_base_ids = [self._kb_id(kb) for kb in knowledge_bases]
        if collections is not None:
            body.collections = list(collections)
        if filters is not None:
            body.filters = SearchFiltersIn.from_dict(dict(filters))
        return _ok(search.sync_detailed(client=self.api, body=body), SearchResponse).results

    def _kb_id(self, ref: BaseRef) -> uuid.UUID:
        as_id = _as_uuid(ref)
        return as_id if as_id is not None else self.knowledge_base(ref).id


def paginate(
    fetch: Callable[[str | None], T], split: Callable[[T], tuple[Sequence[Any], str | None]]
) -> Iterator[Any]:
    """The items of every page: ``fetch(cursor)`` a page (``None`` the first), ``split(page)``
    its items and the next cursor (``None`` after the last)."""
    cursor: str | None = None
    while True:
        items, cursor = split(fetch(cursor))
        yield from items
        if cursor is None:
            return


def _as_uuid(ref: BaseRef) -> uuid.UUID | None:
    if isinstance(ref, uuid.UUID):
        return ref
    try:
        return uuid.UUID(ref)
    except ValueError:
        return None


def _refusal(answer: Response[Any]) -> DocprocError:
    return DocprocError.from_response(int(answer.status_code), answer.content, answer.headers)


def _ok(answer: Response[T | ErrorEnvelope], expected: type[T]) -> T:
    if 200 <= answer.status_code < 300 and isinstance(answer.parsed, expected):
        return answer.parsed
    raise _refusal(answer)


class _opened:
    """The upload's bytes for one attempt: a path opened (and closed after), bytes as
    they are, an open file rewound to where it was."""

    def __init__(self, file: Upload) -> None:
        self.file = file
        self.handle: IO[bytes] | None = None
        self.start = 0

    def __enter__(self) -> bytes | IO[bytes]:
        if isinstance(self.file, bytes):
            return self.file
        if isinstance(self.file, str | os.PathLike):
            self.handle = open(self.file, "rb")  # closed in __exit__
            return self.handle
        self.start = self.file.tell()
        return self.file

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            self.handle.close()
        elif not isinstance(self.file, bytes | str | os.PathLike):
            self.file.seek(self.start)
