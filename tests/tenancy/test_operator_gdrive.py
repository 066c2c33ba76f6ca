"""``rag-sync-gdrive`` (the sync service's operator command, ``docproc_sync.operator_import``):
a Drive folder as operator content, read with the deployment's key file (the one user of
GOOGLE_DRIVE_CREDENTIALS_FILE), against the Drive stand-in over HTTP, indexed by the
in-process pipeline."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from docproc_cli import main
from docproc_common.errors import InvalidInput
from docproc_common.operator_content import Totals
from docproc_common.runtime import Runtime
from docproc_common.settings import SyncSettings
from docproc_sync.operator_import import import_drive_folder
from docproc_testing.drive_standin import DOC, DriveStandIn
from sqlalchemy import text
from typer.testing import CliRunner

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
    runtime: Runtime, pipeline: list[object], drive: DriveStandIn, tmp_path: Path
) -> None:
    root = drive.folder("Operations")
    runbook = drive.put("runbook.md", root, b"# Runbook\n\nRestart the relay first.")
    onboarding = drive.put("Onboarding", root, mime=DOC, exports={DOCX: b"not a docx"})
    drive.put("tool.exe", root, b"MZ")
    account = drive.service_account()
    name = uniq("gdrive")
    seen: list[str] = []

    async def sync() -> Totals:
        return await import_drive_folder(
            runtime,
            settings(drive, tmp_path),
            account,
            {"folder_id": root},
            name,
            lambda address, outcome: seen.append(f"{address}: {outcome}"),
        )

    # the export is no readable docx: the parser fails it, named
    assert await sync() == Totals(ingested=1, failed=1)
    assert any(s.endswith("skipped: unsupported type") for s in seen)  # tool.exe, never fetched
    async with runtime.sessionmaker() as s:
        rows = (
            await s.execute(
                text(
                    "SELECT source, source_path, writer_kind, knowledge_base_id, status"
                    " FROM rag_documents WHERE collection_name = :n"
                ),
                {"n": name},
            )
        ).all()
    # the failed file's row says error (with the parser's reason), as any document's does
    assert {tuple(r) for r in rows} == {
        ("google_drive", f"gdrive://{runbook}", "operator", None, "done"),
        ("google_drive", f"gdrive://{onboarding}", "operator", None, "error"),
    }
    assert (drive.calls["token"], drive.calls["media"]) == (1, 1)

    assert await sync() == Totals(failed=1)
    assert any(s.endswith("skipped: unchanged since it was ingested") for s in seen)
    drive.update(runbook, b"# Runbook\n\nRestart the relay twice.")
    assert await sync() == Totals(ingested=1, failed=1)
    assert any(s.endswith(", replacing 1") for s in seen)


async def test_a_hostile_folder_id_is_refused_before_any_call(
    runtime: Runtime, drive: DriveStandIn, tmp_path: Path
) -> None:
    with pytest.raises(InvalidInput) as info:
        await import_drive_folder(
            runtime,
            settings(drive, tmp_path),
            drive.service_account(),
            {"folder_id": "x' in parents or name contains 'salary"},
            uniq("gdrive"),
            print,
        )
    assert [f.field for f in info.value.fields] == ["folder_id"]
    assert drive.calls.total() == 0


async def test_docproc_rag_sync_gdrive_runs_the_sync_services_command(
    runtime: Runtime,
    pipeline: list[object],
    drive: DriveStandIn,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The CLI's command runs ``docproc-sync rag-sync-gdrive`` as a process on its database and
    relays its output and exit status; this module's pipeline indexes what it queues."""
    root = drive.folder("Ops")
    drive.put("rota.md", root, b"# Rota\n\nRotate the relay keys on Mondays.")
    key = tmp_path / "key.json"
    key.write_text(json.dumps(drive.service_account()))
    name = uniq("gdcli")
    for var, value in {
        "DATABASE__URL": str(runtime.settings.database.url),
        "STORAGE__MEDIA_DIR": str(runtime.settings.storage.media_dir),
        "SYNC__API_ENDPOINTS": json.dumps({"google_drive": drive.url}),
        "SYNC__ALLOW_PRIVATE_NETWORKS": "true",
        "SYNC__ALLOW_PLAIN_HTTP": "true",
        "SYNC__STATE_DIR": str(tmp_path / "state"),
    }.items():
        monkeypatch.setenv(var, value)
    main.get_settings.cache_clear()
    try:
        command = ["rag-sync-gdrive", root, "-c", name, "--credentials-file", str(key)]
        result = await asyncio.to_thread(CliRunner().invoke, main.app, command)
    finally:
        main.get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    assert f"{name}: 1 ingested (0 re-chunked), 0 failed" in result.output
