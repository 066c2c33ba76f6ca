"""``rag-sync-gdrive``: a Drive folder as operator content, read with the deployment's key file
(the one user of GOOGLE_DRIVE_CREDENTIALS_FILE), against the Drive stand-in over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from docproc_cli import operator
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.errors import InvalidInput
from docproc_common.runtime import Runtime
from docproc_common.settings import SyncSettings
from docproc_testing.drive_standin import DOC, DriveStandIn
from sqlalchemy import text

from .test_tenancy import uniq

pytestmark = pytest.mark.integration

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


@pytest.fixture
def drive() -> Iterator[DriveStandIn]:
    with DriveStandIn() as standin:
        yield standin


def settings(drive: DriveStandIn, tmp_path: Path) -> SyncSettings:
    return SyncSettings(
        allow_private_networks=True,
        allow_plain_http=True,
        api_endpoints={"google_drive": drive.url},
        state_dir=tmp_path,
    )


async def test_a_folder_becomes_operator_content_addressed_by_drive_id(
    runtime: Runtime, drive: DriveStandIn, tmp_path: Path
) -> None:
    root = drive.folder("Operations")
    runbook = drive.put("runbook.md", root, b"# Runbook\n\nRestart the relay first.")
    drive.put("Onboarding", root, mime=DOC, exports={DOCX: b"not a docx"})
    drive.put("tool.exe", root, b"MZ")
    account = drive.service_account()
    name = uniq("gdrive")
    seen: list[str] = []

    async def sync() -> operator.Totals:
        return await operator.rag_sync_gdrive(
            runtime,
            EmbeddingClients(runtime.settings),
            settings(drive, tmp_path),
            account,
            {"folder_id": root},
            name,
            lambda address, outcome: seen.append(f"{address}: {outcome}"),
        )

    # the export is no readable docx: a failure, named
    assert await sync() == operator.Totals(ingested=1, failed=1)
    assert any(s.endswith("skipped: unsupported type") for s in seen)  # tool.exe, never fetched
    async with runtime.sessionmaker() as s:
        rows = (
            await s.execute(
                text(
                    "SELECT source, source_path, writer_kind, knowledge_base_id FROM rag_documents"
                    " WHERE collection_name = :n"
                ),
                {"n": name},
            )
        ).all()
    assert [tuple(r) for r in rows] == [("google_drive", f"gdrive://{runbook}", "operator", None)]
    assert (drive.calls["token"], drive.calls["media"]) == (1, 1)

    assert await sync() == operator.Totals(failed=1)
    assert any(s.endswith("skipped: unchanged since it was ingested") for s in seen)
    drive.update(runbook, b"# Runbook\n\nRestart the relay twice.")
    assert await sync() == operator.Totals(ingested=1, failed=1)
    assert any(s.endswith(", replacing 1") for s in seen)


async def test_a_hostile_folder_id_is_refused_before_any_call(
    runtime: Runtime, drive: DriveStandIn, tmp_path: Path
) -> None:
    with pytest.raises(InvalidInput) as info:
        await operator.rag_sync_gdrive(
            runtime,
            EmbeddingClients(runtime.settings),
            settings(drive, tmp_path),
            drive.service_account(),
            {"folder_id": "x' in parents or name contains 'salary"},
            uniq("gdrive"),
            print,
        )
    assert [f.field for f in info.value.fields] == ["folder_id"]
    assert drive.calls.total() == 0
