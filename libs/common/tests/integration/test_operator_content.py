"""Operator ingest's queue and wait with no deployment running: what it stores, queues, skips
and refuses, and that it says so when nothing takes its files. The pipeline's side (parse,
embed, replace, totals) is tests/tenancy/test_operator.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from docproc_common.db.models import CollectionTeardown, DocumentStatus, RagDocument, WriterKind
from docproc_common.errors import Conflict, Unavailable
from docproc_common.operator_content import OperatorFile, OperatorIngest
from docproc_common.splitters import SPLITTER_VERSION
from docproc_testing.runtime import fresh_runtime
from sqlalchemy import select

pytestmark = pytest.mark.integration


async def test_a_queued_file_is_queued_once_and_an_ingest_nothing_takes_says_so(
    tmp_path: Path,
) -> None:
    page, tool = tmp_path / "a.md", tmp_path / "tool.exe"
    page.write_text("# A\n\nOperator content.")
    tool.write_bytes(b"MZ")
    seen: list[str] = []
    async with fresh_runtime(tmp_path / "media") as runtime:
        ingest = OperatorIngest(runtime, "opq", lambda f, o: seen.append(f"{f.name}: {o}"))
        await ingest.check()
        for path in (page, tool, page):  # a.md again while its first queue waits
            await ingest.queue(OperatorFile.local(path))
        assert seen == [
            "a.md: queued",
            "tool.exe: skipped: unsupported type",
            "a.md: already queued: waiting for it",
        ]
        async with runtime.sessionmaker() as s:
            (row,) = (await s.execute(select(RagDocument))).scalars()
        assert (row.status, row.writer_kind, row.organization_id, row.knowledge_base_id) == (
            DocumentStatus.PROCESSING,
            WriterKind.OPERATOR,
            None,
            None,
        )
        assert (row.source, row.source_path, row.splitter_version) == (
            "cli",
            str(page.resolve()),
            SPLITTER_VERSION,
        )
        assert row.storage_path is not None
        assert await runtime.storage.get(row.storage_path) == page.read_bytes()

        with pytest.raises(Unavailable) as info:  # no relay: its event stays in the outbox
            await ingest.settle(poll_s=0.05, stall_s=0.3)
        assert "no running deployment has taken them" in info.value.message


async def test_a_reserved_name_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    async with fresh_runtime(tmp_path / "media") as runtime:
        async with runtime.sessionmaker() as s, s.begin():
            s.add(
                CollectionTeardown(collection_name="opr", storage_paths=[], vector_document_ids=[])
            )
        ingest = OperatorIngest(runtime, "opr", lambda f, o: None)
        with pytest.raises(Conflict, match="reserved by a pending deletion"):
            await ingest.check()
